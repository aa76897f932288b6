"""``sbatch`` and ``squeue`` inside a job, over HTTPS, as the job's ServiceAccount.

The emulated API server speaks TLS and authorizes by RBAC (``deploy/rbac.yaml`` applied);
the test kubelet mounts the pods' API-access volume (a TokenRequest token, ``ca.crt``, the
namespace) and gives them ``KUBERNETES_SERVICE_HOST``/``_PORT``, so the commands inside the
job find the cluster with the kubernetes client's in-cluster configuration, as in a real
pod, and use the configuration the job carries. The pods' ``PATH`` has this checkout's
commands (the test image is this machine), so the shims hand ``sbatch`` and questions about
other jobs to them. A partition without the ServiceAccount gets one line, no traceback.
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import CONFIG, KubeSlurm, submit
from tests.kube.test_rbac import apply, policy_documents, rbac_documents
from tests.local.harness import BIN

pytestmark = pytest.mark.slow

NAMESPACE = "default"
JOB_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:sbatch-k8s-job"
#: ``debug`` runs its pods as the job ServiceAccount; ``plain`` gives them none.
PARTITIONS = CONFIG + 'service_account = "sbatch-k8s-job"\n' + """\
[partitions.plain]
image = "python:3.12-slim"
pod_security = "baseline"
service_account = ""
"""


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An emulated cluster over HTTPS authorizing by RBAC, ``deploy/rbac.yaml`` (with
    ``job-commands.yaml``: the commands inside jobs) and the admission policy applied
    (overrides conftest's: the kubelet serves this one)."""
    if request.config.getoption("--with-kube-apiserver"):
        pytest.skip("needs the emulator's record of authorization decisions")
    skip_on_real_nodes(request.config, "needs the emulator's record of authorization decisions")
    from tests.apiserver import EmulatedCluster

    with EmulatedCluster(rbac=True, tls=True) as emulated:
        apply(emulated, rbac_documents("rbac.yaml") + rbac_documents("job-commands.yaml")
              + policy_documents())
        yield emulated


@pytest.fixture
def kubelet(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Two nodes whose pods find this checkout's commands first on ``PATH`` (the kubelet
    gives pods its own: a system Slurm's ``sbatch`` must not answer)."""
    from tests.kubelet import TestKubelet

    monkeypatch.setenv("PATH", os.pathsep.join([str(BIN), str(Path(sys.executable).parent),
                                                os.environ.get("PATH", os.defpath)]))
    with TestKubelet(cluster.kubeconfig, nodes=2) as running:
        yield running


@pytest.fixture
def kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands (as the cluster's administrator) with the two partitions."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=PARTITIONS)
    yield slurm
    slurm.cleanup()


def _accounting(kube: KubeSlurm, *job_ids: int) -> Dict[int, List[str]]:
    """``JobID -> [State, Start, End]`` from sacct."""
    out = kube.run("sacct", "-X", "-n", "-P", "-o", "JobID,State,Start,End", "-j",
                   ",".join(map(str, job_ids))).stdout
    return {int(line.split("|")[0]): line.split("|")[1:] for line in out.splitlines()
            if line.split("|")[0].isdigit()}


def _all_completed(kube: KubeSlurm, *job_ids: int) -> Dict[int, List[str]]:
    rows = _accounting(kube, *job_ids)
    if len(rows) == len(job_ids) and all(r[0] == "COMPLETED" for r in rows.values()):
        return rows
    if any(r[0] in ("FAILED", "CANCELLED", "TIMEOUT") for r in rows.values()):
        raise AssertionError(f"a job ended badly: {rows}")
    return {}


def _both_completed(kube: KubeSlurm, first: int, id_file: str) -> Dict[int, List[str]]:
    """Both rows once ``first`` and the job named in ``id_file`` completed ({} before;
    AssertionError as soon as either ended otherwise)."""
    if not (kube.work / id_file).exists():
        _all_completed(kube, first)          # fails fast when the first one failed
        return {}
    return _all_completed(kube, first, int(kube.read(id_file)))


def _show(kube: KubeSlurm, cluster: Any, *names: str) -> str:
    """The job files and refused requests, for a failing assertion."""
    files = {n: (kube.work / n).read_text() if (kube.work / n).exists() else None
             for n in names}
    return f"files: {files}\nrefused: {cluster.rbac.refused()}"


def test_a_job_submits_its_successor_with_a_dependency_on_itself(
        cluster: Any, kubelet: Any, kube: KubeSlurm) -> None:
    kube.script("next.sh", "#!/bin/sh\n#SBATCH -J next\necho \"next ran\" > next.ran\n")
    kube.script("first.sh", """#!/bin/sh
#SBATCH -J first
#SBATCH -o first.out
squeue -h -j "$SLURM_JOB_ID" -o "%i %T" > own.squeue
next=$(sbatch --parsable --dependency=afterok:"$SLURM_JOB_ID" next.sh) || exit 3
echo "$next" > next.id
squeue -h -j "$next" -o "%i %T %r" > next.squeue || exit 4
sleep 2
""")
    first = submit(kube, "first.sh")
    try:
        rows = wait_until(lambda: _both_completed(kube, first, "next.id"), 180,
                          "both jobs completed")
    except AssertionError:
        raise AssertionError(_show(kube, cluster, "first.out", "next.id", "next.squeue"))
    following = int(kube.read("next.id"))
    assert following > first
    assert kube.read("own.squeue").split() == [str(first), "RUNNING"]
    # asked through the API as the job's ServiceAccount: waiting for its predecessor
    assert kube.read("next.squeue").split() == [str(following), "PENDING", "Dependency"]
    assert kube.read("next.ran") == "next ran\n"
    assert rows[following][1] >= rows[first][2]        # started once the first had ended
    made = {(d.request.user, d.request.resource, d.request.verb)
            for d in cluster.rbac.decisions if d.allowed}
    assert (JOB_ACCOUNT, "jobs", "create") in made        # the sbatch inside the job
    record = next(c for c in cluster.objects("configmaps", NAMESPACE)
                  if c["metadata"]["name"] == f"sbatch-k8s-job-{first}")
    assert "report.json" in record["data"]   # node 0's stdlib client wrote it (HTTPS + CA)
    assert cluster.rbac.refused() == []


def test_a_job_resubmits_itself_once(cluster: Any, kubelet: Any, kube: KubeSlurm) -> None:
    kube.script("again.sh", """#!/bin/sh
#SBATCH -J again
#SBATCH -o again-%j.out
n=$(cat count 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > count
echo "$n $SLURM_JOB_ID" >> runs
if [ "$n" -lt 2 ]; then sbatch again.sh || exit 3; fi
""")
    first = submit(kube, "again.sh")
    try:
        wait_until(lambda: len(kube.read("runs").splitlines()) == 2
                   if (kube.work / "runs").exists() else False, 180, "the second run")
    except AssertionError:
        raise AssertionError(_show(kube, cluster, "runs", f"again-{first}.out"))
    runs = [line.split() for line in kube.read("runs").splitlines()]
    assert [n for n, _ in runs] == ["1", "2"]
    assert int(runs[0][1]) == first and int(runs[1][1]) > first
    second = int(runs[1][1])
    assert f"Submitted batch job {second}" in kube.read(f"again-{first}.out")
    wait_until(lambda: _all_completed(kube, first, second), 120, "both runs completed")
    assert kube.read("count") == "2\n"
    assert cluster.rbac.refused() == []


def test_without_the_job_service_account_the_commands_say_so_in_one_line(
        cluster: Any, kubelet: Any, kube: KubeSlurm) -> None:
    kube.script("other.sh", "#!/bin/sh\necho other\n")
    kube.script("lonely.sh", """#!/bin/sh
#SBATCH -p plain
sbatch other.sh > sbatch.out 2> sbatch.err; echo $? > sbatch.code
squeue -u root > squeue.out 2> squeue.err; echo $? > squeue.code
squeue -h -j "$SLURM_JOB_ID" -o %T > own.squeue
""")
    job = submit(kube, "lonely.sh")
    wait_until(lambda: _all_completed(kube, job), 120, "the job completed")
    for command in ("sbatch", "squeue"):
        assert kube.read(f"{command}.code") == "1\n"
        assert kube.read(f"{command}.out") == ""
        error = kube.read(f"{command}.err")
        assert len(error.splitlines()) == 1 and "Traceback" not in error, error
        assert error.startswith(f"{command}: error: no kubeconfig ")
        assert "service account token" in error and "service_account" in error
    assert kube.read("own.squeue") == "RUNNING\n"     # the runtime still answers this one
    assert [j["metadata"]["name"] for j in cluster.objects("jobs", NAMESPACE)
            if "other" in j["metadata"]["name"]] == []


def test_an_image_without_the_commands_names_what_is_missing(tmp_path: Path) -> None:
    """The runtime alone (no full commands further down PATH): one line, exit 1."""
    from sbatch_k8s.runtime.job_commands import run

    empty = tmp_path / "bin"
    empty.mkdir()
    environ = {"PATH": str(empty), "SBATCHK8S_SPOOL": str(tmp_path),
               "SBATCHK8S_CONTRACT": "slurm"}
    caught = io.StringIO()
    with redirect_stderr(caught):
        code = run("sbatch", ["next.sh"], environ)
    assert code == 1
    assert caught.getvalue() == (
        "sbatch: error: submitting a job inside this job needs the sbatch-k8s commands in "
        "the image (pip install sbatch-k8s); the runtime alone answers only about the job "
        "itself\n")
