"""Job ids on a cluster: one counter per cluster, never backwards, never a takeover.

The counter lives in the state namespace (``default`` unless configured), whichever namespace
the kubeconfig context names; a lost counter resumes above the highest record; and a
submission whose id names objects another job holds gets a new id instead of taking them
over (issue 15, item 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from sbatch_k8s.backends.kubernetes.submit.job_ids import COUNTER_NAME
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit

SLEEP = "#!/bin/sh\n#SBATCH --job-name=ids\nsrun true\nsrun true\nsleep 30\n"


def _emulated_only(cluster: Any) -> None:
    if getattr(cluster, "faults", None) is None:
        pytest.skip("needs the emulated API server (another namespace, a reset counter)")


def _counter(kube: KubeSlurm, namespace: str = "default") -> int:
    found = kube.api().get(kinds.CONFIG_MAP, COUNTER_NAME, namespace)
    return int(found["data"]["next"])


def _set_counter(kube: KubeSlurm, value: int) -> None:
    api = kube.api()
    counter = api.get(kinds.CONFIG_MAP, COUNTER_NAME, "default")
    counter["data"]["next"] = str(value)
    api.replace(kinds.CONFIG_MAP, counter, "default")


def test_one_counter_whatever_the_context_namespace(cluster: Any, tmp_path: Path) -> None:
    _emulated_only(cluster)
    from kubernetes import client

    client.CoreV1Api(cluster.api_client()).create_namespace({"metadata": {"name": "team"}})
    config = json.loads(Path(cluster.kubeconfig).read_text())
    config["contexts"][0]["context"]["namespace"] = "team"
    team_config = tmp_path / "team.kubeconfig"
    team_config.write_text(json.dumps(config))
    home = KubeSlurm(tmp_path / "home", cluster.kubeconfig)
    team = KubeSlurm(tmp_path / "team", str(team_config), namespace="team")
    try:
        for slurm in (home, team):
            slurm.script("ok.sh", "#!/bin/sh\ntrue\n")
        first = submit(home, "--hold", "ok.sh")
        second = submit(team, "--hold", "ok.sh")
        third = submit(home, "--hold", "ok.sh")
        assert (first, second, third) == (first, first + 1, first + 2)
        assert team.objects(kinds.CONFIG_MAP, "sbatch-k8s.io/kind=record")
        assert team.api().get(kinds.CONFIG_MAP, COUNTER_NAME, "team") is None
        assert _counter(home) == third + 1
    finally:
        home.cleanup()
        team.cleanup()


def test_a_lost_counter_resumes_above_the_highest_record(kube: KubeSlurm,
                                                          cluster: Any) -> None:
    _emulated_only(cluster)
    kube.script("ok.sh", "#!/bin/sh\ntrue\n")
    ids = [submit(kube, "--hold", "ok.sh") for _ in range(3)]
    kube.api().delete(kinds.CONFIG_MAP, COUNTER_NAME, "default")
    assert submit(kube, "--hold", "ok.sh") == ids[-1] + 1


def test_a_taken_id_is_never_taken_over(kube: KubeSlurm, cluster: Any, kubelet: Any) -> None:
    """The counter set back under a running job (an etcd restore): the next submission
    meets that job's record, takes a new id, and the running job keeps its record and
    steps."""
    _emulated_only(cluster)
    kube.script("sleep.sh", SLEEP)
    running = submit(kube, "sleep.sh")

    def steps() -> str:
        done = kube.run("sacct", "-n", "-P", "-j", str(running), "-o", "JobID,State")
        return done.stdout
    wait_until(lambda: f"{running}.1|COMPLETED" in steps(), 120, "both steps ran")
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{running}", kube.namespace)
    _set_counter(kube, running)
    kube.script("ok.sh", "#!/bin/sh\ntrue\n")
    fresh = submit(kube, "--hold", "ok.sh")
    assert fresh > running
    again = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{running}", kube.namespace)
    assert again["metadata"]["uid"] == record["metadata"]["uid"]
    assert json.loads(again["data"]["record.json"])["name"] == "ids"
    assert f"{running}.1|COMPLETED" in steps()
    assert _counter(kube) == fresh + 1
    names = {o["metadata"]["name"] for o in kube.objects(kinds.SECRET)}
    assert f"ids-{running}" in names
    kube.run("scancel", str(running), str(fresh))
