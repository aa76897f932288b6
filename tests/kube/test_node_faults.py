"""What real nodes do that a friendly test kubelet would hide (seen with real kubelets,
containerd and a cluster DNS; reference/kubernetes.md §9.f), and how each end is recorded:

* the DNS learns a pod's name late: ``srun`` must not fail on it;
* memory limits are cgroups: a task over the limit is killed by the kernel, and Slurm
  records ``OUT_OF_MEMORY`` (the step's, or the job's when the batch step had the kill);
* each node's kubelet sends its pod's SIGTERM on its own: a cancel must read as a cancel
  whichever node hears first;
* a pod deleted alone (``kubectl delete pod`` of node 0) is a node failure, requeued.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube import harness
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.kube.test_dependencies import apply_job_account
from tests.kubelet import TestKubelet
from tests.kubelet.memory_cgroups import available as memory_cgroups_available

pytestmark = pytest.mark.slow

WAIT_S = 180
WITH_ACCOUNT = CONFIG + 'service_account = "sbatch-k8s-job"\n'
INDEX = "batch.kubernetes.io/job-completion-index"


@contextlib.contextmanager
def kubelet_with(cluster: Any, **options: Any) -> Iterator[Any]:
    """Two nodes of the test kubelet with ``options`` — on real nodes (``--with-real-node``)
    those nodes, whose DNS, memory cgroups and SIGTERMs are the real ones."""
    if harness.CONFIG_FILTER is not None:
        from tests.kube.real_nodes import RealNodes

        with RealNodes(cluster) as nodes:
            yield nodes
        return
    with TestKubelet(cluster.kubeconfig, nodes=2, **options) as running:
        yield running
        if hasattr(cluster, "drain"):          # a real server: its pods end while we run
            cluster.drain()


def _commands(cluster: Any, tmp_path: Any, account: bool) -> KubeSlurm:
    kube = KubeSlurm(tmp_path, cluster.kubeconfig, config=WITH_ACCOUNT if account else CONFIG)
    if account:
        apply_job_account(kube)
    return kube


def _out(kube: KubeSlurm, name: str) -> str:
    try:
        return kube.read(name)
    except FileNotFoundError:
        return ""


def _sacct(kube: KubeSlurm, job_id: int, *args: str) -> List[str]:
    done = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State,ExitCode", *args)
    return done.stdout.splitlines()


def _node_pod(kube: KubeSlurm, job_id: int, index: int) -> Optional[Dict[str, Any]]:
    pods = [p for p in kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")
            if (p["metadata"].get("annotations") or {}).get(INDEX) == str(index)]
    return pods[0] if pods else None


@pytest.mark.parametrize("nodes", [1, 2])
def test_srun_does_not_depend_on_when_the_dns_learns_the_names(cluster: Any, tmp_path: Any,
                                                              nodes: int) -> None:
    """Names resolve 4 s after their pods appear, as a slow cluster DNS has them: node 0's
    srun finds its own agent and the others' through the addresses node 0 already knows
    (one node: before, ``Temporary failure in name resolution`` failed the step)."""
    kube = _commands(cluster, tmp_path, account=False)
    with kubelet_with(cluster, dns_delay_s=4.0):
        kube.script("dns.sh", f"#!/bin/sh\n#SBATCH -N{nodes}\nsrun --label hostname | sort\n"
                    "echo srun said $?\n")
        done = kube.run("sbatch", "--wait", "dns.sh", timeout=WAIT_S)
        assert done.returncode == 0, done.stderr
        job_id = submitted_id(done.stdout)
        lines = _out(kube, f"slurm-{job_id}.out").splitlines()
        assert lines == [f"{i}: dns-sh-{job_id}-{i}" for i in range(nodes)] + \
            ["srun said 0"], lines
        assert _sacct(kube, job_id)[0] == f"{job_id}|COMPLETED|0:0"
    kube.cleanup()


OOM_STEP = r"""#!/bin/sh
#SBATCH -N1 --mem=150M
srun python3 -c 'a = []
while True: a.append(bytearray(20 << 20))'
echo srun said $?
"""
OOM_BATCH = r"""#!/bin/sh
#SBATCH -N1 --mem=150M
python3 -c 'a = []
while True: a.append(bytearray(20 << 20))'
echo python said $?
"""


def test_out_of_memory_as_slurm_records_it(cluster: Any, tmp_path: Any) -> None:
    """A task over the pod's memory limit is killed by the kernel's cgroup OOM killer:
    slurmstepd's "Detected 1 oom-kill event(s)" line, srun's "Out Of Memory" and exit 1, the
    step OUT_OF_MEMORY 0:125 while the job goes on (COMPLETED); the same kill in the batch
    step ends the job OUT_OF_MEMORY 0:125, reason OutOfMemory (before: CANCELLED 0:9)."""
    if not memory_cgroups_available() and harness.CONFIG_FILTER is None:
        pytest.skip("this machine offers no writable cgroup v1 memory controller")
    kube = _commands(cluster, tmp_path, account=False)
    with kubelet_with(cluster, memory_cgroups=True):
        kube.script("step.sh", OOM_STEP)
        done = kube.run("sbatch", "--wait", "step.sh", timeout=WAIT_S)
        job_id = submitted_id(done.stdout)
        out = _out(kube, f"slurm-{job_id}.out")
        assert re.search(rf"slurmstepd: error: Detected 1 oom-kill event\(s\) in StepId="
                         rf"{job_id}\.0\. Some of your processes may have been killed by the "
                         r"cgroup out-of-memory handler\.\n", out), out
        assert f"srun: error: step-sh-{job_id}-0: task 0: Out Of Memory\n" in out, out
        assert out.endswith("srun said 1\n") and "Force Terminated" not in out, out
        rows = _sacct(kube, job_id)
        assert f"{job_id}|COMPLETED|0:0" in rows and f"{job_id}.0|OUT_OF_MEMORY|0:125" in rows
        kube.script("batch.sh", OOM_BATCH)
        done = kube.run("sbatch", "--wait", "batch.sh", timeout=WAIT_S)
        job_id = submitted_id(done.stdout)
        out = _out(kube, f"slurm-{job_id}.out")
        assert f"Detected 1 oom-kill event(s) in StepId={job_id}.batch." in out, out
        assert done.returncode != 0
        rows = _sacct(kube, job_id)
        assert f"{job_id}|OUT_OF_MEMORY|0:125" in rows and \
            f"{job_id}.batch|OUT_OF_MEMORY|0:125" in rows, rows
        shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
        assert "JobState=OUT_OF_MEMORY Reason=OutOfMemory" in shown, shown
    kube.cleanup()


TWO_NODES = r"""#!/bin/sh
#SBATCH -N2 -J stop
echo started
srun sleep 300
"""


def _node0_stops_last(delay_s: float) -> Callable[[Dict[str, Any]], float]:
    """Node 0's kubelet hears of a deletion ``delay_s`` after the others."""
    def delay(pod: Dict[str, Any]) -> float:
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        return delay_s if annotations.get(INDEX) == "0" else 0.0
    return delay


@pytest.mark.parametrize("account,late_s", [(False, 0.3), (True, 2.0)],
                         ids=["no API", "job ServiceAccount"])
def test_a_cancel_reads_as_one_when_node0_is_stopped_last(cluster: Any, tmp_path: Any,
                                                         account: bool, late_s: float) -> None:
    """scancel: node 1's pod gets its SIGTERM first and tells node 0 it was terminated; node
    0 waits for its own (no API: it comes within what a cancel takes, here 0.3 s later) or
    asks the API server (the record says CANCELLED, however late node 0's SIGTERM comes):
    the output says CANCELLED AT, never DUE TO PREEMPTION; sacct says CANCELLED."""
    kube = _commands(cluster, tmp_path, account)
    with kubelet_with(cluster, sigterm_delay=_node0_stops_last(late_s), sigterm_jitter_s=0):
        kube.script("stop.sh", TWO_NODES)
        job_id = submitted_id(kube.run("sbatch", "stop.sh").stdout)
        wait_until(lambda: "started" in _out(kube, f"slurm-{job_id}.out"), WAIT_S, "start")
        assert kube.run("scancel", str(job_id)).returncode == 0
        wait_until(lambda: "CANCELLED AT" in _out(kube, f"slurm-{job_id}.out"), WAIT_S,
                   "the cancel line")
        out = _out(kube, f"slurm-{job_id}.out")
        assert re.search(rf"\*\*\* JOB {job_id} ON stop-{job_id}-0 CANCELLED AT \S+ \*\*\*",
                         out) and "PREEMPTION" not in out, out
        (row,) = _sacct(kube, job_id, "-X")
        assert row.startswith(f"{job_id}|CANCELLED by ") and row.endswith("|0:0"), row
    kube.cleanup()


@pytest.mark.parametrize("account", [False, True], ids=["no API", "job ServiceAccount"])
def test_node0_pod_deleted_is_a_node_failure_and_requeued(cluster: Any, tmp_path: Any,
                                                         account: bool) -> None:
    """``kubectl delete pod`` of node 0 while the job runs: node 0 finds the workload alive
    (it asks the API server; without, no other node was stopped), writes slurmstepd's NODE
    FAILURE line, and the job is requeued as slurmctld requeues a node failure — sacct -D
    keeps the run NODE_FAIL, the job runs again with Restarts=1 (before: CANCELLED AT in the
    output, FAILED 0:0 NonZeroExitCode in sacct, never requeued)."""
    kube = _commands(cluster, tmp_path, account)
    kube.env["SBATCHK8S_REQUEUE_DELAY"] = "1"
    with kubelet_with(cluster):
        kube.script("stop.sh", TWO_NODES.replace("echo started",
                                                 "echo started run ${SLURM_RESTART_COUNT:-0}"))
        job_id = submitted_id(kube.run("sbatch", "-o", "stop-%j-%r.out", "stop.sh").stdout)
        wait_until(lambda: "started" in _out(kube, f"stop-{job_id}-0.out"), WAIT_S, "start")
        node0 = _node_pod(kube, job_id, 0)
        assert node0 is not None
        kube.api().delete(kinds.POD, node0["metadata"]["name"], kube.namespace)
        first = wait_until(lambda: "NODE FAILURE" in _out(kube, f"stop-{job_id}-0.out") and
                           _out(kube, f"stop-{job_id}-0.out"), WAIT_S, "node 0's line")
        assert re.search(rf"\*\*\* JOB {job_id} ON stop-{job_id}-0 CANCELLED AT \S+ DUE TO NODE "
                         r"FAILURE, SEE SLURMCTLD LOG FOR DETAILS \*\*\*", first), first

        def rerun() -> bool:
            kube.run("squeue")                  # a look settles and requeues the job
            return "started run 1" in _out(kube, f"stop-{job_id}-1.out")

        wait_until(rerun, WAIT_S, "the job running again")
        assert _sacct(kube, job_id, "-X", "-D")[0] == f"{job_id}|NODE_FAIL|0:0"
        shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
        assert "Restarts=1" in shown, shown
        kube.run("scancel", str(job_id))
    kube.cleanup()
