"""Real nodes (``pytest --with-real-node``): the Kubernetes suite on real kubelets.

The data plane of ``../shared/tools/real-node`` — real kubelets, containerd, runc, CNI and a
cluster DNS, two nodes on this machine, joined to the real API server of ``$KUBECONFIG``
(``../shared/tools/real-k8s``) — runs the pods instead of the test kubelet. Each test still
gets its own namespace (:class:`~tests.kube.real_cluster.RealCluster`).

Every partition of every test's configuration is pointed at those nodes
(:func:`on_real_nodes`): their image, imported into each containerd and never pulled; their
node label and taint; their CPU count. The tests read the files their jobs write where the
test kubelet leaves them — in the test's own directory on this machine — so that directory is
a ``host_path`` volume of every partition, mounted at the same path (the nodes run on this
machine: a host path is this machine's path), which takes ``pod_security = "privileged"``.
A TestKubelet a test starts still registers its own nodes, but they lack the real nodes'
label: no pod of the suite lands there.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any, Dict, List, Mapping, Optional

from tests.kube.real_cluster import RealCluster

#: What ``../shared/tools/real-node`` sets up (its README; overridable by environment).
IMAGE = os.environ.get("SBATCHK8S_REAL_NODE_IMAGE", "local/python3:bookworm")
NODE_LABEL = os.environ.get("NODE_LABEL", "realnode.test/node=true")
NODE_TAINT_KEY = os.environ.get("NODE_TAINT", "realnode.test/dedicated=true:NoSchedule") \
    .split("=", 1)[0]
NODE_CPUS = int(os.environ.get("SBATCHK8S_REAL_NODE_CPUS", "2"))
DEFAULT_KUBECONFIG = "/tmp/k8s-real/kubeconfig"
#: Images of the real nodes themselves (a test asking for one keeps it: the torch image).
LOCAL_IMAGES = "local/"
TORCH_IMAGE = "local/torch:bookworm"
READY_WAIT_S = 30.0


def skip_on_real_nodes(config: Any, why: str) -> None:
    """Skip a test whose own fixtures run pods on the test kubelet (an emulated cluster made
    for it, or users whose restricted pods may not mount the test directory): on real nodes
    every partition is pinned to nodes that cluster does not have. ``why`` says which."""
    import pytest

    if config.getoption("--with-real-node", default=False):
        pytest.skip(f"not on real nodes: {why}")


def kubeconfig() -> str:
    """The real API server's admin kubeconfig: ``$KUBECONFIG``, else real-k8s's."""
    return os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def ready_node_names(cluster: RealCluster) -> List[str]:
    """The Ready nodes carrying the real-node label."""
    from kubernetes import client

    key, _, value = NODE_LABEL.partition("=")
    nodes = client.CoreV1Api(cluster.api_client()).list_node(label_selector=f"{key}={value}")
    return [n.metadata.name for n in nodes.items
            if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])]


class RealNodes:
    """What the test kubelet fixture gives, for real nodes: their names, and the drain
    (pods end on their own kubelets, once the test's namespace is deleted)."""

    def __init__(self, cluster: RealCluster) -> None:
        self.cluster = cluster
        deadline = time.monotonic() + READY_WAIT_S
        while True:
            self.node_names = ready_node_names(cluster)
            if self.node_names or time.monotonic() > deadline:
                break
            time.sleep(1.0)

    def __enter__(self) -> "RealNodes":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cluster.drain()


def _toml_value(value: Any) -> str:
    """``value`` as TOML (the types a partition's configuration holds)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}"
                                for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def dump_config(config: Mapping[str, Any]) -> str:
    """A configuration (as parsed) written back as TOML."""
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in config.items()
             if k != "partitions"]
    for name, partition in (config.get("partitions") or {}).items():
        lines.append(f"[partitions.{_toml_key(name)}]")
        volumes = partition.get("volumes") or []
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in partition.items()
                  if k != "volumes"]
        for volume in volumes:
            lines.append(f"[[partitions.{_toml_key(name)}.volumes]]")
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in volume.items()]
    return "\n".join(lines) + "\n"


def on_real_nodes(config_text: str, shared_dir: str,
                  image: Optional[str] = None) -> str:
    """``config_text`` with every partition running on the real nodes, ``shared_dir`` a
    volume of each (see the module docstring; "" for none: a test of unshared files)."""
    try:
        import tomllib                      # type: ignore[import-not-found]
    except ImportError:                     # Python < 3.11
        import tomli as tomllib             # type: ignore[no-redef]

    config: Dict[str, Any] = tomllib.loads(config_text)
    key, _, value = NODE_LABEL.partition("=")
    for partition in (config.get("partitions") or {}).values():
        if not str(partition.get("image") or "").startswith(LOCAL_IMAGES):
            partition["image"] = image or IMAGE
        partition["image_pull_policy"] = "Never"
        partition["node_selector"] = dict(partition.get("node_selector") or {}, **{key: value})
        partition["tolerations"] = list(partition.get("tolerations") or []) + [
            {"key": NODE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
        partition.setdefault("node_cpus", NODE_CPUS)
        partition["pod_security"] = "privileged"
        if not shared_dir:
            continue
        volumes = [v for v in partition.get("volumes") or []
                   if not str(shared_dir).startswith(str(v.get("mount_path")))]
        partition["volumes"] = volumes + [{"name": "test-dir", "mount_path": str(shared_dir),
                                           "host_path": str(shared_dir)}]
    return dump_config(config)
