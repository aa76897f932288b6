"""sinfo and ``scontrol show node|partition`` on a cluster of 4 test-kubelet nodes (2 with 4
GPUs) with one node cordoned and one job running, compared with what real Slurm 22.05 printed
for the same shape (``tests/data/real-slurm/sinfo-drained``; the shape and the comparison rules
are in :mod:`tests.unit.kubernetes.slurm_shape`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from sbatch_k8s.backends.kubernetes.api.kinds import NODE
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import KubeSlurm, submitted_id
from tests.unit.kubernetes.slurm_shape import (
    CONFIG,
    CPU_NODES,
    GPU_NODES,
    MACHINE_FIELDS,
    NODE_CPUS,
    NODE_GPUS,
    NODE_MEMORY,
    real,
    records,
    renamed,
    without_times,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def shaped(request: pytest.FixtureRequest, cluster: Any, tmp_path: Path
           ) -> Iterator[KubeSlurm]:
    """The shape: a0, a1 with GPUs and b0, b1 without; a 1-CPU job on a0; b1 cordoned."""
    from tests.kubelet import TestKubelet

    skip_on_real_nodes(request.config, "the shape is made of test kubelet nodes (GPUs, "
                       "names, a cordon)")
    with TestKubelet(cluster.kubeconfig, nodes=len(GPU_NODES), name_prefix="a",
                     cpus=NODE_CPUS, memory=NODE_MEMORY, gpus=NODE_GPUS), \
            TestKubelet(cluster.kubeconfig, nodes=len(CPU_NODES), name_prefix="b",
                        cpus=NODE_CPUS, memory=NODE_MEMORY):
        kube = KubeSlurm(tmp_path, cluster.kubeconfig, config=CONFIG)
        try:
            job = submitted_id(kube.run("sbatch", "-w", "a0", "-n1", "--mem-per-cpu=256M",
                                        "-J", "shape", "-o", "/dev/null",
                                        "--wrap", "sleep 300").stdout)
            wait_until(lambda: "RUNNING" in kube.run("squeue", "-h", "-o", "%T").stdout,
                       90, f"job {job} running")
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            # kubectl cordon b1, and the taint the node lifecycle controller adds for it
            kube.api().merge_patch(NODE, "b1", None, {"spec": {"unschedulable": True, "taints": [
                {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                 "timeAdded": stamp}]}})
            yield kube
            kube.run("scancel", str(job))
        finally:
            kube.cleanup()


def _out(kube: KubeSlurm, *argv: str) -> str:
    done = kube.run(*argv)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_sinfo_matches_slurm(shaped: KubeSlurm) -> None:
    for argv, recorded in ((("sinfo",), "sinfo"), (("sinfo", "-s"), "sinfo-s"),
                           (("sinfo", "-l"), "sinfo-l"), (("sinfo", "-t", "idle"), "sinfo-t-idle"),
                           (("sinfo", "-p", "gpu"), "sinfo-p-gpu"),
                           (("sinfo", "-O", "Partition,NodeList,StateLong,CPUsState,Memory,"
                             "Gres,Reason"), "sinfo-O")):
        assert without_times(renamed(_out(shaped, *argv))) == without_times(real(recorded)), argv


def test_sinfo_node_oriented_and_formats(shaped: KubeSlurm) -> None:
    ours = renamed(_out(shaped, "sinfo", "-N", "-l")).splitlines()
    theirs = real("sinfo-N-l").splitlines()
    assert ours[1] == theirs[1]
    keep = (0, 1, 2, 3, 4, 6, 8, 9, 10)       # not S:C:T and TMP_DISK (the machine's)
    assert sorted([line.split()[i] for i in keep] for line in ours[2:]) == \
        sorted([line.split()[i] for i in keep] for line in theirs[2:])
    fmt = "%N|%P|%t|%c|%m|%G|%C|%E"
    ours_o = renamed(_out(shaped, "sinfo", "-N", "-o", fmt)).splitlines()
    theirs_o = [line.rsplit("|", 3)[0] for line in real("sinfo-N-o").splitlines()]
    assert sorted(ours_o) == sorted(theirs_o)
    reasons = renamed(_out(shaped, "sinfo", "-R")).splitlines()
    assert reasons[0] == real("sinfo-R").splitlines()[0]
    assert reasons[1].split()[0::3] == ["cordoned", "n4"]


def test_scontrol_show_node_and_partition_match_slurm(shaped: KubeSlurm) -> None:
    ours = records(renamed(_out(shaped, "scontrol", "show", "node")))
    theirs = records(real("show-node"))
    assert [r[0] for r in ours] == [r[0] for r in theirs]
    for mine, slurms in zip(ours, theirs):
        assert [k for k, _ in mine] == [k for k, _ in slurms if k != "Port"]
        slurm = dict(slurms)
        for key, value in mine:
            if key == "Reason":
                assert value.split(" [")[0] == slurm[key].split(" [")[0]
            elif key not in MACHINE_FIELDS:
                assert (key, value) == (key, slurm[key]), mine[0]
    one = _out(shaped, "scontrol", "-o", "show", "node", "b1")
    assert one.count("\n") == 1 and "State=IDLE+DRAIN " in one and "Reason=cordoned [" in one
    assert renamed(_out(shaped, "scontrol", "show", "partition")) == real("show-partition")
    missing = shaped.run("scontrol", "show", "node", "a0,zz9")
    assert missing.returncode == 1 and missing.stdout.endswith("Node zz9 not found\n")
    assert missing.stdout.startswith("NodeName=a0 ")
    nopart = shaped.run("scontrol", "show", "partition", "nope")
    assert (nopart.returncode, nopart.stdout) == (1, "Partition nope not found\n")


def test_sinfo_makes_the_same_api_calls_whatever_the_node_count(cluster: Any,
                                                                shaped: KubeSlurm) -> None:
    if not hasattr(cluster, "requests"):
        pytest.skip("counts requests, which only the emulated API server records")

    def calls() -> int:
        before = len(cluster.requests)
        _out(shaped, "sinfo")
        return len(cluster.requests) - before

    calls()                                    # the command server is up and connected
    few = calls()
    client = shaped.api()
    for k in range(20):
        client.create({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": f"extra{k}"},
                       "status": {"allocatable": {"cpu": "2", "memory": "1Gi"}}}, None)
    assert "extra[0-19]" in _out(shaped, "sinfo")
    assert calls() == few == 2                 # one LIST of nodes, one of our pods


def _pod_requests(kube: KubeSlurm, job: int) -> Any:
    from sbatch_k8s.backends.kubernetes.api import kinds

    workload = kube.objects(kinds.JOB, f"sbatch-k8s.io/job-id={job}")[0]
    return workload["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]


def test_exclusive_job_takes_the_nodes_read_from_the_cluster(shaped: KubeSlurm) -> None:
    """Partition debug configures no node size: its Ready, schedulable nodes (a0, a1, b0)
    have 4 CPUs, not all have GPUs. Partition gpu configures node_gpus = 4 only."""
    done = shaped.run("sbatch", "--exclusive", "--hold", "-o", "/dev/null", "--wrap", "true")
    assert done.returncode == 0, done.stderr
    assert "its smallest Ready node of 3 offers 4 CPUs (read from the cluster), so each pod " \
        "requests 4 CPUs and 0 GPUs" in done.stderr
    requests = _pod_requests(shaped, submitted_id(done.stdout))
    assert str(requests["cpu"]) == "4" and "nvidia.com/gpu" not in requests
    done = shaped.run("sbatch", "-p", "gpu", "--exclusive", "--hold", "-o", "/dev/null",
                      "--wrap", "true")
    assert done.returncode == 0, done.stderr
    assert "offers 4 CPUs and 4 GPUs (read from the cluster), so each pod requests 4 CPUs " \
        "and 4 GPUs" in done.stderr
    requests = _pod_requests(shaped, submitted_id(done.stdout))
    assert (str(requests["cpu"]), str(requests["nvidia.com/gpu"])) == ("4", "4")
