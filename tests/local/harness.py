"""Running Slurm commands of this checkout against a private local backend.

Every test gets its own state directory (job database, job directories) and working
directory; commands run as real processes (``python bin/<command>``). At teardown any process
still holding the state directory in its environment is killed, so a failing test never
leaves jobs behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin"


class LocalSlurm:
    """A private local cluster: its environment, working directory and commands."""

    def __init__(self, root: Path, config: Optional[str] = None,
                 commands: Optional[Callable[[str], List[str]]] = None) -> None:
        """``commands``: how a command is run (default: this checkout's ``bin/`` shim under
        this interpreter); the benchmarks run the installed console scripts, which only a
        command server started by the same package serves."""
        self.root = root
        self.commands = commands or (lambda command: [sys.executable, str(BIN / command)])
        self.state = root / "state"
        self.work = root / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SBATCH", "SLURM"))}
        env.update({
            "SBATCHK8S_STATE_DIR": str(self.state),
            "SBATCHK8S_BACKEND": "local",
            "SBATCHK8S_KILL_WAIT": "1",
            "SBATCHK8S_NODE_WAIT": "20",
            "HOME": str(root),
            # The commands of this checkout come first (a job calling sacct or sbatch gets
            # ours, never a system Slurm's), then this interpreter.
            "PATH": os.pathsep.join([str(BIN), str(Path(sys.executable).parent),
                                     env.get("PATH", os.defpath)]),
        })
        if config is not None:
            path = root / "config.toml"
            path.write_text(config)
            env["SBATCHK8S_CONFIG"] = str(path)
        self.env: Dict[str, str] = env

    def run(self, command: str, *args: str, stdin: Optional[str] = None,
            timeout: float = 90, env: Optional[Dict[str, str]] = None
            ) -> "subprocess.CompletedProcess[str]":
        """Run ``command`` (sbatch, srun, squeue, …) to completion."""
        return subprocess.run([*self.commands(command), *args], cwd=self.work,
                              env=dict(self.env, **(env or {})), input=stdin, text=True,
                              capture_output=True, timeout=timeout)

    def start(self, command: str, *args: str) -> "subprocess.Popen[str]":
        """Start ``command`` without waiting for it."""
        return subprocess.Popen([*self.commands(command), *args], cwd=self.work,
                                env=self.env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    def script(self, name: str, text: str) -> str:
        """Write a batch script into the working directory; its name."""
        (self.work / name).write_text(text)
        return name

    def read(self, name: str) -> str:
        """A file of the working directory."""
        return (self.work / name).read_text()

    def wait_for(self, predicate, timeout: float = 120.0, interval: float = 0.05) -> None:
        """Poll ``predicate`` until true; AssertionError on timeout."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(interval)
        raise AssertionError(f"condition not met within {timeout} s")

    def processes(self, with_server: bool = True) -> List[int]:
        """Live processes working for this cluster's state directory (the command server
        too unless ``with_server`` is false; zombies never)."""
        marker = str(self.state).encode()
        found = []
        for pid in _pids():
            proc = Path(f"/proc/{pid}")
            try:
                if marker not in (proc / "environ").read_bytes():
                    continue
                state = (proc / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                command = (proc / "cmdline").read_bytes()
            except (OSError, IndexError):
                continue
            if state != b"Z" and (with_server or b"sbatch_k8s.server" not in command):
                found.append(pid)
        return found

    def cleanup(self) -> None:
        """Kill every process started for this cluster that is still alive."""
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue


def _pids() -> List[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def find_python(version: str) -> Optional[str]:
    """A working ``python<version>`` (PATH first, then pyenv's versions), or None."""
    import glob
    import shutil

    candidates = [shutil.which(f"python{version}")]
    for root in (os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv")):
        if root:
            candidates += sorted(glob.glob(f"{root}/versions/{version}*/bin/python{version}"))
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", "pass"],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


def shell_wait(condition: str, seconds: int = 120) -> str:
    """Shell (one line, POSIX sh, no single quote) that polls ``condition``, a shell command,
    every 0.1 s until it holds, for at most about ``seconds``: what a job's script or task
    waits for (a test's go file, another step's line) instead of sleeping a fixed time a
    loaded machine may overrun."""
    return (f"i=0; until {condition} || [ $i -ge {seconds * 10} ]; do sleep 0.1; "
            f"i=$((i + 1)); done")


def until_exists(path: Path, seconds: int = 120) -> str:
    """:func:`shell_wait` for the file ``path`` (a test's go or stop file)."""
    return shell_wait(f"[ -e {path} ]", seconds)


def job_id_of(submitted: str) -> int:
    """The id in ``Submitted batch job N``."""
    return int(submitted.strip().split()[-1])


def run_tool(cluster: LocalSlurm, *args: str, timeout: float = 90
             ) -> "subprocess.CompletedProcess[bytes]":
    """``sbatch-k8s ARGS`` of this checkout for ``cluster``, to completion (output as bytes:
    logs are compared byte for byte)."""
    return subprocess.run(tool_argv(*args), cwd=cluster.work, env=tool_env(cluster),
                          capture_output=True, timeout=timeout)


def tool_argv(*args: str) -> List[str]:
    """The command line of ``sbatch-k8s ARGS`` of this checkout."""
    return [sys.executable, "-m", "sbatch_k8s.tool", *args]


def tool_env(cluster: LocalSlurm) -> Dict[str, str]:
    """``cluster``'s environment, importing this checkout."""
    return dict(cluster.env, PYTHONPATH=str(REPO))
