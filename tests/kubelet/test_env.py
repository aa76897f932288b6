"""Container environment and command line as a kubelet resolves them (tests.kubelet.env):
literal values with $(VAR) expansion, the downward API, ConfigMap and Secret keys, envFrom,
and what happens when a referenced object is missing."""

from __future__ import annotations

import pytest

from tests.kubelet.env import container_argv, expand, resolve_env
from tests.kubelet.errors import PrepareError
from tests.kubelet.fakes import FakeApi, secret
from tests.kubelet.fields import PodContext, parse_quantity

POD = {
    "metadata": {"name": "llm-1234-0-abcde", "namespace": "team", "uid": "u-1",
                 "labels": {"batch.kubernetes.io/job-completion-index": "0", "app": "x"},
                 "annotations": {"sbatch-k8s.io/job-name": "llm"}},
    "spec": {"nodeName": "kubelet-1", "serviceAccountName": "runner",
             "containers": [{"name": "main", "resources": {"limits": {"memory": "2Gi"},
                                                           "requests": {"cpu": "500m"}}}]},
}
CONTEXT = PodContext(POD, "127.10.0.7", "10.11.0.2", {"cpu": "4", "memory": "16Gi"})
API = FakeApi(config_maps={"job": {"data": {"mode": "fast", "bad key": "x"}}},
              secrets={"tok": secret("tok", token="s3cret", user="alice")})


def env_of(*variables: dict, env_from: list = ()) -> dict:
    container = {"name": "main", "env": list(variables), "envFrom": list(env_from)}
    return resolve_env(CONTEXT, container, API)


def field(path: str) -> dict:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}


@pytest.mark.parametrize("path, value", [
    ("metadata.name", "llm-1234-0-abcde"),
    ("metadata.namespace", "team"),
    ("metadata.uid", "u-1"),
    ("metadata.labels['batch.kubernetes.io/job-completion-index']", "0"),
    ("metadata.annotations['sbatch-k8s.io/job-name']", "llm"),
    ("metadata.labels['missing']", ""),
    ("spec.nodeName", "kubelet-1"),
    ("spec.serviceAccountName", "runner"),
    ("status.podIP", "127.10.0.7"),          # the address the pod can bind, not the report
    ("status.hostIP", "10.11.0.2"),
])
def test_field_refs(path, value):
    assert env_of(dict(name="V", **field(path))) == {"V": value}


@pytest.mark.parametrize("resource, divisor, value", [
    ("limits.memory", None, str(2 * 2**30)),
    ("limits.memory", "1Mi", "2048"),
    ("limits.cpu", None, "4"),               # no limit: the node's allocatable
    ("requests.cpu", None, "1"),             # 500m rounded up
    ("requests.cpu", "1m", "500"),
    ("requests.memory", "1Gi", "2"),         # no request: the limit
])
def test_resource_field_refs(resource, divisor, value):
    ref = {"resource": resource}
    if divisor:
        ref["divisor"] = divisor
    assert env_of({"name": "V", "valueFrom": {"resourceFieldRef": ref}}) == {"V": value}


def test_values_expand_earlier_variables_only():
    env = env_of({"name": "A", "value": "a"}, {"name": "B", "value": "$(A)-$(C)-$$(A)"},
                 {"name": "C", "value": "c"})
    assert env == {"A": "a", "B": "a-$(C)-$(A)", "C": "c"}


def test_key_refs_and_env_from_with_prefix():
    env = env_of(
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "job", "key": "mode"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "token"}}},
        env_from=[{"secretRef": {"name": "tok"}, "prefix": "S_"},
                  {"configMapRef": {"name": "job"}}])
    # envFrom first (keys that are not variable names skipped), then env.
    assert list(env.items()) == [("S_token", "s3cret"), ("S_user", "alice"), ("mode", "fast"),
                                 ("MODE", "fast"), ("TOKEN", "s3cret")]


def test_a_missing_object_keeps_the_container_waiting_unless_optional():
    with pytest.raises(PrepareError) as error:
        env_of({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k"}}})
    assert (error.value.reason, error.value.permanent) == ("CreateContainerConfigError", False)
    assert 'configmap "nope" not found' in error.value.message
    assert env_of({"name": "X", "valueFrom": {"secretKeyRef": {
        "name": "nope", "key": "k", "optional": True}}}) == {}
    with pytest.raises(PrepareError, match="couldn't find key nokey"):
        env_of({"name": "X", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "nokey"}}})


def test_base_environment_comes_first_and_can_be_overridden():
    container = {"name": "main", "env": [{"name": "PATH", "value": "/opt/bin:$(PATH)"}]}
    env = resolve_env(CONTEXT, container, API, {"PATH": "/bin", "HOME": "/root"})
    assert env == {"PATH": "/opt/bin:/bin", "HOME": "/root"}


def test_command_and_args_expand_and_a_command_is_required():
    container = {"name": "main", "command": ["sh", "-c"], "args": ["echo $(NAME) $(HOME)"]}
    assert container_argv(container, {"NAME": "x"}) == ["sh", "-c", "echo x $(HOME)"]
    with pytest.raises(PrepareError, match="has no command") as error:
        container_argv({"name": "main", "args": ["x"]}, {})
    assert error.value.permanent


@pytest.mark.parametrize("text, value", [
    ("2", 2), ("500m", 0.5), ("16Gi", 16 * 2**30), ("1k", 1000), ("1e3", 1000), ("1.5", 1.5),
])
def test_quantities(text, value):
    assert parse_quantity(text) == value


def test_expand_leaves_unterminated_references():
    assert expand("$(A", {"A": "x"}) == "$(A"
    assert expand("$A $(A)", {"A": "x"}) == "$A x"
