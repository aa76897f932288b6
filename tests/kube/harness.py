"""Slurm commands of this checkout against a Kubernetes API server (emulated or real).

The commands find the cluster the way a user's do: through ``$KUBECONFIG``. Pods are run by
the test kubelet (``tests.kubelet``) on this machine, so a job's files land where the
submitting directory is, as on a cluster with a shared filesystem.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from tests.local.harness import LocalSlurm

#: Partition for the tests: any image (the test kubelet runs the command on this machine).
#: ``baseline``: the pods run as the image's user — root, like the tests themselves — since
#: they share this machine's files, whose test directories only root may enter
#: (``tests/kube/test_pod_security.py`` runs the restricted default). The clusters' admins
#: (the emulator's ``emulated-admin``, the real server's ``admin``), whose credentials the
#: tests use, are this machine's root in Slurm's terms, as the tests' commands used to be.
CONFIG = """\
cluster_name = "kube"
[users]
local_passwd = true
names = { "emulated-admin" = "root", "admin" = "root" }
[partitions.debug]
image = "python:3.12-slim"
shm_size = "64Mi"
pod_security = "baseline"
"""


#: Rewrites every test's configuration for the tier the run is on (``--with-real-node``
#: points each partition at the real nodes: :func:`tests.kube.real_nodes.on_real_nodes`);
#: its second argument is the directory to share with the pods ("" for none).
CONFIG_FILTER: Optional[Callable[[str, str], str]] = None


class KubeSlurm(LocalSlurm):
    """A private set of commands talking to the API server of ``kubeconfig``."""

    def __init__(self, root: Path, kubeconfig: str, config: str = CONFIG,
                 namespace: Optional[str] = None,
                 commands: Optional[Callable[[str], List[str]]] = None,
                 unshared: bool = False) -> None:
        if CONFIG_FILTER is not None:
            config = CONFIG_FILTER(config, "" if unshared else str(root))
        super().__init__(root, config=config, commands=commands)
        del self.env["SBATCHK8S_BACKEND"]
        self.env["KUBECONFIG"] = kubeconfig
        self.env["SBATCHK8S_API_RETRY_S"] = "3"
        self.kubeconfig = kubeconfig
        self.namespace = namespace or context_namespace(kubeconfig)

    def api(self) -> Any:
        """The backend's own client for this cluster (for assertions)."""
        from sbatch_k8s.backends.kubernetes.api.client import connect

        return connect(self.env)

    def objects(self, plural_kind: Any, selector: str = "") -> List[Dict[str, Any]]:
        """Objects of one kind in the namespace, by label selector."""
        items, _ = self.api().list(plural_kind, self.namespace, selector)
        return items

    def everything(self, selector: str = "app.kubernetes.io/managed-by=sbatch-k8s"
                   ) -> Dict[str, List[str]]:
        """Names of every object of every kind we create, by kind (orphan checks)."""
        from sbatch_k8s.backends.kubernetes.api.kinds import KINDS, NAMESPACE, NODE

        found: Dict[str, List[str]] = {}
        client = self.api()
        for kind in KINDS:
            if kind in (NODE, NAMESPACE):
                continue
            items, _ = client.list(kind, self.namespace, selector)
            names = sorted(i["metadata"]["name"] for i in items)
            if names:
                found[kind.kind] = names
        return found


def context_namespace(kubeconfig: str) -> str:
    """The namespace of the kubeconfig's current context (``default`` when it names none)."""
    import yaml

    with open(kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f) or {}
    for entry in config.get("contexts") or []:
        if entry.get("name") == config.get("current-context"):
            return (entry.get("context") or {}).get("namespace") or "default"
    return "default"


def submit(kube: "KubeSlurm", *args: str) -> int:
    """``sbatch ARGS``, which must succeed; the job id."""
    done = kube.run("sbatch", *args)
    assert done.returncode == 0, done.stderr
    return submitted_id(done.stdout)


def submitted_id(stdout: str) -> int:
    """The id in ``Submitted batch job N``."""
    return int(stdout.strip().split()[-1])


def env_without(env: Dict[str, str], *names: str) -> Optional[Dict[str, str]]:
    return {k: v for k, v in env.items() if k not in names}


def skip_unless_importable(python: List[str], env: Dict[str, str], **run: Any) -> None:
    """Skip when ``python`` (run as another uid) cannot import the commands' packages: a
    virtualenv under a private directory (``mktemp -d`` is 0700) is root's alone."""
    probe = subprocess.run([*python, "-c", "import kubernetes, lark, sbatch_k8s"], env=env,
                           capture_output=True, text=True, timeout=60, **run)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"another uid cannot import this checkout's packages ({reason})")
