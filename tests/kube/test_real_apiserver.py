"""What only a real kube-apiserver can show (``pytest --with-kube-apiserver``; skipped on the
emulated tier): the operators' CRDs install, and every target's object is stored as sbatch made
it for the server's version — no field pruned by a CRD's structural schema, none dropped
because its feature gate is off; the real Job controller's pods carry
what the runtime relies on; ``pods/log`` reaches the test kubelet through the API server.

The JobSet, PyTorchJob and MPIJob operators are not there, so their objects stay pending.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest
import yaml

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit, submitted_id
from tests.kube.real_cluster import CEL_NAMESPACE_ESCAPED_BEFORE, TARGET_CRDS, load_crd

pytestmark = pytest.mark.slow

INDEX = "batch.kubernetes.io/job-completion-index"


@pytest.fixture(autouse=True)
def real_only(request: pytest.FixtureRequest) -> None:
    if not request.config.getoption("--with-kube-apiserver"):
        pytest.skip("needs a real API server (--with-kube-apiserver)")


def _paths(node: Any, prefix: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    """Every leaf's path in a JSON document (list positions included)."""
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list) and node:
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))
    else:
        yield prefix


def _server_minor(kube: KubeSlurm) -> int:
    return kube.api().server_minor()


def test_the_target_crds_are_established_with_cel_rules_the_server_compiles(
        cluster: Any, kube: KubeSlurm) -> None:
    from kubernetes import client

    crds = client.ApiextensionsV1Api(cluster.api_client())
    for file_name in TARGET_CRDS:
        name = load_crd(file_name)["metadata"]["name"]
        stored = crds.read_custom_resource_definition(name)
        assert {(c.type, c.status) for c in stored.status.conditions} >= {
            ("Established", "True"), ("NamesAccepted", "True")}, name
    jobset = crds.read_custom_resource_definition("jobsets.jobset.x-k8s.io").to_dict()
    rules = [r["rule"] for r in _rules(jobset)]
    escaped = [r for r in rules if "__namespace__" in r]
    if _server_minor(kube) < CEL_NAMESPACE_ESCAPED_BEFORE:
        assert escaped and not [r for r in rules if ".namespace" in r]
    else:
        assert not escaped


def _rules(node: Any) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = []
    if isinstance(node, dict):
        found += node.get("x_kubernetes_validations") or node.get(
            "x-kubernetes-validations") or []
        for value in node.values():
            found += _rules(value)
    elif isinstance(node, list):
        for value in node:
            found += _rules(value)
    return found


@pytest.mark.parametrize("target,kind", [("indexed-job", kinds.JOB),
                                         ("jobset", kinds.JOBSET),
                                         ("pytorchjob", kinds.PYTORCHJOB),
                                         ("mpijob", kinds.MPIJOB)])
def test_each_target_is_stored_as_sbatch_made_it(kube: KubeSlurm, target: str,
                                                 kind: Any) -> None:
    kube.script("two.sh", "#!/bin/sh\n#SBATCH -J two -N2 --ntasks-per-node=2\nsrun hostname\n")
    job_id = submit(kube, f"--k8s-target={target}", "two.sh")
    stored = kube.api().get(kind, f"two-{job_id}", kube.namespace)
    assert stored is not None and stored["metadata"]["uid"]
    printed = kube.run("sbatch", "--k8s-print=objects", f"--k8s-target={target}",
                       f"--k8s-job-id={job_id}",
                       f"--k8s-kubernetes-version=1.{_server_minor(kube)}", "two.sh")
    assert printed.returncode == 0, printed.stderr
    made = next(d for d in yaml.safe_load_all(printed.stdout)
                if d and d.get("kind") == kind.kind)
    pruned: Set[Tuple[Any, ...]] = set(_paths(made["spec"])) - set(_paths(stored["spec"]))
    assert not pruned, f"the server dropped fields of the {kind.kind}: {sorted(pruned)}"
    if kind is not kinds.JOB:           # no operator runs these; no kubelet runs the Job
        assert kube.run("squeue", "-h", "-o", "%i %T").stdout == f"{job_id} PENDING\n"


def test_the_job_controllers_pods_and_their_logs(kube: KubeSlurm, cluster: Any,
                                                 kubelet: Any) -> None:
    from kubernetes import client

    kube.script("pair.sh", "#!/bin/sh\n#SBATCH -J pair -N2\nsrun --label hostname\n"
                           "sleep 30\n")
    job_id = submitted_id(kube.run("sbatch", "pair.sh").stdout)
    core = client.CoreV1Api(cluster.api_client())

    def both_running() -> List[Any]:
        pods = core.list_namespaced_pod(kube.namespace,
                                        label_selector=f"sbatch-k8s.io/job-id={job_id}").items
        return pods if len(pods) == 2 and all(p.status.phase == "Running"
                                              for p in pods) else []

    pods = sorted(wait_until(both_running, 90, "both pods running"),
                  key=lambda p: p.metadata.labels[INDEX])
    for index, pod in enumerate(pods):
        name = f"pair-{job_id}-{index}"
        assert pod.metadata.name.startswith(f"{name}-")          # the controller's suffix
        assert pod.metadata.annotations[INDEX] == str(index)
        assert "batch.kubernetes.io/job-tracking" in pod.metadata.finalizers
        assert pod.spec.hostname == name
        assert pod.status.pod_ip and not pod.status.pod_ip.startswith("127.")
    output = kube.work / f"slurm-{job_id}.out"
    wait_until(lambda: output.exists() and "0: pair-" in output.read_text(), 60, "srun output")
    log = core.read_namespaced_pod_log(pods[0].metadata.name, kube.namespace)
    assert log and kubelet.logs(kube.namespace, pods[0].metadata.name).startswith(log)
    assert kube.run("scancel", str(job_id)).returncode == 0


def test_a_user_without_the_roles_gets_the_servers_403_in_one_line(kube: KubeSlurm,
                                                                      cluster: Any) -> None:
    """The real RBAC authorizer's refusal, for a ServiceAccount bound to nothing."""
    from kubernetes import client

    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_service_account(kube.namespace, {"metadata": {"name": "nobody"}})
    token = core.create_namespaced_service_account_token(
        "nobody", kube.namespace, {"spec": {"expirationSeconds": 600}}).status.token
    config = yaml.safe_load(open(kube.kubeconfig))
    for user in config["users"]:
        user["user"] = {"token": token}
    nobody = kube.root / "nobody.kubeconfig"
    nobody.write_text(yaml.safe_dump(config))
    kube.script("hello.sh", "#!/bin/sh\nhostname\n")
    done = kube.run("sbatch", "hello.sh", env={"KUBECONFIG": str(nobody)})
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "warning" not in line]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("sbatch: error: Batch job submission failed: ")
    assert "forbidden" in errors[0] and \
        f'User "system:serviceaccount:{kube.namespace}:nobody"' in errors[0], errors[0]
    assert "deploy/rbac.yaml" in errors[0]
    assert kube.everything() == {}
