"""From a pod manifest to what the container runner needs: hostname, user, mounts, defaults.

The runtime defaults stand in for what an image and a container runtime would provide:
``PATH`` is this kubelet's own (there is no image, so commands come from this machine),
``HOSTNAME`` the pod's hostname, ``HOME`` the user's home, and ``KUBERNETES_SERVICE_HOST``
/ ``_PORT`` the API server the kubelet talks to (in a cluster: the ``kubernetes`` Service).
"""

from __future__ import annotations

import os
import pwd
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from tests.kubelet.env import expand
from tests.kubelet.errors import PrepareError
from tests.kubelet.runner import Mount
from tests.kubelet.volumes import VolumeSite

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log"
DEFAULT_GRACE_S = 30
HOSTNAME_MAX = 63


class PodFiles(NamedTuple):
    """Per-pod files the kubelet bind-mounts into every container."""

    hosts: str              # -> /etc/hosts
    hostname: str           # -> /etc/hostname


def pod_hostname(pod: Mapping[str, Any]) -> str:
    """``spec.hostname`` or the pod name, cut to 63 characters as a kubelet cuts it."""
    spec = pod.get("spec") or {}
    name = spec.get("hostname") or (pod.get("metadata") or {}).get("name", "pod")
    return name[:HOSTNAME_MAX].rstrip("-.") or "pod"


def grace_period_s(pod: Mapping[str, Any]) -> int:
    """Seconds between SIGTERM and SIGKILL: the deletion's own grace period if the pod is
    being deleted, else ``terminationGracePeriodSeconds`` (default 30)."""
    meta = pod.get("metadata") or {}
    if meta.get("deletionGracePeriodSeconds") is not None:
        return int(meta["deletionGracePeriodSeconds"])
    value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return DEFAULT_GRACE_S if value is None else int(value)


def identity(pod: Mapping[str, Any], container: Mapping[str, Any]
             ) -> Tuple[Optional[int], Optional[int], List[int]]:
    """``(uid, gid, supplementary groups)`` from the container's and the pod's
    ``securityContext`` (the container's wins); None means root / the user's group."""
    pod_security = (pod.get("spec") or {}).get("securityContext") or {}
    security = container.get("securityContext") or {}

    def pick(field: str) -> Optional[int]:
        value = security.get(field, pod_security.get(field))
        return None if value is None else int(value)

    groups = [int(g) for g in pod_security.get("supplementalGroups") or []]
    if pod_security.get("fsGroup") is not None:
        groups.append(int(pod_security["fsGroup"]))
    uid, gid = pick("runAsUser"), pick("runAsGroup")
    if (security.get("runAsNonRoot", pod_security.get("runAsNonRoot"))) and not uid:
        raise PrepareError("CreateContainerConfigError",
                           "container has runAsNonRoot and image will run as root "
                           "(set runAsUser: the test kubelet has no image user)",
                           permanent=True)
    return uid, gid, groups


def runtime_env(hostname: str, uid: Optional[int],
                server: Tuple[str, int]) -> Dict[str, str]:
    """The variables an image and a runtime give every container before the pod's own."""
    home = "/root"
    if uid:
        try:
            home = pwd.getpwuid(uid).pw_dir
        except KeyError:
            home = "/"
    host, port = server
    return {"PATH": os.environ.get("PATH", DEFAULT_PATH), "HOSTNAME": hostname, "HOME": home,
            "KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": str(port)}


def container_mounts(container: Mapping[str, Any], sites: Mapping[str, VolumeSite],
                     files: PodFiles, termination_file: str,
                     env: Mapping[str, str]) -> List[Mount]:
    """The container's bind mounts: its ``volumeMounts`` (with ``subPath``/``subPathExpr``),
    then /etc/hosts, /etc/hostname and the termination-message file."""
    mounts = []
    for mount in container.get("volumeMounts") or []:
        site = sites.get(mount["name"])
        if site is None:
            raise PrepareError("CreateContainerConfigError",
                               f"volumeMount {mount['name']!r} names no volume of the pod",
                               permanent=True)
        sub = mount.get("subPath") or expand(mount.get("subPathExpr") or "", env)
        source = site.path
        if sub:
            if os.path.isabs(sub) or ".." in sub.split("/"):
                raise PrepareError("CreateContainerConfigError",
                                   f"subPath {sub!r} must be relative without '..'",
                                   permanent=True)
            source = os.path.join(site.path, sub)
            if not os.path.exists(source):
                os.makedirs(source, exist_ok=True)
        mounts.append(Mount(source, mount["mountPath"],
                            bool(mount.get("readOnly")) or site.read_only))
    mounts.append(Mount(files.hosts, "/etc/hosts", False))
    mounts.append(Mount(files.hostname, "/etc/hostname", False))
    path = container.get("terminationMessagePath") or DEFAULT_TERMINATION_MESSAGE_PATH
    mounts.append(Mount(termination_file, path, False))
    return mounts


def restarts_after(policy: str, exit_code: int, is_init: bool) -> bool:
    """Whether a container that exited with ``exit_code`` is started again."""
    if is_init:
        return policy != "Never" and exit_code != 0
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)
