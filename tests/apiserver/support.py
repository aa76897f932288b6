"""Test helpers: bounded waiting, and a kubelet's API writes done by hand (nodes, pod status)."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, TypeVar

T = TypeVar("T")


def wait_until(probe: Callable[[], Optional[T]], timeout_s: float = 60.0,
               what: str = "condition") -> T:
    """Poll ``probe`` until it returns something truthy; AssertionError after the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)


def node(name: str, cpu: str = "8", memory: str = "32Gi", gpus: int = 0, ready: bool = True,
         labels: Optional[Dict[str, str]] = None, taints: Optional[List[Dict[str, str]]] = None,
         unschedulable: bool = False) -> Dict[str, Any]:
    """A Node as a kubelet registers it."""
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"capacity": allocatable, "allocatable": allocatable,
                       "conditions": [{"type": "Ready",
                                       "status": "True" if ready else "False"}]}}


def pod(name: str, gpus: int = 0, cpu: str = "1", **spec: Any) -> Dict[str, Any]:
    """A one-container pod requesting ``cpu`` and ``gpus``."""
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    container = {"name": "main", "image": "busybox",
                 "resources": {"requests": {"cpu": cpu}, "limits": limits}}
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def finish(core: Any, name: str, namespace: str = "default", exit_code: int = 0,
           ready: bool = False) -> None:
    """Report a pod Succeeded (exit 0) or Failed, as a kubelet does through pods/status."""
    state = {"terminated": {"exitCode": exit_code,
                            "reason": "Completed" if exit_code == 0 else "Error"}}
    core.patch_namespaced_pod_status(name, namespace, {"status": {
        "phase": "Succeeded" if exit_code == 0 else "Failed",
        "containerStatuses": [{"name": "main", "state": state, "ready": ready,
                               "restartCount": 0, "image": "busybox", "imageID": ""}]}})


def run(core: Any, name: str, namespace: str = "default") -> None:
    """Report a pod Running and Ready."""
    core.patch_namespaced_pod_status(name, namespace, {"status": {
        "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
