"""sbatch against an API server: the objects it creates, and nothing half-created on failure."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.kube.harness import KubeSlurm, submitted_id

HELLO = "#!/bin/sh\n#SBATCH --job-name=hello\necho hello from $(hostname)\n"


def _needs_faults(cluster: Any) -> None:
    if getattr(cluster, "faults", None) is None:
        pytest.skip("fault injection needs the emulated API server")


def test_sbatch_creates_the_job_objects_with_owners(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh")
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    assert done.stdout == f"Submitted batch job {job_id}\n"
    found = kube.everything()
    name = f"hello-{job_id}"
    assert found["Job"] == [name]
    assert found["Service"] == [name]
    assert found["Secret"] == [name]
    assert name in found["ConfigMap"]
    assert f"sbatch-k8s-job-{job_id}" in found["ConfigMap"]  # the record sacct reads
    runtime = [n for n in kube.objects(kinds.CONFIG_MAP) if
               n["metadata"]["name"].startswith("sbatch-k8s-runtime-")]
    assert len(runtime) == 1 and runtime[0].get("binaryData")
    job = kube.api().get(kinds.JOB, name, kube.namespace)
    files = kube.api().get(kinds.CONFIG_MAP, name, kube.namespace)
    assert files["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    for kind in (kinds.SECRET, kinds.SERVICE):   # hung on the workload through the ConfigMap
        owners = kube.api().get(kind, name, kube.namespace)["metadata"]["ownerReferences"]
        assert owners[0]["uid"] == files["metadata"]["uid"]
    for kind in (kinds.CONFIG_MAP, kinds.SECRET):
        assert kube.api().get(kind, name, kube.namespace)["immutable"] is True
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{job_id}", kube.namespace)
    assert not record["metadata"].get("ownerReferences")  # it outlives the workload


def test_parsable_and_consecutive_ids(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    first = kube.run("sbatch", "--parsable", "hello.sh")
    second = kube.run("sbatch", "--parsable", "hello.sh")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert int(second.stdout) == int(first.stdout) + 1


def test_no_secret_in_any_config_map(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    secret = "hf_s3cr3t_value_0123456789"
    done = kube.run("sbatch", "--export=ALL,HF_TOKEN=" + secret, "hello.sh",
                    env={"WANDB_API_KEY": secret + "w"})
    assert done.returncode == 0, done.stderr
    for cm in kube.objects(kinds.CONFIG_MAP):
        text = str(cm.get("data")) + str(cm["metadata"])
        assert secret not in text, cm["metadata"]["name"]
    for job in kube.objects(kinds.JOB):
        assert secret not in str(job["metadata"])


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_errors_are_retried(kube: KubeSlurm, cluster: Any, status: int) -> None:
    _needs_faults(cluster)
    cluster.faults.add(method="POST", path=r"/apis/batch/v1/namespaces/default/jobs",
                       status=status, times=2)
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh")
    assert done.returncode == 0, done.stderr
    assert kube.everything()["Job"]


@pytest.mark.parametrize("path", [
    r"/apis/batch/v1/namespaces/default/jobs",
    r"/api/v1/namespaces/default/services",
    r"/api/v1/namespaces/default/secrets",
])
def test_failure_part_way_leaves_nothing(kube: KubeSlurm, cluster: Any, path: str) -> None:
    _needs_faults(cluster)
    kube.script("hello.sh", HELLO)
    assert kube.run("sbatch", "hello.sh").returncode == 0  # the shared objects exist
    before = kube.everything()
    cluster.faults.add(method="POST", path=path, status=422, times=1,
                       body_message="injected: object is invalid")
    done = kube.run("sbatch", "hello.sh")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == ("sbatch: error: Batch job submission failed: "
                                            "injected: object is invalid")
    assert kube.everything() == before


def test_forbidden_names_the_permission(kube: KubeSlurm, cluster: Any) -> None:
    _needs_faults(cluster)
    cluster.faults.add(method="POST", path=r"/apis/batch/v1/namespaces/default/jobs",
                       status=403, times=1,
                       body_message='jobs.batch is forbidden: User "alice" cannot create '
                                    'resource "jobs" in API group "batch" in the namespace '
                                    '"default"')
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh")
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if "warning" not in line]
    assert len(lines) == 1
    assert lines[0].startswith('sbatch: error: Batch job submission failed: jobs.batch is '
                               'forbidden: User "alice" cannot create resource "jobs"')
    assert "deploy/rbac.yaml" in lines[0]
    assert "Job" not in kube.everything()


def test_unreachable_server(kube: KubeSlurm, tmp_path: Any) -> None:
    config = tmp_path / "dead.kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\n"
        "clusters: [{name: dead, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: x}}]\n"
        "contexts: [{name: dead, context: {cluster: dead, user: u}}]\n")
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh", env={"KUBECONFIG": str(config),
                                               "SBATCHK8S_API_RETRY_S": "0.5"})
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "sbatch: error: Batch job submission failed: cannot reach the Kubernetes API server "
        "at http://127.0.0.1:9: Connection refused")


def test_wrong_token(kube: KubeSlurm, tmp_path: Any) -> None:
    """The context's user authenticates with a token the server does not know (whatever
    it used before: a token, or a client certificate on a real server)."""
    import yaml

    with open(kube.kubeconfig) as f:
        text = yaml.safe_load(f)
    context = next(c for c in text["contexts"] if c["name"] == text["current-context"])
    for user in text["users"]:
        if user["name"] == context["context"]["user"]:
            user["user"] = {"token": "wrong-token"}
    config = tmp_path / "wrong.kubeconfig"
    config.write_text(yaml.safe_dump(text))
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh", env={"KUBECONFIG": str(config)})
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "warning" not in line]
    assert len(errors) == 1 and "refused the credentials of kubeconfig context" in errors[0]


def test_missing_namespace(kube: KubeSlurm, tmp_path: Any) -> None:
    config = tmp_path / "ns.toml"
    config.write_text('[partitions.debug]\nnamespace = "nowhere"\nimage = "python:3.12"\n')
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "hello.sh", env={"SBATCHK8S_CONFIG": str(config)})
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        'sbatch: error: Batch job submission failed: namespaces "nowhere" not found')


def test_test_only_creates_nothing(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "--test-only", "-N2", "hello.sh")
    assert done.returncode == 0, done.stderr
    started = re.search(r"sbatch: Job (\d+) to start at .* on nodes hello-(\d+)-\[0-1\] in "
                        r"partition debug\n", done.stderr)   # ids are the cluster's counter's
    assert started and started.group(1) == started.group(2), done.stderr
    assert "Job" not in kube.everything()


def test_fifty_concurrent_submissions_get_fifty_ids(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    procs = [kube.start("sbatch", "--parsable", "hello.sh") for _ in range(50)]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        ids.append(int(out))
    assert sorted(ids) == list(range(min(ids), min(ids) + 50))
    assert len(kube.objects(kinds.JOB)) == 50


def test_verbose_names_backend_and_context(kube: KubeSlurm) -> None:
    kube.script("hello.sh", HELLO)
    done = kube.run("sbatch", "-v", "hello.sh")
    assert done.returncode == 0, done.stderr
    assert "sbatch: backend kubernetes, context " in done.stderr
