"""Volumes and mounts of every pod, and the working directory.

Every pod mounts the same fixed set (:data:`FIXED_MOUNTS`): the shared runtime zipapp, the
job's ConfigMap (script and ``job.json``), the job's Secret (token and exported environment),
a downward-API file of the pod's scancel requests, a memory-backed ``/dev/shm`` and a writable
scratch directory for the runtime's spool; with ``--container-readonly`` (a read-only root
filesystem) also a writable ``/tmp``
(:func:`fixed_mounts`). Then the partition's shared volumes at their ``mount_path``; then
``--container-mounts SRC:DST[:ro]``, each a sub-path of the partition volume holding SRC.

The working directory is ``--chdir`` (relative to the submit directory) or the submit
directory. The pod's ``workingDir`` is set only when it lies on a shared volume: a missing
directory would stop the container from starting, while the runtime can fall back as
slurmstepd does ("going to /tmp instead"). When it is not shared, the job description says
``stream_output`` and node 0 copies the batch output files into its pod log
(``sbatch_k8s.runtime.log_stream.tee``), from which clients write them into the directory.
"""

from __future__ import annotations

from parsers.vocabulary import (
    RUNTIME_DIR,
    JOB_DIR,
    TOKEN_DIR,
    CONTROL_DIR,
    CONTROL_KEY,
)
import posixpath
from typing import Any, Dict, List, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.jobspec import JobSpec, SubmitContext
from translators.config import PartitionConfig, VolumeConfig
from parsers.vocabulary import SCANCEL_REQUESTS
from translators.security import job_file_mode

SHM_DIR = "/dev/shm"
#: The runtime's spool (its ``SBATCHK8S_SPOOL`` default): the script's copy, step records.
SPOOL_DIR = "/tmp/sbatch-k8s"
TMP_DIR = "/tmp"

Mount = Tuple[str, str, str]

#: The mounts every pod has: (volume name, mount path, source). Sources: ``runtime`` (the
#: shared ConfigMap ``sbatch-k8s-runtime-<hash>``), ``job`` (ConfigMap ``<name>``), ``token``
#: (Secret ``<name>``; both of mode :func:`translators.security.job_file_mode`), ``shm``
#: (emptyDir in memory, partition's ``shm_size``), ``scratch`` (a writable emptyDir on the
#: node's disk), ``control`` (a downwardAPI volume: the pod's scancel requests,
#: :data:`CONTROL_KEY`).
FIXED_MOUNTS: Tuple[Mount, ...] = (
    ("sbatch-k8s-runtime", RUNTIME_DIR, "runtime"),
    ("sbatch-k8s-job", JOB_DIR, "job"),
    ("sbatch-k8s-token", TOKEN_DIR, "token"),
    ("sbatch-k8s-control", CONTROL_DIR, "control"),
    ("sbatch-k8s-shm", SHM_DIR, "shm"),
    ("sbatch-k8s-spool", SPOOL_DIR, "scratch"),
)
#: With a read-only root filesystem, programs still need a writable ``/tmp``.
READ_ONLY_ROOT_MOUNTS: Tuple[Mount, ...] = (("sbatch-k8s-tmp", TMP_DIR, "scratch"),)
_WRITABLE_SOURCES = ("shm", "scratch")


def fixed_mounts(job: JobSpec) -> Tuple[Mount, ...]:
    """The fixed mounts of ``job``'s pods: :data:`FIXED_MOUNTS`, led by a writable ``/tmp``
    with ``--container-readonly`` (unless ``--container-mounts`` mounts something there)."""
    if job.container_writable is False and not any(
            posixpath.normpath(dst) == TMP_DIR for _, dst, _ in job.container_mounts):
        return READ_ONLY_ROOT_MOUNTS + FIXED_MOUNTS
    return FIXED_MOUNTS


def runtime_config_map_name(runtime_hash: str) -> str:
    """The shared, content-addressed ConfigMap holding the runtime zipapp."""
    return f"sbatch-k8s-runtime-{runtime_hash}"


def _fixed_source(source: str, name: str, runtime_hash: str,
                  partition: PartitionConfig) -> Dict[str, Any]:
    if source == "runtime":
        return {"configMap": {"name": runtime_config_map_name(runtime_hash)}}
    if source == "job":
        return {"configMap": {"name": name, "defaultMode": job_file_mode(partition)}}
    if source == "token":
        return {"secret": {"secretName": name, "defaultMode": job_file_mode(partition)}}
    if source == "scratch":
        return {"emptyDir": {}}
    if source == "control":
        path = f"metadata.annotations['{SCANCEL_REQUESTS}']"
        return {"downwardAPI": {"items": [{"path": CONTROL_KEY,
                                           "fieldRef": {"fieldPath": path}}]}}
    shm: Dict[str, Any] = {"medium": "Memory"}
    if partition.shm_size:
        shm["sizeLimit"] = partition.shm_size
    return {"emptyDir": shm}


def _partition_source(volume: VolumeConfig) -> Dict[str, Any]:
    if volume.pvc:
        claim: Dict[str, Any] = {"claimName": volume.pvc}
        if volume.read_only:
            claim["readOnly"] = True
        return {"persistentVolumeClaim": claim}
    if volume.nfs:
        nfs: Dict[str, Any] = dict(volume.nfs)
        if volume.read_only:
            nfs["readOnly"] = True
        return {"nfs": nfs}
    return {"hostPath": {"path": volume.host_path}}


def pod_volumes(name: str, runtime_hash: str, partition: PartitionConfig,
                job: JobSpec) -> List[Dict[str, Any]]:
    """The pod's ``volumes``: the fixed ones, then the partition's."""
    volumes = [dict({"name": volume}, **_fixed_source(source, name, runtime_hash, partition))
               for volume, _, source in fixed_mounts(job)]
    volumes.extend(dict({"name": v.name}, **_partition_source(v)) for v in partition.volumes)
    return volumes


def _mount(volume: str, path: str, read_only: bool, sub_path: Optional[str]) -> Dict[str, Any]:
    mount: Dict[str, Any] = {"name": volume, "mountPath": path}
    if read_only:
        mount["readOnly"] = True
    if sub_path:
        mount["subPath"] = sub_path
    return mount


def _volume_holding(path: str, partition: PartitionConfig) -> Optional[VolumeConfig]:
    """The partition volume whose mount path contains ``path`` (the deepest one)."""
    best: Optional[VolumeConfig] = None
    for volume in partition.volumes:
        root = volume.mount_path.rstrip("/") or "/"
        if path == root or path.startswith(root.rstrip("/") + "/"):
            if best is None or len(root) > len(best.mount_path.rstrip("/")):
                best = volume
    return best


def container_mount_to_manifest(
    source: str, target: str, flags: str, partition: PartitionConfig
) -> Dict[str, Any]:
    """One ``--container-mounts`` entry as a sub-path mount of a partition volume."""
    src = posixpath.normpath(source)
    if not source.startswith("/") or not target.startswith("/"):
        raise SlurmInputError(f"--container-mounts={source}:{target}: paths must be absolute",
                              exit_code=EXIT_SUBMIT_ERROR)
    volume = _volume_holding(src, partition)
    if volume is None:
        raise SlurmInputError(
            f"--container-mounts: {source} is not on a shared volume of partition "
            f"{partition.name}; pods can mount only those", exit_code=EXIT_SUBMIT_ERROR)
    relative = posixpath.relpath(src, volume.mount_path)
    parts = [p for p in (volume.sub_path, "" if relative == "." else relative) if p]
    read_only = volume.read_only or "ro" in flags.replace("+", ",").split(",")
    return _mount(volume.name, posixpath.normpath(target), read_only,
                  "/".join(parts) or None)


def container_mounts(job: JobSpec, partition: PartitionConfig) -> List[Dict[str, Any]]:
    """The main container's ``volumeMounts``: fixed, partition, then ``--container-mounts``."""
    mounts = [_mount(volume, path, source not in _WRITABLE_SOURCES, None)
              for volume, path, source in fixed_mounts(job)]
    mounts.extend(_mount(v.name, v.mount_path, v.read_only, v.sub_path)
                  for v in partition.volumes)
    mounts.extend(container_mount_to_manifest(src, dst, flags, partition)
                  for src, dst, flags in job.container_mounts)
    seen = set()
    for mount in mounts:
        if mount["mountPath"] in seen:
            raise SlurmInputError(f"--container-mounts: {mount['mountPath']} is mounted twice",
                                  exit_code=EXIT_SUBMIT_ERROR)
        seen.add(mount["mountPath"])
    return mounts


def job_workdir(job: JobSpec, context: SubmitContext) -> str:
    """The job's working directory (``--chdir`` joined to the submit directory, or it)."""
    if job.chdir:
        return posixpath.normpath(posixpath.join(context.cwd, job.chdir))
    return context.cwd


def workdir_shared(workdir: str, partition: PartitionConfig) -> bool:
    """Whether a volume of ``partition`` holds ``workdir`` (the pods then write the job's
    files where the submitter reads them)."""
    return _volume_holding(workdir, partition) is not None


def _unshared_warning(job: JobSpec, workdir: str, partition: PartitionConfig) -> str:
    where = (f"the working directory {workdir} is not on a shared volume of partition "
             f"{partition.name}: the job runs in /tmp when the image lacks it")
    if any(name and name.startswith("/dev/") for name in (job.output, job.error)):
        return where + ", and files written there stay inside the pods"
    return (where + "; node 0 copies its output files into its pod log, from which sbatch "
            f"--wait and 'sattach --k8s-output <jobid>' write them into {workdir} while the "
            "pods exist; other files it writes stay inside the pods")


def pod_working_dir(
    job: JobSpec, workdir: str, partition: PartitionConfig
) -> Tuple[Optional[str], Tuple[str, ...]]:
    """The container's ``workingDir`` (None: leave the image's) and a warning when the job's
    working directory is not shared (saying where the output files go instead: node 0's
    pod log, the job description's ``stream_output``). ``--container-workdir`` is the
    container's own path."""
    warnings: Tuple[str, ...] = ()
    shared = workdir_shared(workdir, partition)
    if not shared:
        warnings = (_unshared_warning(job, workdir, partition),)
    if job.container_workdir:
        return posixpath.normpath(posixpath.join(workdir, job.container_workdir)), warnings
    return (workdir if shared else None), warnings
