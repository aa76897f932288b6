"""The two sides of every conformance case: the real Slurm 22.05 of
``../shared/tools/real-slurm`` and sbatch-k8s's local backend, behind one interface.

A case runs the same command line, script and job on both sides (``Side.run``,
``Side.batch``) and compares what they print after normalisation (:mod:`.normalise`).
Both sides know their node names in order (``n1``… / ``127.0.0.2``…), their cluster name and
their working directory, which is what the normaliser needs.
"""

from __future__ import annotations

import abc
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from tests.local.harness import BIN, LocalSlurm

# beside the checkout, or named by $SBATCHK8S_REAL_SLURM (as for the benchmarks)
REAL_SLURM_TOOLS = Path(os.environ.get("SBATCHK8S_REAL_SLURM")
                        or Path(__file__).resolve().parents[3] / "shared" / "tools"
                        / "real-slurm")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: States in which a job is still alive (scontrol's JobState).
ALIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
         "RESIZING")
#: Our local backend's configuration: pretend GPUs, and the same partitions as the
#: emulated cluster (debug, the default, and gpu).
LOCAL_CONFIG = """\
[local]
gpus = 8
max_array_size = 1001     # the emulated cluster's MaxArraySize (Slurm's default)

[partitions.debug]

[partitions.gpu]
"""


@dataclass
class Job:
    """A finished batch job: what sbatch said, its id(s) and its working directory."""

    side: "Side"
    job_id: int
    rc: int
    stdout: str
    stderr: str
    cwd: Path
    array_ids: Dict[int, int] = field(default_factory=dict)   # task index -> own job id
    note: str = ""     # how the harness had to steer the job (shown with failures)

    def read(self, name: str) -> str:
        path = self.cwd / name
        return path.read_text(errors="replace") if path.exists() else f"<missing {name}>"

    def nodes(self) -> List[str]:
        """The job's nodes in order (from scontrol's NodeList)."""
        return self.side.expand(self.side.job_field(self.job_id, "NodeList"))


class Side(abc.ABC):
    """What both sides offer; ``kind`` is ``real`` or ``ours``."""

    kind = ""
    cluster = ""
    #: node names of this side, in the order of its node table
    node_names: Sequence[str] = ()
    work: Path

    @abc.abstractmethod
    def command(self, command: str) -> List[str]:
        """How this side runs one of Slurm's commands."""

    @abc.abstractmethod
    def environment(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """The environment this side's commands run in."""

    # -- commands ------------------------------------------------------------------------
    def run(self, command: str, *args: str, cwd: Optional[Path] = None,
            env: Optional[Dict[str, str]] = None, stdin: Optional[str] = None,
            timeout: float = 60) -> "subprocess.CompletedProcess[str]":
        """Run one of the Slurm commands to completion."""
        # a byte that is not UTF-8 (a job name given as one) is kept, as surrogateescape
        return subprocess.run([*self.command(command), *args], cwd=cwd or self.work,
                              env=self.environment(env), input=stdin, text=True,
                              errors="surrogateescape", capture_output=True, timeout=timeout)

    def shell(self, text: str, cwd: Optional[Path] = None,
              timeout: float = 60) -> "subprocess.CompletedProcess[str]":
        """Run a /bin/sh snippet with this side's commands first on PATH."""
        return subprocess.run(["/bin/sh", "-c", text], cwd=cwd or self.work,
                              env=self.environment(), text=True, capture_output=True,
                              timeout=timeout)

    def case_dir(self, name: str) -> Path:
        """A fresh working directory for one case."""
        path = self.work / re.sub(r"[^\w.-]+", "_", name)
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- jobs ----------------------------------------------------------------------------
    def placement(self, partition: str) -> List[str]:
        """Extra sbatch options that keep other users' jobs from changing the placement."""
        return []

    def batch(self, name: str, script: str, args: Sequence[str] = (),
              script_name: str = "job.sh", timeout: float = 90,
              idle_nodes: bool = False) -> Job:
        """Submit ``script`` with ``args`` in a fresh directory; wait for its end.
        ``idle_nodes``: the job's layout depends on free CPUs, so make it run on idle
        nodes (see :meth:`placement`)."""
        cwd = self.case_dir(name)
        (cwd / script_name).write_text(script)
        extra: List[str] = []
        if idle_nodes:
            args_text = " ".join(args)
            found = re.search(r"(?:-p|--partition)[= ](\S+)", args_text)
            extra = self.placement(found.group(1) if found else "debug")
        if self.kind == "real":
            done = self.run("sbatch", "--parsable", *extra, *args, script_name, cwd=cwd,
                            timeout=timeout)
        else:
            done = self.run("sbatch", "--wait", "--parsable", *args, script_name, cwd=cwd,
                            timeout=timeout)
        first = done.stdout.strip().split(";")[0]
        if not first.isdigit():
            raise AssertionError(f"{self.kind}: sbatch {' '.join(args)} failed "
                                 f"(rc {done.returncode}): {done.stderr}")
        job_id = int(first)
        self.wait_done(job_id, timeout=timeout)
        job = Job(self, job_id, done.returncode, done.stdout, done.stderr, cwd)
        if extra:
            job.note = (f"real Slurm's job ran with {' '.join(extra)}: other users' jobs held "
                        "those nodes")
        if "--array" in " ".join(args) or "-a" in args:
            job.array_ids = self.array_ids(job_id)
        return job

    def wait_done(self, job_id: int, timeout: float = 90) -> None:
        """Poll scontrol until the job (every element of an array) has ended."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            states = self.job_states(job_id)
            if states and not any(s in ALIVE for s in states):
                return
            time.sleep(0.1)
        self.run("scancel", str(job_id))
        raise AssertionError(f"{self.kind}: job {job_id} did not end within {timeout} s "
                             "(cancelled)")

    def job_states(self, job_id: int) -> List[str]:
        shown = self.run("scontrol", "show", "job", "-o", str(job_id))
        return re.findall(r"\bJobState=(\S+)", shown.stdout)

    def job_field(self, job_id: int, name: str) -> str:
        shown = self.run("scontrol", "show", "job", "-o", str(job_id))
        found = re.search(rf"(?:^|\s){re.escape(name)}=(\S*)", shown.stdout)
        return found.group(1) if found else ""

    def array_ids(self, job_id: int) -> Dict[int, int]:
        """Array task index -> the element's own job id."""
        shown = self.run("scontrol", "show", "job", "-o", str(job_id)).stdout
        ids = {}
        for line in shown.splitlines():
            own = re.search(r"\bJobId=(\d+)", line)
            task = re.search(r"\bArrayTaskId=(\d+)\b", line)
            if own and task:
                ids[int(task.group(1))] = int(own.group(1))
        return ids

    def expand(self, hostlist: str) -> List[str]:
        """``scontrol show hostnames`` of this side."""
        if not hostlist or hostlist in ("(null)", "None"):
            return []
        return self.run("scontrol", "show", "hostnames", hostlist).stdout.split()

    def node_cpus(self, partition: str) -> Dict[str, str]:
        """The partition's nodes → their CPUs as ``sinfo -N`` shows them (A/I/O/T)."""
        rows = self.run("sinfo", "-h", "-N", "-p", partition, "-o", "%N %C").stdout
        return dict(line.split()[:2] for line in rows.splitlines() if len(line.split()) > 1)

    def busy_nodes(self, partition: str) -> List[str]:
        """The partition's nodes with CPUs allocated."""
        return sorted(node for node, cpus in self.node_cpus(partition).items()
                      if cpus.split("/")[0] != "0")

    def wait_idle(self, partition: str, timeout: float) -> List[str]:
        """Wait (bounded) until no node of the partition has CPUs allocated, because where
        a job goes (or would go) depends on what else runs; the nodes still busy at the
        end (other users' jobs, or jobs still ending)."""
        deadline = time.time() + timeout
        while True:
            busy = self.busy_nodes(partition)
            if not busy or time.time() > deadline:
                return busy
            time.sleep(0.2)

    def wait_sacct(self, job_id: int, timeout: float = 20) -> None:
        """Until accounting has the final record of the job and of all its steps."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = self.run("sacct", "-n", "-P", "-j", str(job_id),
                            "-o", "JobID,JobName,State,Partition").stdout.splitlines()
            if rows and all(r.split("|")[2] not in ("PENDING", "RUNNING", "REQUEUED",
                                                     "RESIZING", "SUSPENDED")
                            for r in rows) and rows[0].split("|")[3] \
                    and rows[0].split("|")[1] != "allocation":
                return
            time.sleep(0.1)


class RealSlurm(Side):
    """The real Slurm 22.05 started by ``start.sh`` (commands /usr/bin/*)."""

    kind = "real"
    cluster = "realslurm"
    node_names = ("n1", "n2", "n3", "n4")

    def __init__(self, root: Path, slurm_conf: str) -> None:
        self.work = root
        self.work.mkdir(parents=True, exist_ok=True)
        self.slurm_conf = slurm_conf
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SBATCH", "SLURM", "SRUN", "SQUEUE", "SACCT",
                                         "SINFO", "SCONTROL", "SCANCEL", "SALLOC"))}
        self.env.update({"PATH": SYSTEM_PATH, "SLURM_CONF": slurm_conf, "LC_ALL": "C"})

    def command(self, command: str) -> List[str]:
        # resolved through PATH (system directories only): argv[0] is the bare name, as
        # when a user types it (glibc's getopt messages start with argv[0])
        return [command]

    def placement(self, partition: str, wait: float = 3) -> List[str]:
        """Wait (bounded) until the partition's nodes are idle; if some stay busy with other
        users' jobs, exclude them (layouts like ``-N2 -n5`` → 4,1 need idle nodes)."""
        busy = self.wait_idle(partition, wait)
        if not busy:
            return []
        total = len(self.node_cpus(partition))
        return ["-x", ",".join(busy)] if total - len(busy) >= 2 else []

    def environment(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        return dict(self.env, **(extra or {}))


class OurSlurm(Side):
    """sbatch-k8s's local backend on a private state directory (``LocalSlurm``)."""

    kind = "ours"
    cluster = "sbatch-k8s"
    node_names = tuple(f"127.0.0.{i}" for i in range(2, 18))

    def __init__(self, root: Path) -> None:
        self.local = LocalSlurm(root, config=LOCAL_CONFIG)
        self.work = self.local.work
        self.local.env["LC_ALL"] = "C"
        self.local.env.pop("SBATCHK8S_KILL_WAIT", None)   # Slurm's KillWait, as real

    def command(self, command: str) -> List[str]:
        return [sys.executable, str(BIN / command)]

    def environment(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        return dict(self.local.env, **(extra or {}))

    def cleanup(self) -> None:
        self.local.cleanup()


def start_real_slurm(timeout: float = 180) -> str:
    """Start (or find running) the real Slurm; its SLURM_CONF. Raises RuntimeError with the
    reason when it cannot run here."""
    start = REAL_SLURM_TOOLS / "start.sh"
    if not start.exists():
        raise RuntimeError(f"{start} is absent")
    if os.geteuid() != 0:
        raise RuntimeError("start.sh must run as root")
    try:
        done = subprocess.run(["bash", str(start)], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"start.sh did not finish within {timeout:.0f} s") from None
    found = re.search(r"SLURM_CONF=(\S+)", done.stdout)
    if done.returncode != 0 or not found:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"start.sh failed (rc {done.returncode}): {tail}")
    conf = shlex.split(found.group(1))[0]
    if not os.path.exists("/usr/bin/sbatch"):
        raise RuntimeError("/usr/bin/sbatch is missing after start.sh")
    # the controller must answer
    deadline = time.time() + 30
    env = {"PATH": SYSTEM_PATH, "SLURM_CONF": conf}
    while True:
        probe = subprocess.run(["/usr/bin/sinfo", "-h"], env=env, capture_output=True,
                               text=True, timeout=30)
        if probe.returncode == 0 and probe.stdout.strip():
            return conf
        if time.time() > deadline:
            raise RuntimeError(f"slurmctld does not answer: {probe.stderr.strip()}")
        time.sleep(0.5)
