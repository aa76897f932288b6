"""A requeued job is not over: its ``afterany`` dependents stay ``PD (Dependency)`` through
the requeue, whatever looks at the cluster meanwhile, and run once its next run ended — end
to end on an API server with the test kubelet.

The window is made wide and observable: a finalizer keeps node 0's pod (its run already ended
on the requeue request, its report saying CANCELLED) until the test lets it go, so that
``scontrol requeue`` waits for it while squeue and sacct look again and again.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit

pytestmark = pytest.mark.slow

WAIT_S = 180
HOLD = "sbatch-k8s.test/keep"
A = r"""#!/bin/sh
#SBATCH -J a -o a-%j-%r.out --requeue
echo "run ${SLURM_RESTART_COUNT:-0}" >> a-runs.txt
while [ ! -e go-${SLURM_RESTART_COUNT:-0} ]; do sleep 0.2; done
"""
B = "#!/bin/sh\n#SBATCH -J b\necho b ran after $(cat a-runs.txt | wc -l) runs > b.txt\n"


def _lines(kube: KubeSlurm, name: str) -> List[str]:
    try:
        return kube.read(name).splitlines()
    except FileNotFoundError:
        return []


def _pods(kube: KubeSlurm, job_id: int) -> List[Dict[str, Any]]:
    return kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")


def _ended(pod: Dict[str, Any]) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all("terminated" in (s.get("state") or {}) for s in statuses)


def _squeue(kube: KubeSlurm) -> Dict[int, str]:
    out = kube.run("squeue", "-h", "-o", "%i %T %r").stdout
    return {int(line.split()[0]): " ".join(line.split()[1:]) for line in out.splitlines()}


def _b_still_waits(kube: KubeSlurm, a: int, b: int) -> None:
    """B pends for its dependency, has no pods and its workload stays suspended; A is not
    shown ended (squeue lists it, sacct does not show a final state)."""
    shown = _squeue(kube)
    assert shown.get(b) == "PENDING Dependency", shown
    assert a in shown, shown
    sacct = kube.run("sacct", "-X", "-n", "-P", "-j", str(a), "-o", "State").stdout.strip()
    assert sacct in ("RUNNING", "COMPLETING", "PENDING"), sacct
    assert not _pods(kube, b)
    workload = kube.api().get(kinds.JOB, f"b-{b}", kube.namespace)
    assert workload["spec"]["suspend"] is True, workload["spec"]
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{b}", kube.namespace)
    assert record["metadata"]["labels"].get("sbatch-k8s.io/waiting") == "true"


def test_afterany_dependent_waits_through_a_requeue(kube: KubeSlurm, kubelet: Any) -> None:
    kube.env["SBATCHK8S_REQUEUE_DELAY"] = "1"
    kube.script("a.sh", A)
    kube.script("b.sh", B)
    a = submit(kube, "a.sh")
    b = submit(kube, f"--dependency=afterany:{a}", "b.sh")
    wait_until(lambda: _lines(kube, "a-runs.txt") == ["run 0"], WAIT_S, "a's first run")
    (node0,) = _pods(kube, a)
    name = node0["metadata"]["name"]
    kube.api().merge_patch(kinds.POD, name, kube.namespace,
                           {"metadata": {"finalizers": [HOLD]}})

    requeue = kube.start("scontrol", "requeue", str(a))
    try:
        # Node 0 ends the run on the request (its report: CANCELLED, DUE TO JOB REQUEUE);
        # its pod stays, so scontrol requeue waits while the looks below come and go.
        wait_until(lambda: all(_ended(p) for p in _pods(kube, a)), WAIT_S, "a's run ended")
        wait_until(lambda: "DUE TO JOB REQUEUE" in kube.read(f"a-{a}-0.out"), WAIT_S,
                   "the requeue line")
        for _ in range(4):
            _b_still_waits(kube, a, b)
        assert requeue.poll() is None, requeue.communicate()
    finally:
        kube.api().merge_patch(kinds.POD, name, kube.namespace,
                               {"metadata": {"finalizers": None}})
    out, err = requeue.communicate(timeout=WAIT_S)
    assert (requeue.returncode, out, err) == (0, "", "")

    # A runs again (a look releases its begin time); B still waits for that run's end.
    def second_run() -> bool:
        _squeue(kube)
        return _lines(kube, "a-runs.txt") == ["run 0", "run 1"]

    wait_until(second_run, WAIT_S, "a's second run")
    _b_still_waits(kube, a, b)
    (kube.work / "go-1").write_text("")

    def b_ran() -> bool:
        _squeue(kube)
        return bool(_lines(kube, "b.txt"))

    wait_until(b_ran, WAIT_S, "b's run")
    assert _lines(kube, "b.txt") == ["b ran after 2 runs"]
    runs = kube.run("sacct", "-X", "-n", "-P", "-D", "-j", str(a), "-o", "State").stdout
    assert runs.split() == ["REQUEUED", "COMPLETED"], runs
