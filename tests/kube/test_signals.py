"""scancel --signal, -b, -f and ``scancel <job>.<step>`` on an API server with the test
kubelet: scancel annotates node 0's pod, the kubelet refreshes the pod's downward-API file,
node 0's runtime delivers the request (to the other node's tasks through its control
connection). Every process of the job says which stage of the test a signal reached it in, so
the job's output file shows exactly which processes, on which nodes, each scancel reached."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from sbatch_k8s.runtime.cluster.cancel_requests import ANNOTATION
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id

pytestmark = pytest.mark.slow

#: A job on two nodes: the batch shell and a child of it, and one srun step with a task per
#: node, each trapping USR1 and printing the stage it was reached in (the file ``stage`` in
#: the shared working directory, read with the shell's own ``read``: a ``cat`` child would be
#: killed by a second USR1 sent to the process group). Once the step is over, the script ends.
TRAPS = r"""#!/bin/sh
#SBATCH -J sig -N2 --ntasks-per-node=1
trap 'read s < stage; echo "batch got USR1 in $s"' USR1
sh -c 'trap "read s < stage; echo child got USR1 in \$s" USR1; echo child ready
       while :; do sleep 0.1; done' &
child=$!
srun -l sh -c 'trap "read s < stage; echo task $SLURM_PROCID on $(hostname) got USR1 in \$s" USR1
               echo task $SLURM_PROCID ready; while :; do sleep 0.1; done' &
step=$!
echo batch ready
while kill -0 $step 2>/dev/null; do sleep 0.1; done
echo step over
kill $child
"""
#: Generous: the machine running the tests may be busy.
WAIT_S = 180


def _lines(kube: KubeSlurm, job_id: int) -> List[str]:
    try:
        return kube.read(f"slurm-{job_id}.out").splitlines()
    except FileNotFoundError:
        return []


def _signal_lines(kube: KubeSlurm, job_id: int) -> List[str]:
    return [line for line in _lines(kube, job_id) if "got USR1" in line]


def _set_stage(kube: KubeSlurm, name: str) -> None:
    """Write the stage file atomically (a trap reading it mid-write would see nothing)."""
    fresh = kube.work / "stage.new"
    fresh.write_text(name + "\n")
    os.replace(fresh, kube.work / "stage")


def _stage(kube: KubeSlurm, job_id: int, name: str, *scancel: str,
           expected: List[str]) -> None:
    """Enter stage ``name``, run ``scancel``, wait until ``expected`` lines arrived."""
    _set_stage(kube, name)
    done = kube.run("scancel", *scancel)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done
    wait_until(lambda: set(expected) <= set(_signal_lines(kube, job_id)), WAIT_S,
               f"stage {name}: {expected}")


def test_signals_reach_exactly_the_processes_scancel_names(kube: KubeSlurm,
                                                           kubelet: Any) -> None:
    kube.script("traps.sh", TRAPS)
    _set_stage(kube, "none")
    job_id = submitted_id(kube.run("sbatch", "traps.sh").stdout)
    ready = {"batch ready", "child ready", "0: task 0 ready", "1: task 1 ready"}
    wait_until(lambda: ready <= set(_lines(kube, job_id)), WAIT_S, "every process trapping")
    node = [f"sig-{job_id}-{i}" for i in range(2)]
    tasks = [f"{i}: task {i} on {node[i]} got USR1 in " for i in range(2)]

    _stage(kube, job_id, "steps", "--signal=USR1", str(job_id),
           expected=[t + "steps" for t in tasks])
    _stage(kube, job_id, "batch", "-b", "--signal=USR1", str(job_id),
           expected=["batch got USR1 in batch"])
    _stage(kube, job_id, "full", "-f", "--signal=USR1", str(job_id),
           expected=["batch got USR1 in full", "child got USR1 in full"]
           + [t + "full" for t in tasks])
    _set_stage(kube, "step")
    for _ in range(2):                     # idempotent: the second is a no-op
        done = kube.run("scancel", f"{job_id}.0")
        assert (done.returncode, done.stderr) == (0, ""), done
    wait_until(lambda: kube.run("sacct", "-j", str(job_id), "-X", "-n", "-o", "State")
               .stdout.split() == ["COMPLETED"], WAIT_S, "the job's end")

    seen = Counter(_signal_lines(kube, job_id))
    # -f signals the batch shell's process group, srun included, and srun forwards USR1 to
    # its tasks as Slurm's does: each task may run its trap once or twice in that stage — the
    # forwarded one possibly after the test moved on to the next stage (a busy machine), where
    # nothing else sends USR1 (cancelling a step sends SIGTERM and SIGKILL).
    for task in tasks:
        late = seen.pop(task + "step", 0)
        assert 1 <= seen.pop(task + "full", 0) + late <= 2, seen
    assert seen == Counter([t + "steps" for t in tasks] + [
        "batch got USR1 in batch", "batch got USR1 in full", "child got USR1 in full"])
    out = _lines(kube, job_id)
    cancelled = [line for line in out if re.fullmatch(
        rf"slurmstepd: error: \*\*\* STEP {job_id}\.0 ON {node[0]} CANCELLED AT "
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \*\*\*", line)]
    assert len(cancelled) == 1, out
    assert out[-1] == "step over"
    steps = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State")
    assert f"{job_id}.0|CANCELLED" in steps.stdout.splitlines(), steps.stdout

    pods = kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")
    by_name = {p["metadata"]["name"]: p for p in pods}
    requests = [json.loads((p["metadata"].get("annotations") or {}).get(ANNOTATION, "[]"))
                for p in by_name.values()]
    # Only node 0's pod carries requests: one per scancel, in order.
    assert sorted(len(r) for r in requests) == [0, 5]
    written = max(requests, key=len)
    assert [(r["seq"], r["signal"], r["target"], r.get("step")) for r in written] == [
        (1, 10, "steps", None), (2, 10, "batch", None), (3, 10, "full", None),
        (4, None, "step", 0), (5, None, "step", 0)]


def test_signals_to_jobs_not_running(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("quick.sh", "#!/bin/sh\n#SBATCH -J quick\necho done\n")
    done = kube.run("sbatch", "--wait", "quick.sh", timeout=120)
    job_id = submitted_id(done.stdout)
    signalled = kube.run("scancel", "--signal=USR1", str(job_id))
    assert (signalled.returncode, signalled.stderr) == (
        1, f"scancel: error: Kill job error on job id {job_id}: "
           "Job/step already completing or completed\n")
    step = kube.run("scancel", f"{job_id}.0")
    assert step.returncode == 1 and step.stderr.startswith(
        f"scancel: error: Kill job error on job step id {job_id}.0: "), step.stderr
    held = submitted_id(kube.run("sbatch", "--hold", "quick.sh").stdout)
    pending = kube.run("scancel", "--signal=USR1", str(held))
    assert (pending.returncode, pending.stderr) == (0, "")
    assert kube.run("squeue", "-h", "-j", str(held), "-o", "%T").stdout == "PENDING\n"
    unknown = kube.run("scancel", "--signal=USR1", "999999")
    assert (unknown.returncode, unknown.stderr) == (
        1, "scancel: error: Kill job error on job id 999999: Invalid job id specified\n")


ARRAY_TRAPS = r"""#!/bin/sh
#SBATCH -J arrsig -o arrsig-%a.out
trap 'echo "element $SLURM_ARRAY_TASK_ID got USR1"; exit 0' USR1
echo ready
while :; do sleep 0.1; done
"""


def test_a_signal_to_one_array_element_reaches_that_element_only(kube: KubeSlurm,
                                                                  kubelet: Any) -> None:
    kube.script("arrsig.sh", ARRAY_TRAPS)
    job_id = submitted_id(kube.run("sbatch", "--array=0-1", "arrsig.sh").stdout)

    def ready() -> bool:
        return all((kube.work / f"arrsig-{i}.out").exists()
                   and kube.read(f"arrsig-{i}.out") == "ready\n" for i in range(2))

    wait_until(ready, WAIT_S, "both elements trapping")
    done = kube.run("scancel", "-b", "--signal=USR1", f"{job_id}_1")
    assert (done.returncode, done.stderr) == (0, "")
    wait_until(lambda: kube.read("arrsig-1.out") == "ready\nelement 1 got USR1\n", WAIT_S,
               "element 1 signalled")
    wait_until(lambda: f"{job_id}_1|COMPLETED" in kube.run(
        "sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "JobID,State").stdout.splitlines(),
        WAIT_S, "element 1 completed")
    assert kube.read("arrsig-0.out") == "ready\n"
    assert kube.run("squeue", "-h", "-o", "%i %T").stdout == f"{job_id}_0 RUNNING\n"
    assert kube.run("scancel", str(job_id)).returncode == 0


NOBODY = 65534


def test_another_users_job_is_refused_in_slurms_words(kube: KubeSlurm, kubelet: Any,
                                                      cluster: Any, tmp_path: Path) -> None:
    """Another user is other credentials (the cluster says who), whatever the local uid:
    this process is root, with $USER naming the job's owner."""
    if getattr(cluster, "faults", None) is None:
        pytest.skip("another user's token needs the emulated API server "
                    "(tests/kube/test_multi_user.py uses client certificates on a real one)")
    from tests.kube.test_rbac import kubeconfig

    kube.script("sleepy.sh", "#!/bin/sh\n#SBATCH -J sleepy\nsrun sleep 300\n")
    job_id = submitted_id(kube.run("sbatch", "sleepy.sh").stdout)
    wait_until(lambda: kube.run("squeue", "-h", "-j", str(job_id), "-o", "%T").stdout
               == "RUNNING\n", WAIT_S, "the job running")
    other = kubeconfig(tmp_path / "bob.kubeconfig", cluster.url, "bob",
                       cluster.add_user("bob"))
    env = {"KUBECONFIG": other, "USER": "root", "SBATCHK8S_SERVER": "0"}
    refused = f"scancel: error: Kill job error on job id {job_id}: Access/permission denied\n"
    for args, code, stderr in [
            ((str(job_id),), 210, refused),
            (("--signal=USR1", str(job_id)), 210, refused),
            (("-b", "--signal=USR1", str(job_id)), 210, refused),
            ((f"{job_id}.0",), 218,
             f"scancel: error: Kill job error on job step id {job_id}: Invalid user id\n"),
            (("--signal=USR1", f"{job_id}.0"), 0, "")]:   # silent in Slurm 22.05 too
        done = kube.run("scancel", *args, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (code, "", stderr), args
    assert kube.run("squeue", "-h", "-j", str(job_id), "-o", "%T").stdout == "RUNNING\n"
    pods = kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")
    assert pods and all(ANNOTATION not in (p["metadata"].get("annotations") or {})
                        for p in pods)
    assert kube.run("scancel", str(job_id)).returncode == 0
