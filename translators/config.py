"""The cluster configuration schema: what a site says about its partitions.

Plain frozen dataclasses; :mod:`sbatch_k8s.config_file` reads them from TOML
(``$SBATCHK8S_CONFIG``, ``~/.config/sbatch-k8s/config.toml``, ``/etc/sbatch-k8s/config.toml``)
and :mod:`translators.config_check` checks them against this schema (each key's type comes
from the field's annotation, its meaning from the field's ``doc``). Translators take a
:class:`PartitionConfig` as input, so rendering stays a pure function. The schema is also the
documentation: ``python -m sbatch_k8s.docs_config`` writes ``docs/configuration.md`` from it,
and ``examples/config.toml`` is a complete example.

Example::

    backend = "kubernetes"
    cluster_name = "k8s"
    default_partition = "gpu"
    partition_aliases = { a100 = "gpu", "*" = "gpu" }

    [partitions.gpu]
    namespace = "ml"
    queue = "gpu-queue"                 # Kueue LocalQueue (label kueue.x-k8s.io/queue-name)
    node_selector = { "node.kubernetes.io/instance-type" = "p4d.24xlarge" }
    tolerations = [ { key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" } ]
    gpu_resource = "nvidia.com/gpu"
    image = "nvcr.io/nvidia/pytorch:24.01-py3"
    node_cpus = 96
    node_gpus = 8
    node_memory_mb = 1000000
    def_mem_per_cpu_mb = 8000
    [[partitions.gpu.volumes]]
    name = "home"
    mount_path = "/home"
    nfs = { server = "nfs.example", path = "/export/home" }
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from parsers.platforms.target_names import (
    CONTRACT_PROFILES,
    DEFAULT_CONTRACT_PROFILE,
    DEFAULT_TARGET,
    TARGET_NAMES,
)
from translators.security import POD_SECURITY, RESTRICTED, RUN_AS

BACKENDS = ("local", "kubernetes")
#: Image of the built-in partition (used when no configuration exists): any image with a
#: python3 >= 3.8 runs the runtime.
DEFAULT_IMAGE = "python:3.12-slim"
GANGS = ("kueue", "volcano")
#: The ``partition_aliases`` key that maps every partition name not defined otherwise.
ANY_PARTITION = "*"


class ConfigError(ValueError):
    """The configuration file says something impossible; the message names the key."""


#: ``_key``'s default for a key every table must have.
REQUIRED: Any = object()


def _key(doc: str, default: Any = None, choices: Tuple[str, ...] = (),
         factory: Any = None) -> Any:
    """A configuration key: its default (:data:`REQUIRED`: none), what it means (``doc``)
    and, for a closed set of strings, the ``choices``. The key's TOML type comes from the
    field's annotation."""
    meta = {"doc": doc, "choices": choices}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    if default is REQUIRED:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class VolumeConfig:
    """A shared volume mounted into every pod of a partition at ``mount_path``.

    Exactly one source: ``pvc`` (claim name), ``nfs`` (``{server, path}``) or ``host_path``.
    The submit directory and ``--chdir`` must lie under one of these for the job to find its
    files; ``--container-mounts`` sources are looked up here too.
    """

    name: str = _key("volume name in the pod", REQUIRED)
    mount_path: str = _key("where the volume appears in every pod", REQUIRED)
    pvc: Optional[str] = _key("source: a PersistentVolumeClaim of the job's namespace")
    nfs: Optional[Tuple[Tuple[str, str], ...]] = _key(
        "source: an NFS export, `{ server = \"…\", path = \"…\" }` (needs `pod_security = "
        "\"baseline\"`: under `restricted` give it as a PersistentVolume and use `pvc`)")
    host_path: Optional[str] = _key(
        "source: a directory of the Kubernetes node (needs `pod_security = \"privileged\"`)")
    read_only: bool = _key("mount read-only", False)
    sub_path: Optional[str] = _key("mount only this sub-directory of the source")


@dataclass(frozen=True)
class PartitionConfig:
    """One partition: where its jobs go and what their pods look like."""

    name: str = field(metadata={"doc": "", "internal": True})
    namespace: Optional[str] = _key(
        "namespace of the jobs' objects (absent: the kubeconfig context's, or the pod's); "
        "`{user}` in it is the submitting user's Slurm name as a DNS label (`u-{user}`: a "
        "namespace per user, the strongest isolation)")
    queue: Optional[str] = _key("Kueue LocalQueue (label `kueue.x-k8s.io/queue-name`)")
    priority_class: Optional[str] = _key("PriorityClass of the pods")
    qos_priority_classes: Tuple[Tuple[str, str], ...] = _key(
        "`--qos` value → PriorityClass", ())
    node_selector: Tuple[Tuple[str, str], ...] = _key("node labels every pod requires", ())
    tolerations: Tuple[Tuple[Tuple[str, str], ...], ...] = _key(
        "pod tolerations (`key`, `operator`, `value`, `effect`)", ())
    gpu_resource: str = _key("extended resource of one GPU", "nvidia.com/gpu")
    gpu_type_label: Optional[str] = _key(
        "node label that typed GPU requests (`--gpus=a100:8`) select on")
    gpu_types: Tuple[Tuple[str, str], ...] = _key(
        "GPU type as scripts write it → value of `gpu_type_label`", ())
    gres_resources: Tuple[Tuple[str, str], ...] = _key(
        "other `--gres` names → extended resources", ())
    feature_label_prefix: str = _key(
        "`--constraint` features become node labels with this prefix",
        "feature.sbatch-k8s.io/")
    image: Optional[str] = _key("container image when the job gives no `--container-image`")
    image_pull_policy: Optional[str] = _key("`imagePullPolicy` of the containers")
    target: str = _key("workload kind (`--k8s-target` overrides)", DEFAULT_TARGET,
                       choices=TARGET_NAMES)
    contract: str = _key(
        "contract profile: which platform's variables (and hostfiles, rank table) every node "
        "of the partition's jobs also gets beside `SLURM_*`, so scripts written for that "
        "platform run unchanged (`--k8s-contract` overrides; see README, Contract profiles)",
        DEFAULT_CONTRACT_PROFILE, choices=CONTRACT_PROFILES)
    node_cpus: Optional[int] = _key(
        "CPUs of one node: places tasks, sizes `--exclusive` jobs, refuses bigger requests")
    node_gpus: Optional[int] = _key("GPUs of one node (as `node_cpus`)")
    node_memory_mb: Optional[int] = _key(
        "memory of one node in MiB: `--mem=0` asks for it, bigger requests are refused")
    def_mem_per_cpu_mb: Optional[int] = _key(
        "memory per CPU in MiB of jobs that ask for none (Slurm's DefMemPerCPU): pods "
        "request it and tasks see `SLURM_MEM_PER_CPU`")
    max_time_min: Optional[int] = _key("longest `--time` accepted, in minutes")
    default_time_min: Optional[int] = _key("time limit of jobs without `--time`, in minutes")
    shm_size: Optional[str] = _key("size of the `/dev/shm` emptyDir (a kubelet caps it at the "
                                   "pod's memory limit, and it counts against it)", "1Gi")
    volumes: Tuple[VolumeConfig, ...] = _key(
        "shared volumes (`[[partitions.NAME.volumes]]`, see below)", ())
    service_account: Optional[str] = _key(
        "ServiceAccount of the pods (absent: `sbatch-k8s-job` when it exists in the "
        "namespace, `deploy/rbac.yaml`; `\"\"`: none)")
    scheduler_name: Optional[str] = _key("`schedulerName` of the pods")
    gang: Optional[str] = _key("gang scheduling: `volcano` (PodGroup) or `kueue` (queue)",
                               choices=GANGS)
    volcano_queue: Optional[str] = _key("Volcano queue of the PodGroup (`gang = \"volcano\"`)")
    ttl_seconds_after_finished: Optional[int] = _key(
        "seconds Kubernetes keeps a finished workload", 3600)
    runtime_port: int = _key("port of the node agents in the pods", 6818)
    max_array_size: int = _key("Slurm's MaxArraySize: array indices must be below it", 1001)
    pod_security: str = _key(
        "the Pod Security Standard every pod passes: `restricted` (non-root, no privilege "
        "escalation, no capabilities, RuntimeDefault seccomp; volumes only `pvc`), "
        "`baseline` (root containers allowed, and `nfs` volumes) or `privileged` (also "
        "`host_path` volumes)", RESTRICTED, choices=tuple(POD_SECURITY))
    run_as: Optional[str] = _key(
        "whose uid and gid tasks run as: `uid` (`run_as_uid`/`run_as_gid`), `submitter` "
        "(the submitting user's, and the user's other groups, as Slurm on a shared "
        "filesystem; a root submitter is refused under `restricted`) or `image` (the "
        "image's `USER`). The pod's `fsGroup` "
        "is that gid, so the job's token and files are readable by it only (also applied "
        "by Kubernetes to PersistentVolumes whose driver manages ownership). Absent: `uid` "
        "under `restricted`, else `image`", choices=tuple(RUN_AS))
    run_as_uid: int = _key("uid of the tasks with `run_as = \"uid\"` (not 0 under "
                           "`restricted`)", 1000)
    run_as_gid: int = _key("gid of the tasks with `run_as = \"uid\"`", 1000)

    def gpu_label_value(self, gpu_type: str) -> str:
        """The node label value selecting ``gpu_type`` (the type itself when unmapped)."""
        return dict(self.gpu_types).get(gpu_type, gpu_type)


@dataclass(frozen=True)
class LocalConfig:
    """The local backend: what this machine offers to jobs."""

    cpus: Optional[int] = _key("CPUs handed out (absent: 4 per core, at least 16)")
    gpus: int = _key("pretend GPUs `0..gpus-1`, handed out as `CUDA_VISIBLE_DEVICES`", 0)
    memory_mb: Optional[int] = _key("memory in MiB jobs may ask for (absent: not limited)")
    max_array_size: int = _key("Slurm's MaxArraySize on this machine", 10001)
    runtime_port: int = _key("port of the node agents", 6818)


#: Where cluster user names get their uid when nothing else says (a stable hash of the Slurm
#: user name into ``[uid_min, uid_max]``: above the uids of ordinary local accounts).
HASHED_UID_MIN = 2000000
HASHED_UID_MAX = 2999999
#: The group of Slurm's operators and administrators (they may act on any job); the
#: admission policy of ``deploy/policy.yaml`` names the same group.
OPERATORS_GROUP = "sbatch-k8s:operators"


@dataclass(frozen=True)
class UsersConfig:
    """Who the cluster's users are in Slurm's terms (the Kubernetes backend).

    On a cluster the user is whom the API server authenticates (``SelfSubjectReview``), never
    the local uid or ``$USER``. Its Slurm user name is ``names``' entry, else the cluster
    name made Slurm-safe (lower case; characters other than letters, digits, ``.``, ``-``
    and ``_`` become ``_``; a ServiceAccount ``system:serviceaccount:NS:NAME`` becomes
    ``sa_NS_NAME``). Its uid (and gid) is ``uids``' entry, else with ``local_passwd`` the
    local account of that name's, else a stable hash of the name into ``[uid_min, uid_max]``.
    """

    names: Tuple[Tuple[str, str], ...] = _key(
        "cluster user name → Slurm user name (`{ \"alice@example.com\" = \"alice\" }`)", ())
    uids: Tuple[Tuple[str, int], ...] = _key("Slurm user name → uid (and gid)", ())
    local_passwd: bool = _key(
        "Slurm user names are this machine's user names: uid and gid from its passwd "
        "database when it has the name", False)
    uid_min: int = _key("lowest uid of the hashed range", HASHED_UID_MIN)
    uid_max: int = _key("highest uid of the hashed range", HASHED_UID_MAX)
    operators_group: str = _key(
        "cluster group of Slurm's operators: they may cancel, hold, release and requeue any "
        "job, and list every user's (the admission policy's bindings name the same group)",
        OPERATORS_GROUP)


@dataclass(frozen=True)
class ClusterConfig:
    """The whole configuration file."""

    backend: Optional[str] = _key(
        "`local` or `kubernetes` (absent: kubernetes when a kubeconfig exists, else local; "
        "`$SBATCHK8S_BACKEND` overrides)", choices=BACKENDS)
    cluster_name: str = _key("Slurm's ClusterName (`SLURM_CLUSTER_NAME`, sacct, squeue -M)",
                             "sbatch-k8s")
    default_partition: str = _key("partition of jobs without `-p` (absent: the first one)",
                                  "debug")
    partition_aliases: Tuple[Tuple[str, str], ...] = _key(
        "partition names of other clusters → a partition defined here (`-p gpu` runs in "
        "`a100` with `{ gpu = \"a100\" }`); the key `\"*\"` catches every other unknown name. "
        "Without it an unknown partition is refused, as Slurm does", ())
    context: Optional[str] = _key("kubeconfig context (absent: the current one)")
    state_namespace: Optional[str] = _key(
        "namespace of the cluster's one job-id counter, the same for every user and context "
        "(absent: `default`; users need the `sbatch-k8s-ids` Role of `deploy/rbac.yaml` "
        "there)")
    record_retention_days: int = _key(
        "days sacct keeps a finished job's record in the cluster (Slurm's purge)", 30)
    partitions: Tuple[PartitionConfig, ...] = _key(
        "the partitions (`[partitions.NAME]`, see below)",
        (PartitionConfig(name="debug", image=DEFAULT_IMAGE),))
    local: LocalConfig = _key("the local backend (`[local]`, see below)",
                              factory=LocalConfig)
    users: UsersConfig = _key("cluster users in Slurm's terms (`[users]`, see below)",
                              factory=UsersConfig)

    def partition(self, name: Optional[str]) -> Optional[PartitionConfig]:
        """The named partition (the default when ``name`` is None), or None if unknown."""
        wanted = name or self.default_partition
        for part in self.partitions:
            if part.name == wanted:
                return part
        return None

    def alias_of(self, name: str) -> Optional[str]:
        """The partition ``partition_aliases`` maps ``name`` to (not the catch-all)."""
        return dict(self.partition_aliases).get(name) if name != ANY_PARTITION else None

    def catch_all(self) -> Optional[str]:
        """The partition every other unknown name runs in, or None (unknown is refused)."""
        return dict(self.partition_aliases).get(ANY_PARTITION)


#: The configuration when no file exists: one partition ``debug``, and a script naming its
#: old cluster's partition (``-p gpu``) runs there, with a warning.
BUILT_IN = ClusterConfig(partition_aliases=((ANY_PARTITION, "debug"),))


def cluster_config_from_dict(data: Dict[str, Any]) -> ClusterConfig:
    """Check and convert a parsed TOML document; raises :class:`ConfigError`."""
    from translators.config_check import cluster_config_from_toml

    return cluster_config_from_toml(data)
