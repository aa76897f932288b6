"""Starting a local job's node processes, and recording how it ended.

Node *i* is ``<runtime> node --contract local --index i`` bound to ``127.0.0.<i+2>`` on a port
free on every node address; each runs in its own session with its log in the job directory.
When node 0 ends, its ``result.json`` and ``steps.jsonl`` become the job's row and its steps;
the other nodes get KillWait to follow, then their process groups are killed. Nothing here
blocks: the one scheduler watches every running job this way.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import time
from typing import Any, Collection, Dict, List, Mapping, Optional, Tuple

from parsers.job_records import COMPLETED, FAILED, NODE_FAIL, derived_exit_code
from parsers.values.hostlist import compress_hostlist
from sbatch_k8s import jobdb
from sbatch_k8s.runtime.batch_host.step_log import read_step_log
from sbatch_k8s.runtime.contract import local_address
from sbatch_k8s.runtime.agent.shims import runtime_invocation

PORT_RANGE = (20000, 60000)
#: How long the other nodes get to exit after node 0 (beyond KillWait).
FOLLOW_S = 5.0


def free_port(addresses: List[str], taken: Collection[int] = (), count: int = 1) -> int:
    """The first of ``count`` consecutive TCP ports free on every one of ``addresses``, none
    of them in ``taken``."""
    for _ in range(200):
        port = random.randint(PORT_RANGE[0], PORT_RANGE[1] - count)
        wanted = range(port, port + count)
        if any(p in taken for p in wanted):
            continue
        probes = []
        try:
            for address in addresses:
                for number in wanted:
                    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    probes.append(probe)
                    probe.bind((address, number))
            return port
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()
    raise RuntimeError("no free port on the local node addresses")


def job_ports(conn: sqlite3.Connection, addresses: List[str]) -> Tuple[int, int]:
    """A starting job's agent port and its MASTER_PORT default, the next one: both free on
    its nodes' addresses and neither held by another running job (whose ``port`` column is
    its agent port and the port after it its rendezvous), since every local job's nodes
    share the addresses 127.0.0.2…: two jobs with one fixed MASTER_PORT collide on node 0's
    address (EADDRINUSE, or one job's ranks joining the other's group)."""
    held = [int(row[0]) for row in conn.execute(
        "SELECT port FROM jobs WHERE state='RUNNING' AND port IS NOT NULL")]
    port = free_port(addresses, {p + i for p in held for i in (0, 1)}, count=2)
    return port, port + 1


class NodeProcess:
    """One node process of a running job: a child of this scheduler (``popen``), or one
    adopted after a scheduler restart, known by its pid and recognised by its spool
    directory in its environment (so a reused pid is never mistaken for it)."""

    def __init__(self, pid: int, spool: str, popen: Optional[subprocess.Popen] = None) -> None:
        self.pid = pid
        self.spool = spool
        self.popen = popen

    def alive(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        return node_alive(self.pid, self.spool)

    @property
    def returncode(self) -> Optional[int]:
        return self.popen.returncode if self.popen is not None else None

    def kill(self) -> None:
        """SIGKILL the node's session (its tasks too)."""
        if self.pid <= 0:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.popen is not None:
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                pass


def node_alive(pid: int, spool: str) -> bool:
    """Whether ``pid`` is a live (not zombie) node process of the spool ``spool``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if f"SBATCHK8S_SPOOL={spool}\0".encode() not in f.read():
                return False
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


class ElementRun:
    """The running node processes of one job (or array element), watched without blocking:
    the job is over once node 0 has exited and the other nodes have followed — or were
    killed, KillWait plus :data:`FOLLOW_S` after node 0."""

    def __init__(self, job_id: int, directory: str, processes: List[NodeProcess],
                 settings: Mapping[str, str]) -> None:
        self.job_id = job_id
        self.directory = directory
        self.processes = processes
        #: The submitter's :data:`LAUNCH_SETTINGS` (KillWait, the requeue delay).
        self.settings = dict(settings)
        self.kill_wait_s = float(settings.get("SBATCHK8S_KILL_WAIT", 30))
        self.node0_end: Optional[float] = None

    def poll(self, now: float) -> bool:
        """True once the job is over (every node process gone)."""
        if self.node0_end is None:
            if self.processes[0].alive():
                return False
            self.node0_end = now
        others = [p for p in self.processes[1:] if p.alive()]
        if not others:
            return True
        if now < self.node0_end + self.kill_wait_s + FOLLOW_S:
            return False
        for process in others:
            process.kill()
        return True

    @property
    def adopted(self) -> bool:
        """Whether its processes are not children of this process (watched by polling)."""
        return self.processes[0].popen is None

    def result(self) -> Dict[str, Any]:
        """Node 0's verdict. Without one: killed by a signal, node 0 was lost — the batch
        host's node failed, NODE_FAIL (NodeDown) as slurmctld records it, requeued when the
        job may be (:mod:`~sbatch_k8s.backends.local.requeue`); having exited (its one error
        line said why), the job failed to launch."""
        path = os.path.join(self.directory, "node-0", "result.json")
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            code = self.processes[0].returncode or 1
            if code < 0:
                return {"state": NODE_FAIL, "exit_code": 0, "signal": -code,
                        "reason": "NodeDown"}
            return {"state": FAILED, "exit_code": code, "signal": 0,
                    "reason": "NonZeroExitCode"}

    def finish(self, conn: sqlite3.Connection) -> None:
        """Record the job's end and its steps."""
        result = self.result()
        row = jobdb.get_job(conn, self.job_id)
        end = time.time()
        state = result["state"]
        # The job's exit is the batch script's (scontrol shows a cancelled job's 0:15; sacct
        # prints 0:0 for cancelled and timed-out jobs itself).
        code, signum = result["exit_code"], result["signal"]
        derived = record_steps(conn, row, os.path.join(self.directory, "node-0",
                                                        "steps.jsonl"), result, end)
        jobdb.update_job(conn, self.job_id, state=state, reason=result.get("reason", "None"),
                         exit_code=code, exit_signal=signum, derived_exit_code=derived,
                         end_time=end, node0_pid=None, node_pids=None)


def record_steps(conn: sqlite3.Connection, row: Any, log_path: str, result: Mapping[str, Any],
                 end: float) -> int:
    """The ``batch``, ``extern`` and numbered steps of a finished job; returns the job's
    derived exit code (the highest exit code of its srun steps: :func:`derived_exit_code`)."""
    start = row["start_time"]
    batch_state = COMPLETED
    if result["signal"]:
        batch_state = "CANCELLED"
    elif result["exit_code"]:
        batch_state = FAILED
    base = {"job_id": row["job_id"], "end_time": end}
    jobdb.put_step(conn, dict(base, step_id="batch", name="batch", state=batch_state,
                              exit_code=result["exit_code"], exit_signal=result["signal"],
                              start_time=start, node_list=row["batch_host"], node_count=1,
                              ntasks=1, cpus=row["batch_cpus"] or 1, seq=0,
                              usage=_usage_text(_batch_usage(result))))
    jobdb.put_step(conn, dict(base, step_id="extern", name="extern", state=COMPLETED,
                              exit_code=0, exit_signal=0, start_time=start,
                              node_list=row["node_list"], node_count=row["node_count"],
                              ntasks=row["node_count"], cpus=row["cpus"], seq=1))
    starts, ends = read_step_log(log_path)
    for step_id, began in sorted(starts.items()):
        ended = ends.get(step_id, {"state": "CANCELLED", "exit_code": 0, "signal": 9,
                                   "time": end})
        nodes = began.get("nodes") or []
        jobdb.put_step(conn, {
            "job_id": row["job_id"], "step_id": str(step_id), "name": began.get("name", ""),
            "state": ended.get("state", "COMPLETED"), "exit_code": ended.get("exit_code", 0),
            "exit_signal": ended.get("signal", 0), "start_time": began.get("time"),
            "end_time": ended.get("time"), "node_list": compress_hostlist(nodes),
            "node_count": len(nodes), "ntasks": began.get("ntasks", 0),
            "cpus": began.get("ntasks", 0), "seq": 2 + int(step_id),
            "usage": _usage_text(ended.get("usage") or began.get("usage"))})
    return derived_exit_code((str(step_id), int(e.get("exit_code") or 0))
                             for step_id, e in ends.items())


def _batch_usage(result: Mapping[str, Any]) -> Any:
    """The batch script's usage in node 0's result (its ``batch`` step entry)."""
    entries = [e for e in result.get("steps") or [] if isinstance(e, dict)]
    return next((e.get("usage") for e in entries if e.get("id") == "batch"), None)


def _usage_text(usage: Any) -> Optional[str]:
    """A step's usage document as the step row keeps it (JSON text; None for none)."""
    return json.dumps(usage, separators=(",", ":")) if usage else None


#: The submitter's variables a job's node processes are started with (kept per job in
#: ``launch.json``: one scheduler starts the jobs of many commands), and the delay before a
#: job the machine ended runs again (:mod:`~sbatch_k8s.backends.local.requeue`).
LAUNCH_SETTINGS = ("PATH", "SBATCHK8S_KILL_WAIT", "SBATCHK8S_NODE_WAIT",
                   "SBATCHK8S_SECONDS_PER_MINUTE", "SBATCHK8S_RUNTIME_PYZ",
                   "SBATCHK8S_RUNTIME_PYTHON", "SBATCHK8S_REQUEUE_DELAY")


def start_element(conn: sqlite3.Connection, settings: Mapping[str, str], directory: str,
                  desc: Mapping[str, Any]) -> ElementRun:
    """Start the node processes of one job (``settings``: its :data:`LAUNCH_SETTINGS`);
    record where it runs."""
    count = int(desc["node_count"])
    names = [local_address(i) for i in range(count)]
    port, master_port = job_ports(conn, names)
    kill_wait = float(settings.get("SBATCHK8S_KILL_WAIT", 30))
    jobdb.update_job(conn, int(desc["job_id"]), node_list=compress_hostlist(names),
                     batch_host=names[0], port=port)
    invocation = runtime_invocation()
    if settings.get("SBATCHK8S_RUNTIME_PYZ"):
        # Run the zipapp pods run, with the interpreter given (e.g. to test Python 3.8).
        invocation = [settings.get("SBATCHK8S_RUNTIME_PYTHON", "python3"),
                      settings["SBATCHK8S_RUNTIME_PYZ"]]
    processes = []
    for index in range(count):
        spool = os.path.join(directory, f"node-{index}")
        os.makedirs(spool, exist_ok=True)
        env = {
            "PATH": settings.get("PATH", os.defpath),
            "SBATCHK8S_JOB_DIR": directory,
            "SBATCHK8S_TOKEN_FILE": os.path.join(directory, "token"),
            "SBATCHK8S_SPOOL": spool,
            "SBATCHK8S_RUNTIME_PORT": str(port),
            "SBATCHK8S_KILL_WAIT": str(kill_wait),
            "SBATCHK8S_NODE_WAIT": settings.get("SBATCHK8S_NODE_WAIT", "30"),
            "SBATCHK8S_MASTER_PORT": str(master_port),
        }
        if settings.get("SBATCHK8S_SECONDS_PER_MINUTE"):
            # Testing knob: how long a "minute" of --time and --signal lasts.
            env["SBATCHK8S_SECONDS_PER_MINUTE"] = settings["SBATCHK8S_SECONDS_PER_MINUTE"]
        with open(os.path.join(directory, f"node-{index}.log"), "ab") as log:
            popen = subprocess.Popen(
                invocation + ["node", "--contract", "local", "--index", str(index)],
                env=env, cwd=spool, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        processes.append(NodeProcess(popen.pid, spool, popen))
    jobdb.update_job(conn, int(desc["job_id"]), node0_pid=processes[0].pid,
                     node_pids=",".join(str(p.pid) for p in processes))
    return ElementRun(int(desc["job_id"]), directory, processes, settings)
