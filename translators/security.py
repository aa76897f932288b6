"""Pods a secure cluster admits: which Pod Security Standard a partition's pods pass, and
whose uid their tasks run as.

Two tables. :data:`POD_SECURITY` (the partition's ``pod_security``), from the strictest:

* ``restricted`` (the default): the pod must run as a non-root uid (``runAsNonRoot``) under
  the container runtime's seccomp profile; the container cannot gain privileges
  (``allowPrivilegeEscalation: false``, which also disarms setuid programs such as sudo)
  and drops every capability. Partition volumes must be PersistentVolumeClaims: an NFS
  export is given as a PersistentVolume and its claim (:data:`VOLUME_SOURCES`).
* ``baseline``: the pods of a cluster that needs root containers: no hardening fields, the
  image's own user unless ``run_as`` says otherwise; ``nfs`` volumes allowed.
* ``privileged``: as ``baseline``, and ``host_path`` volumes allowed.

:data:`RUN_AS` (the partition's ``run_as``; absent: the level's default):

* ``uid``: ``run_as_uid``/``run_as_gid`` of the partition (1000/1000), whatever the image
  says — a root image still runs, as that uid (``runAsNonRoot`` alone would make the kubelet
  refuse it).
* ``submitter``: the submitting user's uid, gid and supplementary groups
  (``supplementalGroups``), as Slurm runs tasks; the partition's shared volumes then hold
  the user's files with the user's rights, project directories of a secondary group too.
* ``image``: the image's own user. Under ``restricted`` the image must name a numeric
  non-root ``USER``, or the kubelet refuses to start it.

``SLURM_JOB_UID`` and ``SLURM_JOB_USER`` stay the submitter's in every mode: they name the
job's owner, not the process's uid.

**Job files and fsGroup.** Kubernetes cannot give a Secret's or ConfigMap's files an owner:
they belong to root. When the pod's gid is known (``uid`` and ``submitter``), the pod's
``fsGroup`` is that gid, and the kubelet makes every file of the pod's Secret, ConfigMap,
downward-API and emptyDir volumes group-owned by it (adding the group's read bit), and adds
the gid to every container process's groups. The job's token, exported environment, script
and ``job.json`` are then mode 0440 (:func:`job_file_mode`): root and the job's group read
them, no other uid does. With ``run_as = "image"`` the uid is unknown until the pod starts,
so the files stay 0444: readable by whoever the image runs as, and by nothing outside the
pod (the pod's one user owns every process in it). The kubelet applies ``fsGroup`` to the
partition's PersistentVolumes too when their driver manages ownership (block volumes, CSI
drivers with ``fsGroupPolicy: File``; never NFS): ``fsGroupChangePolicy: OnRootMismatch``
limits that to volumes whose root does not already carry the group.

Pure: no I/O; the submitter's ids come from the :class:`parsers.jobspec.SubmitContext`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from parsers.input_errors import submission_failed

if TYPE_CHECKING:
    from parsers.jobspec import SubmitContext
    from translators.config import PartitionConfig

RESTRICTED = "restricted"
BASELINE = "baseline"
PRIVILEGED = "privileged"
RUN_AS_UID = "uid"
RUN_AS_SUBMITTER = "submitter"
RUN_AS_IMAGE = "image"
#: The job files' mode when the pod has an ``fsGroup`` (see the module docstring).
GROUP_READ_MODE = 0o440
#: The token's mode when the pod's user is the image's (unknown when rendering).
ANYONE_READ_MODE = 0o444


@dataclass(frozen=True)
class SecurityLevel:
    """One ``pod_security`` value: ``rank`` orders levels from the strictest (0);
    ``hardened``: the pods carry the restricted profile's fields; ``default_run_as``: the
    ``run_as`` of a partition that sets none."""

    name: str
    rank: int
    hardened: bool
    default_run_as: str


POD_SECURITY: Dict[str, SecurityLevel] = {
    RESTRICTED: SecurityLevel(RESTRICTED, 0, True, RUN_AS_UID),
    BASELINE: SecurityLevel(BASELINE, 1, False, RUN_AS_IMAGE),
    PRIVILEGED: SecurityLevel(PRIVILEGED, 2, False, RUN_AS_IMAGE),
}

#: ``run_as`` value → what it means (for messages and docs).
RUN_AS: Dict[str, str] = {
    RUN_AS_UID: "the partition's run_as_uid and run_as_gid",
    RUN_AS_SUBMITTER: "the submitting user's uid and gid",
    RUN_AS_IMAGE: "the image's own user",
}

#: A partition volume's source key → (its Kubernetes volume type, the strictest level
#: that admits it).
VOLUME_SOURCES: Dict[str, Tuple[str, str]] = {
    "pvc": ("persistentVolumeClaim", RESTRICTED),
    "nfs": ("nfs", BASELINE),
    "host_path": ("hostPath", PRIVILEGED),
}

_FIX = {
    "nfs": 'give the export as a PersistentVolume and name its claim in pvc, or set '
           'pod_security = "baseline"',
    "host_path": 'give the directory as a PersistentVolume and name its claim in pvc, or set '
                 'pod_security = "privileged"',
}


def security_level(partition: "PartitionConfig") -> SecurityLevel:
    """The partition's :class:`SecurityLevel`."""
    return POD_SECURITY[partition.pod_security]


def run_as_mode(partition: "PartitionConfig") -> str:
    """The partition's ``run_as``, or its level's default."""
    return partition.run_as or security_level(partition).default_run_as


def partition_security_problems(partition: "PartitionConfig", where: str) -> List[str]:
    """What in ``partition`` (spelled ``where``: ``partitions.gpu``) its ``pod_security``
    does not admit, one message each."""
    level = security_level(partition)
    problems = []
    for i, volume in enumerate(partition.volumes):
        for source, (kind, strictest) in VOLUME_SOURCES.items():
            if getattr(volume, source) and POD_SECURITY[strictest].rank > level.rank:
                problems.append(
                    f"{where}.volumes[{i}] ({volume.name}): {kind} volumes break the "
                    f"{level.name} Pod Security Standard (pod_security = \"{level.name}\"): "
                    f"{_FIX[source]}")
    if level.hardened and run_as_mode(partition) == RUN_AS_UID and partition.run_as_uid == 0:
        problems.append(f"{where}.run_as_uid: uid 0 is root, which pod_security = "
                        f"\"{level.name}\" does not admit")
    return problems


def run_as_ids(partition: "PartitionConfig",
               context: "SubmitContext") -> Optional[Tuple[int, int]]:
    """``(uid, gid)`` the pods run as, or None for the image's user."""
    mode = run_as_mode(partition)
    if mode == RUN_AS_UID:
        return partition.run_as_uid, partition.run_as_gid
    if mode == RUN_AS_SUBMITTER:
        return context.uid, context.gid
    return None


def check_run_as(partition: "PartitionConfig", context: "SubmitContext") -> None:
    """Refuse a job whose pods could not start: a root submitter on a partition that runs
    jobs as their submitter under a level that admits no root pod."""
    ids = run_as_ids(partition, context)
    level = security_level(partition)
    if level.hardened and ids is not None and ids[0] == 0:
        raise submission_failed(
            f"Access/permission denied (partition {partition.name} runs jobs as their "
            f"submitter, and the {level.name} Pod Security Standard admits no pod running "
            "as root, uid 0)")


def run_as_warnings(partition: "PartitionConfig", context: "SubmitContext", workdir: str,
                    shared: bool) -> List[str]:
    """A warning when the tasks write into a shared working directory as another uid than
    the submitter's (``run_as = "uid"``): the files there are not the user's."""
    ids = run_as_ids(partition, context)
    if not shared or run_as_mode(partition) != RUN_AS_UID or ids is None \
            or ids[0] == context.uid:
        return []
    return [f"partition {partition.name} runs tasks as uid {ids[0]} (run_as_uid), not as "
            f"uid {context.uid}: what they write in {workdir} belongs to uid {ids[0]}, and "
            "they may write only where that uid may"]


def pod_security_context(partition: "PartitionConfig",
                         context: "SubmitContext") -> Dict[str, Any]:
    """The pod's ``securityContext`` (empty: none)."""
    level = security_level(partition)
    security: Dict[str, Any] = {}
    if level.hardened:
        security["runAsNonRoot"] = True
    ids = run_as_ids(partition, context)
    if ids is not None:
        uid, gid = ids
        security.update(runAsUser=uid, runAsGroup=gid)
        if run_as_mode(partition) == RUN_AS_SUBMITTER:
            others = sorted(set(context.groups) - {gid})
            if others:
                security["supplementalGroups"] = others
        security.update(fsGroup=gid, fsGroupChangePolicy="OnRootMismatch")
    if level.hardened:
        security["seccompProfile"] = {"type": "RuntimeDefault"}
    return security


def container_security_context(partition: "PartitionConfig",
                               read_only_root: bool) -> Dict[str, Any]:
    """The main container's ``securityContext`` (empty: none)."""
    security: Dict[str, Any] = {}
    if security_level(partition).hardened:
        security["allowPrivilegeEscalation"] = False
        security["capabilities"] = {"drop": ["ALL"]}
    if read_only_root:
        security["readOnlyRootFilesystem"] = True
    return security


def job_file_mode(partition: "PartitionConfig") -> int:
    """Mode of the job's Secret and ConfigMap files (see the module docstring): group-read
    when the pod has an ``fsGroup``, else readable by any uid inside the pod."""
    return GROUP_READ_MODE if run_as_mode(partition) != RUN_AS_IMAGE else ANYONE_READ_MODE
