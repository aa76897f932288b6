"""Pods a secure cluster admits, end to end on an API server with the test kubelet (which
runs each container as its pod's uid, with no_new_privs and no capabilities): under the
restricted default a 2-node job with an srun step runs to completion as a non-root uid, its
token readable by that uid's group only; with ``run_as = "submitter"`` the tasks run as the
uid, gid and groups of whoever ran sbatch (here sbatch itself runs as uid 4242).

The directories the pods use are made for those uids: the test kubelet shares this
machine's files, and pytest's own temporary directories admit root only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import KubeSlurm, skip_unless_importable, submitted_id
from tests.local.harness import BIN, REPO

pytestmark = pytest.mark.slow

TEST_UID = 4242
TEST_GID = 4343
OTHER_GID = 4444          # the submitter's other group
#: What an image offers a non-root user here: this machine's system directories (the
#: checkout's interpreter lives under /root, which only root may enter).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SYSTEM_PYTHON = "/usr/bin/python3"

#: Who submits, in Slurm's terms: the clusters' admins (whose credentials the tests use) are
#: root here, as the local uid used to say; the identity is the cluster's, never the local uid.
AS_ROOT = """\
[users]
local_passwd = true
names = { "emulated-admin" = "root", "admin" = "root" }
"""
#: The same credentials mapped to the submitter TEST_UID (its gid is its uid: [users] uids).
AS_TEST_USER = f"""\
[users]
names = {{ "emulated-admin" = "submitter", "admin" = "submitter" }}
uids = {{ submitter = {TEST_UID} }}
"""

RESTRICTED = f"""\
cluster_name = "kube"
{AS_ROOT}[partitions.debug]
image = "python:3.12-slim"
shm_size = "64Mi"
run_as_uid = {TEST_UID}
run_as_gid = {TEST_GID}
"""

SUBMITTER_PARTITION = """\
[partitions.debug]
image = "python:3.12-slim"
shm_size = "64Mi"
run_as = "submitter"
"""
SUBMITTER = 'cluster_name = "kube"\n' + AS_ROOT + SUBMITTER_PARTITION
TEST_SUBMITTER = 'cluster_name = "kube"\n' + AS_TEST_USER + SUBMITTER_PARTITION

TWO_NODES = """#!/bin/sh
#SBATCH --job-name=secure --nodes=2 --ntasks-per-node=1
echo "batch $(id -u):$(id -g) job uid $SLURM_JOB_UID"
srun --label sh -c 'echo "$(id -u):$(id -g) [$(id -G)] \
$(stat -c %a:%u:%g /etc/sbatch-k8s/token/token) \
$(grep -E "^(NoNewPrivs|CapEff)" /proc/self/status | tr -s "\\t\\n" "  ")"'
"""


def _own(path: Path, uid: int, gid: int) -> None:
    for directory, subdirs, files in os.walk(path):
        for name in [directory] + [os.path.join(directory, n) for n in subdirs + files]:
            os.chown(name, uid, gid)


@pytest.fixture
def make_kube(request: pytest.FixtureRequest, cluster: Any
              ) -> Iterator[Callable[[str], KubeSlurm]]:
    """Commands with ``config`` in a directory every uid may enter (not under pytest's
    root-only temporary tree); their processes are killed and the directory removed after
    the test."""
    skip_on_real_nodes(request.config, "restricted pods may not mount the test directory, "
                       "which the real nodes' partitions share (privileged)")
    root = Path(tempfile.mkdtemp(prefix="sbatch-k8s-podsec-"))
    os.chmod(root, 0o755)
    made: List[KubeSlurm] = []

    def make(config: str) -> KubeSlurm:
        kube = KubeSlurm(root, cluster.kubeconfig, config=config)
        kube.env["PATH"] = os.pathsep.join([str(BIN), SYSTEM_PATH])
        made.append(kube)
        return kube

    yield make
    for kube in made:
        kube.cleanup()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def system_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test kubelet gives containers its own PATH: make it one a non-root uid can use."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} for the pods' non-root user")
    monkeypatch.setenv("PATH", SYSTEM_PATH)


def _task_lines(out: List[str]) -> List[str]:
    return sorted(line for line in out if line[:1].isdigit())


def test_restricted_pods_run_a_two_node_job_as_a_non_root_uid(
        cluster: Any, make_kube: Callable[[str], KubeSlurm], system_path: None) -> None:
    from tests.kubelet import TestKubelet

    kube = make_kube(RESTRICTED)
    _own(kube.work, TEST_UID, TEST_GID)
    kube.script("secure.sh", TWO_NODES)
    with TestKubelet(cluster.kubeconfig, nodes=2):
        done = kube.run("sbatch", "--wait", "secure.sh", timeout=180)
        assert done.returncode == 0, done.stderr
        job_id = submitted_id(done.stdout)
        out = kube.read(f"slurm-{job_id}.out").splitlines()
        pod = kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")[0]
    assert out[0] == f"batch {TEST_UID}:{TEST_GID} job uid 0"
    # fsGroup = the gid: every task has it, and it owns the token (0440, owner root).
    expected = (f"{TEST_UID}:{TEST_GID} [{TEST_GID}] 440:0:{TEST_GID} "
                "CapEff: 0000000000000000 NoNewPrivs: 1 ")
    assert _task_lines(out) == [f"{rank}: {expected}" for rank in range(2)]
    assert os.stat(kube.work / f"slurm-{job_id}.out").st_uid == TEST_UID
    security = pod["spec"]["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] == TEST_UID
    sacct = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert f"{job_id}|COMPLETED|0:0" in sacct.stdout.splitlines(), sacct.stdout
    assert f"{job_id}.0|COMPLETED|0:0" in sacct.stdout.splitlines(), sacct.stdout


#: How a command of this checkout runs as uid TEST_UID.
AS_SUBMITTER: Dict[str, Any] = {"user": TEST_UID, "group": TEST_GID,
                                "extra_groups": [OTHER_GID]}


def _submitter_env(kube: KubeSlurm) -> Dict[str, str]:
    """This machine's python3 with the checkout and this interpreter's site-packages (the
    checkout's interpreter is root's)."""
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
        / "site-packages"
    return dict(kube.env, PYTHONPATH=os.pathsep.join([str(REPO), str(site)]),
                KUBECONFIG=str(kube.root / "kubeconfig"))


def _run_as_submitter(kube: KubeSlurm, *args: str, timeout: float = 180
                      ) -> "subprocess.CompletedProcess[str]":
    """A command of this checkout run by uid TEST_UID."""
    return subprocess.run([SYSTEM_PYTHON, str(BIN / args[0]), *args[1:]], cwd=kube.work,
                          env=_submitter_env(kube), text=True, capture_output=True,
                          timeout=timeout, **AS_SUBMITTER)


def test_run_as_submitter_runs_tasks_as_the_submitting_user(
        cluster: Any, make_kube: Callable[[str], KubeSlurm], system_path: None) -> None:
    from tests.kubelet import TestKubelet

    if sys.version_info[:2] != _system_python_version():
        pytest.skip(f"{SYSTEM_PYTHON} is not this interpreter's version (site-packages)")
    kube = make_kube(TEST_SUBMITTER)
    shutil.copy(cluster.kubeconfig, kube.root / "kubeconfig")
    kube.script("secure.sh", TWO_NODES)
    _own(kube.root, TEST_UID, TEST_GID)
    skip_unless_importable([SYSTEM_PYTHON], _submitter_env(kube), cwd=kube.work, **AS_SUBMITTER)
    with TestKubelet(cluster.kubeconfig, nodes=2):
        done = _run_as_submitter(kube, "sbatch", "--wait", "secure.sh")
        assert done.returncode == 0, done.stderr
        job_id = submitted_id(done.stdout)
        out = kube.read(f"slurm-{job_id}.out").splitlines()
    # The cluster user is TEST_UID in Slurm's terms ([users] uids; its gid is its uid, and
    # it has no other groups here: those of the local account running sbatch decide nothing).
    assert out[0] == f"batch {TEST_UID}:{TEST_UID} job uid {TEST_UID}"
    expected = (f"{TEST_UID}:{TEST_UID} [{TEST_UID}] 440:0:{TEST_UID} "
                "CapEff: 0000000000000000 NoNewPrivs: 1 ")
    assert _task_lines(out) == [f"{rank}: {expected}" for rank in range(2)]
    sacct = _run_as_submitter(kube, "sacct", "-j", str(job_id), "-X", "-n", "-P",
                              "-o", "UID,State")
    assert sacct.stdout == f"{TEST_UID}|COMPLETED\n", sacct.stdout + sacct.stderr


def test_a_root_submitter_is_refused_on_a_submitter_partition(
        make_kube: Callable[[str], KubeSlurm]) -> None:
    kube = make_kube(SUBMITTER)
    kube.script("secure.sh", TWO_NODES)
    done = kube.run("sbatch", "secure.sh")
    assert done.returncode == 1
    assert done.stderr.startswith("sbatch: error: Batch job submission failed: "
                                  "Access/permission denied (partition debug runs jobs as "
                                  "their submitter"), done.stderr
    # Nothing of the job was created (the job-id counter may have counted it).
    assert kube.everything() in ({}, {"ConfigMap": ["sbatch-k8s-job-ids"]})


def _system_python_version() -> Any:
    version = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout
    major, minor = version.strip("()\n").split(", ")
    return int(major), int(minor)


def test_a_batch_file_the_pods_user_cannot_write_fails_the_launch_in_one_line(
        cluster: Any, make_kube: Callable[[str], KubeSlurm], system_path: None) -> None:
    """Submitted from a directory the pods' uid cannot write (seen on real nodes: /usr):
    node 0 cannot open the output file, and why reaches the user in slurmstepd's words —
    sbatch --wait's error line and exit 1, scontrol's SystemComment=, sacct's SystemComment,
    sattach's error (before: exit 1 with no word, sattach silent with 0, the reason only in
    ``kubectl logs``)."""
    from tests.kubelet import TestKubelet

    kube = make_kube(RESTRICTED)
    _own(kube.root, TEST_UID, TEST_GID)
    os.chown(kube.work, 0, 0)           # the job's directory: root's alone to write
    kube.script("secure.sh", TWO_NODES)
    with TestKubelet(cluster.kubeconfig, nodes=2):
        done = kube.run("sbatch", "--wait", "secure.sh", timeout=180)
        job_id = submitted_id(done.stdout)
        why = f"Could not open stdout file {kube.work}/slurm-{job_id}.out: Permission denied"
        assert done.returncode == 1
        assert f"sbatch: error: job {job_id}: {why}\n" in done.stderr, done.stderr
        shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
        assert "JobState=FAILED Reason=JobLaunchFailure" in shown, shown
        assert f"   SystemComment={why} \n" in shown, shown
        sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P",
                         "-o", "State,SystemComment").stdout
        assert sacct == f"FAILED|{why}\n", sacct
        attached = kube.run("sattach", f"{job_id}.0")
        assert attached.returncode == 1
        assert f"sattach: error: job {job_id}: {why}\n" in attached.stderr, attached.stderr
