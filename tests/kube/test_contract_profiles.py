"""Contract profiles on Kubernetes: the pods of a 2-node job get the chosen platform's
variables beside SLURM_* (the batch script node 0's, each srun task its own pod's), and the
profile travels in the job's ConfigMap (``job.json``), never in its Secret.

Only profiles without fixed-path files run here: the test kubelet's pods share this
machine's root filesystem, where a real pod's ``/job`` or ``/etc/mpi`` would be its own."""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, List

import pytest
import yaml

from tests.kube.harness import KubeSlurm, submitted_id

VOLCANO = """#!/bin/sh
#SBATCH --job-name=vc --nodes=2 --ntasks-per-node=1
echo "batch VC_TASK_INDEX=$VC_TASK_INDEX VC_WORKER_NUM=$VC_WORKER_NUM" \
     "VC_WORKER_HOSTS=$VC_WORKER_HOSTS"
srun --label sh -c 'echo "on $(hostname) VC_TASK_INDEX=$VC_TASK_INDEX RANK=${RANK-unset}"'
"""

PYTORCHJOB = """#!/bin/sh
#SBATCH --job-name=ptj --nodes=2 --ntasks-per-node=1
echo "batch RANK=$RANK WORLD_SIZE=$WORLD_SIZE MASTER_ADDR=$MASTER_ADDR PET_NNODES=$PET_NNODES"
srun --label sh -c 'echo "on $(hostname) RANK=$RANK PET_NODE_RANK=$PET_NODE_RANK"'
"""


@pytest.mark.slow
def test_pods_get_the_platforms_variables(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("ptj.sh", PYTORCHJOB)
    done = kube.run("sbatch", "--wait", "--k8s-contract=pytorchjob", "ptj.sh", timeout=150)
    assert done.returncode == 0, done.stderr
    job = submitted_id(done.stdout)
    out = kube.read(f"slurm-{job}.out").splitlines()
    assert out[0] == f"batch RANK=0 WORLD_SIZE=2 MASTER_ADDR=ptj-{job}-0 PET_NNODES=2", out
    assert sorted(out[1:]) == [f"{i}: on ptj-{job}-{i} RANK={i} PET_NODE_RANK={i}"
                               for i in range(2)], out


@pytest.mark.slow
def test_a_partitions_contract_reaches_the_pods(cluster: Any, kubelet: Any, tmp_path) -> None:
    from tests.kube.harness import CONFIG

    kube = KubeSlurm(tmp_path, cluster.kubeconfig, config=CONFIG + 'contract = "volcano"\n')
    try:
        kube.script("vc.sh", VOLCANO)
        done = kube.run("sbatch", "--wait", "vc.sh", timeout=150)
        assert done.returncode == 0, done.stderr
        job = submitted_id(done.stdout)
        out = kube.read(f"slurm-{job}.out").splitlines()
    finally:
        kube.cleanup()
    hosts = ",".join(f"vc-{job}-{i}.vc-{job}" for i in range(2))  # as Volcano's svc plugin
    assert out[0] == f"batch VC_TASK_INDEX=0 VC_WORKER_NUM=2 VC_WORKER_HOSTS={hosts}", out
    assert sorted(out[1:]) == [f"{i}: on vc-{job}-{i} VC_TASK_INDEX={i} RANK=unset"
                               for i in range(2)], out


def _printed(kube: KubeSlurm, *args: str) -> List[Dict[str, Any]]:
    done = kube.run("sbatch", "--k8s-print=objects", "--k8s-job-id=77", *args, "job.sh")
    assert done.returncode == 0, done.stderr
    return [m for m in yaml.safe_load_all(done.stdout) if m]


def test_k8s_print_shows_the_profile_in_the_config_map_only(tmp_path) -> None:
    kube = KubeSlurm(tmp_path, str(tmp_path / "no-kubeconfig"), namespace="default")
    kube.script("job.sh", "#!/bin/sh\n#SBATCH --nodes=2\nsrun hostname\n")
    plain = _printed(kube)
    profiled = _printed(kube, "--k8s-contract=aistation")
    assert [m["kind"] for m in plain] == [m["kind"] for m in profiled]
    for before, after in zip(plain, profiled):
        if after["kind"] == "ConfigMap":
            job = json.loads(after["data"]["job.json"])
            assert job.pop("contract_profile") == "aistation"
            assert job == json.loads(before["data"]["job.json"])
        elif after["kind"] == "Secret":  # the token is new on every print; nothing else
            assert before["data"].keys() == after["data"].keys() == {"token",
                                                                     "environment.json"}
            assert base64.b64decode(after["data"]["environment.json"]) == \
                base64.b64decode(before["data"]["environment.json"])
            assert b"aistation" not in base64.b64decode(after["data"]["environment.json"])
        else:  # the workload records the options it was given and when; nothing else differs
            notes = after["metadata"].get("annotations", {})
            if "sbatch-k8s.io/options" in notes:
                assert notes["sbatch-k8s.io/options"].endswith(" --k8s-contract=aistation")
            for key in ("sbatch-k8s.io/options", "sbatch-k8s.io/option-sources",
                        "sbatch-k8s.io/submit-time"):
                notes.pop(key, None)
                before["metadata"].get("annotations", {}).pop(key, None)
            assert after == before, after["kind"]
