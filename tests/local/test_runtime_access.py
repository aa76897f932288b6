"""A runtime that cannot read its job's files or write its spool ends with one clear line.

Pods may run as any uid (the Secret with the token is mode 0400 of another owner, say) and
``--container-readonly`` pods may have no writable /tmp: the node process must say which
path and which uid, in one line, and exit 1 — never print a traceback. These tests run the
real node process as an unprivileged uid (as root) or with files it may not read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterator

import pytest

from sbatch_k8s.runtime_bundle import build_bundle
from tests.local.harness import LocalSlurm, job_id_of

NOBODY = 65534


def as_runtime_user() -> Dict[str, int]:
    """subprocess arguments running a process as the unprivileged uid (when we are root)."""
    return {"user": NOBODY, "group": NOBODY} if os.getuid() == 0 else {}


@pytest.fixture(scope="module")
def python() -> str:
    """An interpreter the runtime's uid may run (pyenv's may sit in root's home)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        try:
            if subprocess.run([candidate, "-c", "pass"], **as_runtime_user()  # type: ignore
                              ).returncode == 0:
                return candidate
        except OSError:
            continue
    pytest.skip("no Python the unprivileged uid can run")


@pytest.fixture
def job_dir(slurm: LocalSlurm) -> Iterator[Path]:
    """A copy of a real (held) local job's directory, where another uid may look, and the
    runtime zipapp pods run."""
    job = job_id_of(slurm.run("sbatch", "-H", "-N2", "--wrap", "true").stdout)
    top = Path(tempfile.mkdtemp(prefix="sbatch-k8s-access-"))
    os.chmod(top, 0o755)
    (top / "runtime.pyz").write_bytes(build_bundle())
    os.chmod(top / "runtime.pyz", 0o644)
    copy = top / "job"
    copy.mkdir()
    for name in ("job.json", "script", "token"):
        shutil.copy(slurm.state / "jobs" / str(job) / name, copy / name)
        os.chmod(copy / name, 0o644)
    os.chmod(copy, 0o755)
    yield copy
    slurm.run("scancel", str(job))
    shutil.rmtree(top)


def forbid(path: Path) -> None:
    """Make ``path`` unreadable for the runtime's uid (a 0400 file of another owner)."""
    os.chmod(path, 0o400 if os.getuid() == 0 else 0)


def run_node(python: str, job_dir: Path, spool: Path, index: int = 0
             ) -> "subprocess.CompletedProcess[str]":
    """The node process as a pod starts it: ``python3 runtime.pyz node …``."""
    env: Dict[str, str] = {"PATH": os.environ.get("PATH", os.defpath),
                           "SBATCHK8S_JOB_DIR": str(job_dir),
                           "SBATCHK8S_TOKEN_FILE": str(job_dir / "token"),
                           "SBATCHK8S_SPOOL": str(spool), "SBATCHK8S_RUNTIME_PORT": "1",
                           "SBATCHK8S_NODE_WAIT": "1"}
    return subprocess.run([python, str(job_dir.parent / "runtime.pyz"), "node", "--contract",
                           "local", "--index", str(index)], env=env, cwd="/",
                          capture_output=True, text=True, timeout=60,
                          **as_runtime_user())  # type: ignore[call-overload]


def who() -> str:
    uid = NOBODY if os.getuid() == 0 else os.getuid()
    gid = NOBODY if os.getuid() == 0 else os.getgid()
    return f"uid {uid}, gid {gid}"


@pytest.mark.parametrize("name, what", [("token", "the job token"),
                                        ("job.json", "the job description"),
                                        ("script", "the batch script")])
def test_an_unreadable_job_file_ends_the_node_with_one_line(python: str, job_dir: Path,
                                                            name: str, what: str) -> None:
    forbid(job_dir / name)
    spool = job_dir.parent / "spool"
    spool.mkdir()
    os.chmod(spool, 0o777)
    done = run_node(python, job_dir, spool)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"sbatch-k8s: error: runtime node: cannot read {what} "
                           f"{job_dir / name} (running as {who()}): Permission denied\n")


def test_a_spool_that_cannot_be_written_is_named(python: str, job_dir: Path) -> None:
    locked = job_dir.parent / "read-only"
    locked.mkdir()
    os.chmod(locked, 0o755 if os.getuid() == 0 else 0o555)
    done = run_node(python, job_dir, locked / "spool", index=1)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"sbatch-k8s: error: runtime node: cannot create the spool "
                           f"directory {locked / 'spool'} (running as {who()}): "
                           "Permission denied\n")


def test_srun_names_an_unreadable_job_file(python: str, job_dir: Path) -> None:
    forbid(job_dir / "job.json")
    env = {"PATH": os.environ.get("PATH", os.defpath), "SBATCHK8S_JOB_DIR": str(job_dir),
           "SBATCHK8S_TOKEN_FILE": str(job_dir / "token"),
           "SBATCHK8S_NODE_ADDRS": "127.0.0.2=127.0.0.2", "SBATCHK8S_SERVER": "0"}
    done = subprocess.run([python, str(job_dir.parent / "runtime.pyz"), "srun", "true"],
                          env=env, cwd="/", capture_output=True, text=True, timeout=60,
                          **as_runtime_user())  # type: ignore[call-overload]
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"srun: error: cannot read the job description "
                           f"{job_dir / 'job.json'} (running as {who()}): "
                           "Permission denied\n")
