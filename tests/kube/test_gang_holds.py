"""Holds, begin times and dependencies where a gang scheduler decides: Kueue and Volcano.

Kueue is played by :class:`KueueAdmission`, a minimal admission loop: like Kueue's job
reconciler it manages only Jobs carrying ``kueue.x-k8s.io/queue-name``, notes each such job
it sees (a Workload would be created for it and take its place in the queue) and, while
open, admits it by resuming it (``suspend: false``). A job that waits for its hold, begin
time or dependency must never be seen by it; once released it is queued (``PD (Priority)``)
until admitted, then runs. Volcano is played by the emulated scheduler serving
``schedulerName: volcano``: a held job has its PodGroup but no pods; released, its pods join
the PodGroup and run."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import CONFIG, KubeSlurm, submit
from tests.local.harness import until_exists

pytestmark = pytest.mark.slow

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
RELEASE_LABELS = "sbatch-k8s.io/release-labels"
KUEUE = CONFIG + 'queue = "team"\n'
VOLCANO = CONFIG + 'gang = "volcano"\n'
#: How far ahead ``--begin=now+N`` puts a job: after the slow commands that look at it
#: pending, on a loaded machine too.
BEGIN_S = 20



class KueueAdmission:
    """The admission loop of the module docstring, over one namespace."""

    def __init__(self, kube: KubeSlurm) -> None:
        self.client = kube.api()
        self.namespace = kube.namespace
        self.open = threading.Event()
        self.seen: Set[str] = set()
        self.admitted: List[str] = []
        self.passes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kueue-admission", daemon=True)

    def __enter__(self) -> "KueueAdmission":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            jobs, _ = self.client.list(kinds.JOB, self.namespace, "")
            for job in jobs:
                meta = job["metadata"]
                if not (meta.get("labels") or {}).get(QUEUE_LABEL):
                    continue
                self.seen.add(meta["name"])
                if job["spec"].get("suspend") and self.open.is_set():
                    self.client.merge_patch(kinds.JOB, meta["name"], self.namespace,
                                            {"spec": {"suspend": False}})
                    self.admitted.append(meta["name"])
            self.passes += 1
            self._stop.wait(0.1)

    def wait_passes(self, count: int = 3) -> None:
        """Until the loop has looked ``count`` more times."""
        target = self.passes + count
        wait_until(lambda: self.passes >= target, 30, "the admission loop looked")


@pytest.fixture
def kueue_kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands, with a partition whose jobs Kueue queue ``team`` admits."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=KUEUE)
    yield slurm
    slurm.cleanup()


def _reason(kube: KubeSlurm, job_id: int) -> str:
    out = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%T %r").stdout.strip()
    return out


def _workload(kube: KubeSlurm, name: str) -> Dict[str, Any]:
    found = kube.api().get(kinds.JOB, name, kube.namespace)
    assert found is not None, name
    return found


def _pods(kube: KubeSlurm, job_id: int) -> List[Dict[str, Any]]:
    return kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")


def _out_of_kueue(workload: Dict[str, Any]) -> None:
    """Suspended, without Kueue's label, the label kept aside."""
    meta = workload["metadata"]
    assert workload["spec"]["suspend"] is True
    assert QUEUE_LABEL not in (meta.get("labels") or {})
    assert meta["annotations"][RELEASE_LABELS] == '{"kueue.x-k8s.io/queue-name":"team"}'


def test_held_job_stays_out_of_kueue_until_released(kueue_kube: KubeSlurm,
                                                    kubelet: Any) -> None:
    kube = kueue_kube
    kube.script("held.sh", "#!/bin/sh\n#SBATCH -J held\necho ran > held.txt\n")
    with KueueAdmission(kube) as kueue:
        kueue.open.set()
        job_id = submit(kube, "--hold", "held.sh")
        name = f"held-{job_id}"
        kueue.wait_passes()
        _out_of_kueue(_workload(kube, name))
        assert name not in kueue.seen
        assert _pods(kube, job_id) == []
        assert _reason(kube, job_id) == "PENDING JobHeldUser"

        kueue.open.clear()
        assert kube.run("scontrol", "release", str(job_id)).returncode == 0
        workload = _workload(kube, name)
        assert workload["metadata"]["labels"][QUEUE_LABEL] == "team"
        assert RELEASE_LABELS not in (workload["metadata"].get("annotations") or {})
        assert workload["spec"]["suspend"] is True  # Kueue's to resume, not ours
        assert _reason(kube, job_id) == "PENDING Priority"

        kueue.open.set()
        wait_until(lambda: (kube.work / "held.txt").exists(), 120, "the job ran")
        assert kueue.admitted == [name]


def test_scontrol_hold_takes_a_queued_job_back_from_kueue(kueue_kube: KubeSlurm,
                                                          kubelet: Any) -> None:
    kube = kueue_kube
    kube.script("q.sh", "#!/bin/sh\n#SBATCH -J queued\necho ran > q.txt\n")
    with KueueAdmission(kube) as kueue:
        job_id = submit(kube, "--hold", "q.sh")
        name = f"queued-{job_id}"
        assert kube.run("scontrol", "release", str(job_id)).returncode == 0
        kueue.wait_passes()
        assert name in kueue.seen and _reason(kube, job_id) == "PENDING Priority"

        assert kube.run("scontrol", "hold", str(job_id)).returncode == 0
        _out_of_kueue(_workload(kube, name))
        assert _reason(kube, job_id) in ("PENDING JobHeldUser", "PENDING JobHeldAdmin")
        kueue.open.set()
        kueue.wait_passes()
        assert kueue.admitted == [] and _pods(kube, job_id) == []

        assert kube.run("scontrol", "release", str(job_id)).returncode == 0
        wait_until(lambda: (kube.work / "q.txt").exists(), 120, "the job ran")
        assert kueue.admitted == [name]


def test_dependency_and_begin_on_kueue(kueue_kube: KubeSlurm, kubelet: Any) -> None:
    """The dependent job and the --begin job are queued only once eligible; the dependent
    reads what its upstream wrote (the upstream ends once the test has seen both wait)."""
    kube = kueue_kube
    go = kube.work / "go"
    kube.script("up.sh", f"#!/bin/sh\n#SBATCH -J up\n{until_exists(go)}\n"
                "echo up > up.txt\n")
    kube.script("down.sh", "#!/bin/sh\n#SBATCH -J down\ncat up.txt > down.txt\n")
    kube.script("later.sh", "#!/bin/sh\n#SBATCH -J later\necho later > later.txt\n")
    with KueueAdmission(kube) as kueue:
        kueue.open.set()
        upstream = submit(kube, "up.sh")
        try:
            dependent = submit(kube, f"--dependency=afterok:{upstream}", "down.sh")
            later = submit(kube, f"--begin=now+{BEGIN_S}", "later.sh")
            kueue.wait_passes()
            assert _reason(kube, dependent) == "PENDING Dependency"
            assert _reason(kube, later) == "PENDING BeginTime"
            for name in (f"down-{dependent}", f"later-{later}"):
                _out_of_kueue(_workload(kube, name))
                assert name not in kueue.seen
        finally:
            go.touch()

        def written(name: str) -> bool:
            """The file is there with its line (the shell creates it before writing)."""
            path = kube.work / name
            return path.exists() and path.read_text().endswith("\n")

        def both_ran() -> bool:
            kube.run("squeue")  # a look releases what is due
            return written("down.txt") and written("later.txt")

        wait_until(both_ran, 120, "the dependent and the --begin job ran")
        assert kube.read("down.txt") == "up\n"
        assert f"down-{dependent}" in kueue.admitted and f"later-{later}" in kueue.admitted


@pytest.fixture
def volcano_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An emulated cluster whose scheduler also stands in for Volcano's."""
    from tests.apiserver import EmulatedCluster

    skip_on_real_nodes(request.config, "the emulator's scheduler stands in for Volcano's")
    with EmulatedCluster(scheduler_names=("default-scheduler", "volcano")) as emulated:
        yield emulated


def test_held_volcano_gang_has_its_pod_group_and_no_pods(volcano_cluster: Any,
                                                        tmp_path: Path) -> None:
    from tests.kubelet import TestKubelet

    kube = KubeSlurm(tmp_path, volcano_cluster.kubeconfig, config=VOLCANO)
    try:
        with TestKubelet(volcano_cluster.kubeconfig, nodes=2):
            kube.script("gang.sh", "#!/bin/sh\n#SBATCH -J gang -N 2\nsrun hostname > g.txt\n")
            job_id = submit(kube, "--hold", "gang.sh")
            name = f"gang-{job_id}"
            group = kube.api().get(kinds.POD_GROUP, name, kube.namespace)
            assert group is not None and group["spec"]["minMember"] == 2
            assert _workload(kube, name)["spec"]["suspend"] is True
            assert _pods(kube, job_id) == []
            assert _reason(kube, job_id) == "PENDING JobHeldUser"

            assert kube.run("scontrol", "release", str(job_id)).returncode == 0
            wait_until(lambda: (kube.work / "g.txt").exists() and kube.read("g.txt").count(
                "\n") == 2, 120, "the gang ran")
            pods = _pods(kube, job_id)
            assert len(pods) == 2
            for pod in pods:
                assert pod["spec"]["schedulerName"] == "volcano"
                assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == name
    finally:
        kube.cleanup()
