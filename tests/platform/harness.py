"""N platform containers on this machine: what a platform starts, simulated.

Each container is a process in its own mount and UTS namespace (the test kubelet's
``podinit``, reused through :class:`tests.kubelet.runner.ContainerProcess`): its own hostname,
its own ``/tmp``, an ``/etc/hosts`` mapping every container's names to its own loopback address
(``127.10.x.y``, claimed machine-wide by :class:`tests.kubelet.addresses.AddressPool`), the
platform's files at their paths, and an environment of nothing but the platform's variables
(plus ``PATH``/``HOME``, which any image has). The command is the runtime zipapp's
``run``; the working directory is shared by all (as a platform's NAS is).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from sbatch_k8s.runtime_bundle import build_bundle
from tests.kubelet.addresses import AddressPool
from tests.kubelet.runner import ContainerProcess, ContainerSpec, Mount

#: Where the containers' directories live: not under /tmp, which each container replaces.
ROOT_PARENT = "/var/tmp"
BIN_PATH = f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin"
#: This machine's directories the containers' commands need (the test venv: its torchrun's
#: ``#!`` names its python) that lie under /tmp and would be hidden by the container's own.
HIDDEN_BY_TMP = [p for p in (sys.prefix,) if p == "/tmp" or p.startswith("/tmp/")]
#: The runtime's agent port (``SBATCHK8S_RUNTIME_PORT``'s default).
AGENT_PORT = 6818
#: The containers' python3: the oldest the runtime supports, when this machine has it.
OLDEST_PYTHON = "/root/.pyenv/versions/3.8.18/bin/python3.8"
CONTAINER_PYTHON = OLDEST_PYTHON if os.path.exists(OLDEST_PYTHON) else sys.executable


class Node(NamedTuple):
    """One container as the platform starts it (the oracle's view)."""

    hostname: str
    env: Dict[str, str]
    files: Dict[str, str] = {}
    #: Further names of this container in every /etc/hosts (an FQDN first).
    aliases: Tuple[str, ...] = ()
    #: Where the platform starts the command several times in the container (once per
    #: card, per MPI slot): each instance's own variables. Every instance's exit code is
    #: logged as ``instance <i> exit <code>``; the container's is the first non-zero one.
    instances: Tuple[Dict[str, str], ...] = ()
    #: This container's own command, where the platform runs no command of ours in it (an
    #: MpiJob's workers run only sshd).
    command: Optional[Tuple[str, ...]] = None


#: In a platform file, ``{{address:<hostname>}}`` stands for that container's address
#: (known only when the containers start).
ADDRESS_MARK = "{{address:%s}}"
INSTANCE_EXIT = re.compile(r"^instance (\d+) exit (\d+)$", re.MULTILINE)


def instances_command(argv: List[str], instances: Sequence[Dict[str, str]]) -> List[str]:
    """A shell command starting ``argv`` once per instance (with its variables) and waiting
    for them all."""
    lines = ["pids=''"]
    for env in instances:
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        lines.append(f"env {assignments} {' '.join(map(shlex.quote, argv))} & "
                     "pids=\"$pids $!\"")
    lines += ["code=0; i=0",
              "for pid in $pids; do wait $pid; c=$?; echo \"instance $i exit $c\"; "
              "[ $code = 0 ] && code=$c; i=$((i+1)); done",
              "exit $code"]
    return ["/bin/bash", "-c", "\n".join(lines)]


class Outcome(NamedTuple):
    """How the containers ended."""

    codes: List[Optional[int]]
    logs: List[str]
    seconds: float


class PlatformCluster:
    """A scratch root, an address pool and the runtime zipapp, for several platform runs."""

    def __init__(self, python: str = CONTAINER_PYTHON) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sbatch-k8s-platform-", dir=ROOT_PARENT))
        self.work = self.root / "work"
        self.work.mkdir()
        self.bundle = self.root / "runtime.pyz"
        self.bundle.write_bytes(build_bundle())
        self.python = python
        self.pool = AddressPool()
        self._runs = 0
        self._created: List[str] = []

    def close(self) -> None:
        """Release the addresses and remove the scratch root."""
        self.pool.close()
        shutil.rmtree(self.root, ignore_errors=True)
        for directory in reversed(self._created):
            try:
                os.removedirs(directory)
            except OSError:
                pass

    def write(self, name: str, text: str) -> Path:
        """A file in the shared working directory."""
        path = self.work / name
        path.write_text(text)
        return path

    def read(self, name: str) -> str:
        """A file of the shared working directory ("" when missing)."""
        path = self.work / name
        return path.read_text() if path.exists() else ""

    def _file_mounts(self, box: Path, files: Dict[str, str],
                     addresses: Dict[str, str]) -> List[Mount]:
        """The platform's files, by directory: each directory is mounted whole, so a
        container without the file does not find an empty mount point in its place. Mount
        points missing on this machine are created (empty) and removed by :meth:`close`."""
        directories: Dict[str, Dict[str, str]] = {}
        for path, text in files.items():
            directories.setdefault(os.path.dirname(path), {})[os.path.basename(path)] = text
        mounts = []
        for n, (directory, content) in enumerate(sorted(directories.items())):
            source = box / f"dir-{n}"
            source.mkdir()
            for name, text in content.items():
                for hostname, address in addresses.items():
                    text = text.replace(ADDRESS_MARK % hostname, address)
                (source / name).write_text(text)
            if not os.path.exists(directory):
                self._created.append(directory)
            mounts.append(Mount(str(source), directory, True))
        return mounts

    def _free_address(self) -> str:
        """An address of the pool nobody listens on (a test kubelet that released its block
        may leave pods behind that still hold their addresses for a moment)."""
        while True:
            address = self.pool.allocate()
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                probe.bind((address, AGENT_PORT))
                return address
            except OSError:
                continue
            finally:
                probe.close()

    def start(self, nodes: Sequence[Node], run_args: Sequence[str],
              command: Optional[List[str]] = None) -> List[ContainerProcess]:
        """Start every container with ``python3 runtime.pyz run <run_args>`` (or
        ``command``, as a platform's form gives it)."""
        self._runs += 1
        run_dir = self.root / f"run-{self._runs}"
        run_dir.mkdir()
        addresses = [self._free_address() for _ in nodes]
        hosts = run_dir / "hosts"
        hosts.write_text("127.0.0.1\tlocalhost\n" + "".join(
            f"{address}\t{' '.join(node.aliases + (node.hostname,))}\n"
            for address, node in zip(addresses, nodes)))
        processes = []
        for i, node in enumerate(nodes):
            box = run_dir / f"c{i}"
            (box / "tmp").mkdir(parents=True)
            mounts = [Mount(str(box / "tmp"), "/tmp", False),
                      Mount(str(hosts), "/etc/hosts", True)]
            mounts += [Mount(path, path, True) for path in HIDDEN_BY_TMP]
            mounts += self._file_mounts(box, node.files, {
                n.hostname: a for n, a in zip(nodes, addresses)})
            env = {"PATH": BIN_PATH, "HOME": "/root"}
            env.update(node.env)
            argv = [self.python, str(self.bundle), "run"] + list(run_args)
            if command is not None:
                argv = list(command)
            if node.command is not None:
                argv = list(node.command)
            if node.instances:
                argv = instances_command(argv, node.instances)
            spec = ContainerSpec(
                name=node.hostname, argv=argv, env=env, hostname=node.hostname,
                working_dir=str(self.work), mounts=mounts, uid=None, gid=None, groups=[],
                log_path=str(box / "log"), spec_path=str(box / "spec.json"))
            processes.append(ContainerProcess(spec))
        self._addresses = addresses
        return processes

    def rewrite_files(self, name: str, old: str, new: str) -> int:
        """Replace ``old`` by ``new`` in the platform files called ``name`` of the latest run
        (as the platform updates a file while the containers run); how many changed."""
        changed = 0
        for path in (self.root / f"run-{self._runs}").glob(f"c*/dir-*/{name}"):
            text = path.read_text()
            if old in text:
                path.write_text(text.replace(old, new))
                changed += 1
        return changed

    def finish(self, processes: List[ContainerProcess], timeout_s: float) -> Outcome:
        """Wait for every container (at most ``timeout_s`` in all); kill the stragglers."""
        begun = time.monotonic()
        codes: List[Optional[int]] = []
        for process in processes:
            left = max(timeout_s - (time.monotonic() - begun), 0.1)
            codes.append(process.wait(left))
        seconds = time.monotonic() - begun
        for process, code in zip(processes, codes):
            if code is None:
                process.kill()
            else:
                process.reap_leftovers()
        for address in self._addresses:
            self.pool.release(address)
        logs = [Path(p.spec.log_path).read_text(errors="replace") for p in processes]
        return Outcome(codes, logs, seconds)

    def run(self, nodes: Sequence[Node], run_args: Sequence[str],
            timeout_s: float = 120.0, command: Optional[List[str]] = None) -> Outcome:
        """Start the containers and wait for them all."""
        return self.finish(self.start(nodes, run_args, command), timeout_s)
