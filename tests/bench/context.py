"""What every benchmark shares: a private local cluster, the commands, real Slurm."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from tests.local.harness import BIN, REPO, LocalSlurm

# The real-Slurm starter: beside the checkout, or named by $SBATCHK8S_REAL_SLURM (a checkout
# elsewhere, e.g. a worktree of the commit being measured).
REAL_SLURM = Path(os.environ.get("SBATCHK8S_REAL_SLURM")
                  or REPO.parent / "shared" / "tools" / "real-slurm")
BENCH_CONFIG = "[local]\ncpus = 256\ngpus = 0\n"


def command_argv(name: str) -> List[str]:
    """How a user runs ``name``: the installed console script, else the checkout's shim."""
    installed = Path(sys.executable).parent / name
    if installed.exists():
        return [str(installed)]
    return [sys.executable, str(BIN / name)]


class Context:
    """Shared state of one benchmark run."""

    def __init__(self, quick: bool, real_slurm: bool, kubeconfig: Optional[str] = None
                 ) -> None:
        self.quick = quick
        #: The real API server the Kubernetes figures are taken on (None: the emulated one).
        self.kubeconfig = kubeconfig
        self.root = Path(tempfile.mkdtemp(prefix="sbatch-k8s-bench-"))
        self.slurm = LocalSlurm(self.root / "local", config=BENCH_CONFIG, commands=command_argv)
        warm(self.slurm)
        self.real_env: Optional[Dict[str, str]] = None
        self.real_reason = "not requested (--no-real-slurm)"
        if real_slurm:
            self.real_env, self.real_reason = start_real_slurm()

    def repeats(self, normal: int) -> int:
        return max(3, normal // 3) if self.quick else normal

    def fresh_cluster(self, name: str, config: str = BENCH_CONFIG) -> LocalSlurm:
        cluster = LocalSlurm(self.root / name, config=config, commands=command_argv)
        warm(cluster)
        return cluster

    def close(self) -> None:
        self.slurm.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)


def warm(cluster: LocalSlurm) -> None:
    """Start the cluster's command server with the installation the benchmarks time."""
    import time

    subprocess.run(command_argv("squeue"), env=cluster.env, cwd=str(cluster.work),
                   capture_output=True)
    deadline = time.time() + 20
    while time.time() < deadline and not (cluster.state / "server.sock").exists():
        time.sleep(0.05)
    time.sleep(0.2)


def start_real_slurm() -> "tuple[Optional[Dict[str, str]], str]":
    """The environment to run real Slurm's commands, or why it is not available."""
    script = REAL_SLURM / "start.sh"
    if not script.exists():
        return None, f"{script} is absent"
    if shutil.which("sbatch") is None and os.geteuid() != 0:
        return None, "real Slurm is not installed and installing it needs root"
    try:
        started = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                                 timeout=300)
    except subprocess.TimeoutExpired:
        return None, "real Slurm did not start within 300 s"
    if started.returncode != 0 or "SLURM_CONF=" not in started.stdout:
        last = (started.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"real Slurm could not start here: {last}"
    conf = started.stdout.strip().split("SLURM_CONF=", 1)[1]
    env = dict(os.environ, SLURM_CONF=conf)
    env["PATH"] = "/usr/bin:/bin:/usr/sbin:/sbin"
    return env, ""
