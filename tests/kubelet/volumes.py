"""Pod volumes materialised as directories on this machine, ready to bind-mount.

Each volume becomes a directory (``<pod dir>/volumes/<name>``) holding what the container
would see. ``emptyDir`` with ``medium: Memory`` lives under /dev/shm (already a tmpfs), so no
mount outlives the kubelet. Volumes backed by storage outside the pod (``persistentVolumeClaim``,
``nfs``, ``hostPath``) map into ``volume_dir`` when the kubelet was given one, shared by every
pod that names the same claim, export or path; without it the pod fails with a clear
``FailedMount`` message. Never the real host path: a test must not write over this machine.

``downwardAPI`` volumes follow the pod: when a running pod's labels or annotations change,
the kubelet's watch calls :func:`refresh_pod_volumes`, which rewrites each file whose content
changed by renaming a new file over it (a reader sees the old content or the new, never a
mix, as with a real kubelet's ``..data`` symlink swap). A real kubelet does this within its
sync period (about a minute by default); this one at once.

Not emulated: ConfigMap/Secret updates after start (files are written once), downward-API
sources inside ``projected`` volumes after start, ``sizeLimit``, ``csi``, ``ephemeral``,
``clusterTrustBundle``, ``image`` volumes.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from tests.kubelet.env import ObjectSource, referenced_data
from tests.kubelet.errors import PrepareError
from tests.kubelet.fields import PodContext, field_value, resource_value

DEFAULT_FILE_MODE = 0o644
ALWAYS_READ_ONLY = ("configMap", "secret", "downwardAPI", "projected")
SERVICE_ACCOUNT_TOKEN_S = 3607


class VolumeSite(NamedTuple):
    """Where a volume lives on this machine and whether containers may write to it."""

    path: str
    read_only: bool


class VolumeDirs(NamedTuple):
    """Roots the kubelet keeps volumes under."""

    pod_dir: str                  # <root>/pods/<uid>: one pod's files
    memory_dir: str               # a directory on a tmpfs (emptyDir medium Memory)
    volume_dir: Optional[str]     # where PVC/NFS/hostPath volumes map; None: not emulated


def _write_file(root: str, relative: str, content: bytes, mode: int,
                fs_group: Optional[int]) -> None:
    """Write ``content`` at ``root/relative`` (a path a pod may not escape from)."""
    if os.path.isabs(relative) or ".." in relative.split("/"):
        raise PrepareError("FailedMount", f"volume item path {relative!r} must be relative "
                           "and must not contain '..'", permanent=True)
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)
    if fs_group is not None:
        os.chown(path, -1, fs_group)
        mode |= (mode & 0o700) >> 3 & 0o040    # group may read what the owner may read
    os.chmod(path, mode)


def set_volume_ownership(root: str, fs_group: int, read_only: bool) -> None:
    """Give a volume to the pod's ``fsGroup`` as a kubelet does (its SetVolumeOwnership):
    everything under ``root`` becomes group ``fs_group`` with the group's read bits (and
    write bits on a writable volume) added; directories also get search and setgid, so files
    created later inherit the group. Symbolic links change group only."""
    mask = 0o440 if read_only else 0o660
    for directory, subdirs, files in os.walk(root):
        for name in [None] + subdirs + files:
            path = directory if name is None else os.path.join(directory, name)
            info = os.lstat(path)
            os.lchown(path, -1, fs_group)
            if stat.S_ISLNK(info.st_mode):
                continue
            extra = mask | (stat.S_ISGID | 0o110 if stat.S_ISDIR(info.st_mode) else 0)
            os.chmod(path, stat.S_IMODE(info.st_mode) | extra)


def _key_files(data: Optional[Dict[str, bytes]], items: List[Mapping[str, Any]],
               default_mode: int, optional: bool, what: str) -> List[Tuple[str, bytes, int]]:
    """``(path, content, mode)`` for a ConfigMap/Secret projection (all keys or ``items``)."""
    if data is None:
        return []
    if not items:
        return [(key, value, default_mode) for key, value in sorted(data.items())]
    files = []
    for item in items:
        key = item["key"]
        if key not in data:
            if optional:
                continue
            raise PrepareError("FailedMount", f"{what}: key {key!r} not found")
        files.append((item["path"], data[key], int(item.get("mode", default_mode))))
    return files


def _downward_files(context: PodContext, items: List[Mapping[str, Any]],
                    default_mode: int) -> List[Tuple[str, bytes, int]]:
    files = []
    for item in items:
        if "fieldRef" in item:
            text = field_value(context, item["fieldRef"]["fieldPath"])
        else:
            ref = item["resourceFieldRef"]
            text = resource_value(context, ref.get("containerName", ""), ref["resource"],
                                  ref.get("divisor"))
        files.append((item["path"], text.encode(), int(item.get("mode", default_mode))))
    return files


def _projection(context: PodContext, source: ObjectSource, kind: str, spec: Mapping[str, Any],
                default_mode: int) -> List[Tuple[str, bytes, int]]:
    """The files one ``configMap``/``secret``/``downwardAPI``/``serviceAccountToken``
    source contributes."""
    meta = context.pod.get("metadata") or {}
    namespace = meta.get("namespace", "default")
    default_mode = int(spec.get("defaultMode", default_mode))
    if kind in ("configMap", "secret"):
        name = spec.get("name") or spec.get("secretName") or ""
        object_kind = kind.lower()
        optional = bool(spec.get("optional"))
        data = referenced_data(source, namespace, object_kind, name, optional, "FailedMount")
        return _key_files(data, spec.get("items") or [], default_mode, optional,
                          f"{object_kind} {namespace}/{name}")
    if kind == "downwardAPI":
        return _downward_files(context, spec.get("items") or [], default_mode)
    if kind == "serviceAccountToken":
        account = (context.pod.get("spec") or {}).get("serviceAccountName") or "default"
        token = source.service_account_token(
            namespace, account, spec.get("audience"),
            int(spec.get("expirationSeconds", SERVICE_ACCOUNT_TOKEN_S)), dict(context.pod))
        if token is None:
            raise PrepareError("FailedMount", f"no token for service account {account!r}")
        return [(spec.get("path", "token"), token.encode(), default_mode)]
    raise PrepareError("FailedMount", f"projected source {kind!r} is not emulated by the "
                       "test kubelet", permanent=True)


def _external_dir(volume: Mapping[str, Any], namespace: str,
                  volume_dir: Optional[str]) -> Tuple[str, bool]:
    """The directory (or file) standing in for a PVC, NFS export or hostPath."""
    name = volume["name"]
    if "persistentVolumeClaim" in volume:
        spec = volume["persistentVolumeClaim"]
        parts = ("pvc", namespace, spec["claimName"])
        read_only = bool(spec.get("readOnly"))
    elif "nfs" in volume:
        spec = volume["nfs"]
        parts = ("nfs", spec["server"], spec["path"].strip("/"))
        read_only = bool(spec.get("readOnly"))
    else:
        spec = volume["hostPath"]
        parts = ("hostpath", spec["path"].strip("/"))
        read_only = False
    if volume_dir is None:
        kind = parts[0]
        raise PrepareError("FailedMount", f"volume {name!r} ({kind}) needs a directory to map "
                           "to: start the test kubelet with --volume-dir", permanent=True)
    path = os.path.join(volume_dir, *parts)
    if "hostPath" in volume and spec.get("type") in ("File", "FileOrCreate"):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "a").close()
    else:
        os.makedirs(path, exist_ok=True)
    return path, read_only


def materialise_volume(context: PodContext, source: ObjectSource, volume: Mapping[str, Any],
                       dirs: VolumeDirs) -> VolumeSite:
    """Create one volume's directory and contents; where it is."""
    name = volume["name"]
    meta = context.pod.get("metadata") or {}
    security = (context.pod.get("spec") or {}).get("securityContext") or {}
    fs_group = security.get("fsGroup")
    fs_group = None if fs_group is None else int(fs_group)
    if any(kind in volume for kind in ("persistentVolumeClaim", "nfs", "hostPath")):
        path, read_only = _external_dir(volume, meta.get("namespace", "default"),
                                        dirs.volume_dir)
        return VolumeSite(path, read_only)
    if "emptyDir" in volume:
        memory = (volume["emptyDir"] or {}).get("medium") == "Memory"
        path = os.path.join(dirs.memory_dir if memory else dirs.pod_dir, "volumes", name)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o777)
        if fs_group is not None:
            set_volume_ownership(path, fs_group, read_only=False)
        return VolumeSite(path, False)
    kind = next((k for k in ALWAYS_READ_ONLY if k in volume), None)
    if kind is None:
        other = sorted(k for k in volume if k != "name")
        raise PrepareError("FailedMount", f"volume {name!r}: type {other} is not emulated by "
                           "the test kubelet", permanent=True)
    spec = volume[kind] or {}
    if kind == "projected":
        default_mode = int(spec.get("defaultMode", DEFAULT_FILE_MODE))
        files = [f for projection in spec.get("sources") or []
                 for k, sub in projection.items()
                 for f in _projection(context, source, k, sub, default_mode)]
    else:
        files = _projection(context, source, kind, spec, DEFAULT_FILE_MODE)
    path = os.path.join(dirs.pod_dir, "volumes", name)
    shutil.rmtree(path, ignore_errors=True)      # a retry starts from scratch
    os.makedirs(path)
    os.chmod(path, 0o755)
    for relative, content, mode in files:
        _write_file(path, relative, content, mode, fs_group)
    if fs_group is not None:
        set_volume_ownership(path, fs_group, read_only=True)
    return VolumeSite(path, True)


def materialise_volumes(context: PodContext, source: ObjectSource,
                        dirs: VolumeDirs) -> Dict[str, VolumeSite]:
    """Every volume of the pod, by name."""
    volumes = (context.pod.get("spec") or {}).get("volumes") or []
    return {volume["name"]: materialise_volume(context, source, volume, dirs)
            for volume in volumes}


def _fs_group(pod: Mapping[str, Any]) -> Optional[int]:
    group = ((pod.get("spec") or {}).get("securityContext") or {}).get("fsGroup")
    return None if group is None else int(group)


def refresh_downward_volumes(context: PodContext, dirs: VolumeDirs) -> List[str]:
    """Bring every ``downwardAPI`` volume of a prepared pod up to date with ``context.pod``
    (its labels and annotations as the API server now has them); the paths rewritten.
    Volumes whose directory is gone (the pod was cleaned up) are left alone."""
    rewritten = []
    for volume in (context.pod.get("spec") or {}).get("volumes") or []:
        if "downwardAPI" not in volume:
            continue
        spec = volume["downwardAPI"] or {}
        root = os.path.join(dirs.pod_dir, "volumes", volume["name"])
        if not os.path.isdir(root):
            continue
        default_mode = int(spec.get("defaultMode", DEFAULT_FILE_MODE))
        for relative, content, mode in _downward_files(context, spec.get("items") or [],
                                                       default_mode):
            path = os.path.join(root, relative)
            try:
                with open(path, "rb") as f:
                    if f.read() == content:
                        continue
            except OSError:
                pass
            head, tail = posixpath.split(relative)
            staged = posixpath.join(head, f"..{tail}.new")
            _write_file(root, staged, content, mode, _fs_group(context.pod))
            os.replace(os.path.join(root, staged), path)
            rewritten.append(path)
    return rewritten


def refresh_pod_volumes(services: Any, worker: Any, pod: Dict[str, Any]) -> List[str]:
    """:func:`refresh_downward_volumes` for ``worker``'s pod, once it is prepared, with the
    kubelet's ``services`` (a :class:`tests.kubelet.lifecycle.PodServices`); the paths
    rewritten. A pod still being prepared is skipped: its next update (or the kubelet's
    periodic relist) catches up."""
    if worker.prepared is None:
        return []
    uid = pod["metadata"]["uid"]
    node = (pod.get("spec") or {}).get("nodeName", "")
    context = PodContext(pod, worker.address, services.host_ip(node), services.allocatable)
    dirs = VolumeDirs(services.pod_dir(uid), services.memory_pod_dir(uid),
                      services.volume_dir)
    try:
        return refresh_downward_volumes(context, dirs)
    except (OSError, PrepareError):
        return []
