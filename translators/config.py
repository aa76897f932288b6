"""The cluster configuration schema: what a site says about its partitions.

Plain frozen dataclasses; :mod:`sbatch_k8s.config` reads them from TOML
(``$SBATCH_K8S_CONFIG``, ``~/.config/sbatch-k8s/config.toml``, ``/etc/sbatch-k8s/config.toml``)
and checks them with :func:`cluster_config_from_dict`. Translators take a
:class:`PartitionConfig` as input, so rendering stays a pure function.

Example::

    backend = "kubernetes"
    cluster_name = "k8s"
    default_partition = "gpu"

    [partitions.gpu]
    namespace = "ml"
    queue = "gpu-queue"                 # Kueue LocalQueue (label kueue.x-k8s.io/queue-name)
    node_selector = { "node.kubernetes.io/instance-type" = "p4d.24xlarge" }
    tolerations = [ { key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" } ]
    gpu_resource = "nvidia.com/gpu"
    gpu_type_label = "nvidia.com/gpu.product"
    gpu_types = { a100 = "NVIDIA-A100-SXM4-80GB" }
    image = "nvcr.io/nvidia/pytorch:24.01-py3"
    node_cpus = 96
    node_gpus = 8
    node_memory_mb = 1000000
    max_time_min = 4320
    shm_size = "64Gi"
    [[partitions.gpu.volumes]]
    name = "home"
    mount_path = "/home"
    nfs = { server = "nfs.example", path = "/export/home" }
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, Mapping, Optional, Tuple

TARGETS = ("indexed-job", "jobset", "pytorchjob", "mpijob")
CONTRACTS = ("slurm", "pytorchjob", "aistation", "task-training", "mpijob")
BACKENDS = ("local", "kubernetes")
#: Image of the built-in partition (used when no configuration exists): any image with a
#: python3 >= 3.8 runs the runtime.
DEFAULT_IMAGE = "python:3.12-slim"
GANGS = ("kueue", "volcano")


class ConfigError(ValueError):
    """The configuration file says something impossible; the message names the key."""


@dataclass(frozen=True)
class VolumeConfig:
    """A shared volume mounted into every pod of a partition at ``mount_path``.

    Exactly one source: ``pvc`` (claim name), ``nfs`` (``{server, path}``) or ``host_path``.
    The submit directory and ``--chdir`` must lie under one of these for the job to find its
    files; ``--container-mounts`` sources are looked up here too.
    """

    name: str
    mount_path: str
    pvc: Optional[str] = None
    nfs: Optional[Tuple[Tuple[str, str], ...]] = None
    host_path: Optional[str] = None
    read_only: bool = False
    sub_path: Optional[str] = None


@dataclass(frozen=True)
class PartitionConfig:
    """One partition: where its jobs go and what their pods look like."""

    name: str
    #: None: the namespace of the kubeconfig context (or of the pod, in a cluster).
    namespace: Optional[str] = None
    queue: Optional[str] = None
    priority_class: Optional[str] = None
    qos_priority_classes: Tuple[Tuple[str, str], ...] = ()
    node_selector: Tuple[Tuple[str, str], ...] = ()
    tolerations: Tuple[Tuple[Tuple[str, str], ...], ...] = ()
    gpu_resource: str = "nvidia.com/gpu"
    gpu_type_label: Optional[str] = None
    gpu_types: Tuple[Tuple[str, str], ...] = ()
    gres_resources: Tuple[Tuple[str, str], ...] = ()
    feature_label_prefix: str = "feature.sbatch-k8s.io/"
    image: Optional[str] = None
    image_pull_policy: Optional[str] = None
    target: str = "indexed-job"
    contract: str = "slurm"
    node_cpus: Optional[int] = None
    node_gpus: Optional[int] = None
    node_memory_mb: Optional[int] = None
    max_time_min: Optional[int] = None
    default_time_min: Optional[int] = None
    shm_size: Optional[str] = "1Gi"
    volumes: Tuple[VolumeConfig, ...] = ()
    service_account: Optional[str] = None
    scheduler_name: Optional[str] = None
    gang: Optional[str] = None            # "volcano": PodGroup + schedulerName; "kueue": queue
    volcano_queue: Optional[str] = None   # Volcano queue of the PodGroup (gang = "volcano")
    ttl_seconds_after_finished: Optional[int] = 3600
    runtime_port: int = 6818
    max_array_size: int = 1001

    def gpu_label_value(self, gpu_type: str) -> str:
        """The node label value selecting ``gpu_type`` (the type itself when unmapped)."""
        return dict(self.gpu_types).get(gpu_type, gpu_type)


@dataclass(frozen=True)
class LocalConfig:
    """The local backend: what this machine offers to jobs."""

    cpus: Optional[int] = None
    gpus: int = 0
    memory_mb: Optional[int] = None
    max_array_size: int = 10001
    runtime_port: int = 6818


@dataclass(frozen=True)
class ClusterConfig:
    """The whole configuration file."""

    backend: Optional[str] = None
    cluster_name: str = "sbatch-k8s"
    default_partition: str = "debug"
    context: Optional[str] = None
    #: Where the job-id counter lives (None: the kubeconfig context's namespace).
    state_namespace: Optional[str] = None
    #: How long sacct keeps a finished job's record in the cluster (Slurm's purge), in days.
    record_retention_days: int = 30
    partitions: Tuple[PartitionConfig, ...] = (PartitionConfig(name="debug", image=DEFAULT_IMAGE),)
    local: LocalConfig = field(default_factory=LocalConfig)

    def partition(self, name: Optional[str]) -> Optional[PartitionConfig]:
        """The named partition (the default when ``name`` is None), or None if unknown."""
        wanted = name or self.default_partition
        for part in self.partitions:
            if part.name == wanted:
                return part
        return None


def _pairs(value: Any, key: str) -> Tuple[Tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a table of strings")
    return tuple(sorted((str(k), str(v)) for k, v in value.items()))


def _known(data: Mapping[str, Any], cls: type, where: str) -> None:
    names = {f.name for f in fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(f"{where}: unknown key {key!r}")


def _volume(data: Mapping[str, Any], where: str) -> VolumeConfig:
    _known(data, VolumeConfig, where)
    if "name" not in data or "mount_path" not in data:
        raise ConfigError(f"{where}: a volume needs name and mount_path")
    sources = [k for k in ("pvc", "nfs", "host_path") if data.get(k)]
    if len(sources) != 1:
        raise ConfigError(f"{where}: a volume needs exactly one of pvc, nfs, host_path")
    values = dict(data)
    if "nfs" in values:
        values["nfs"] = _pairs(values["nfs"], f"{where}.nfs")
    return VolumeConfig(**values)


def _partition(name: str, data: Mapping[str, Any]) -> PartitionConfig:
    where = f"partitions.{name}"
    _known(data, PartitionConfig, where)
    values: Dict[str, Any] = dict(data)
    values["name"] = name
    for key in ("node_selector", "gpu_types", "gres_resources", "qos_priority_classes"):
        if key in values:
            values[key] = _pairs(values[key], f"{where}.{key}")
    if "tolerations" in values:
        values["tolerations"] = tuple(_pairs(t, f"{where}.tolerations")
                                      for t in values["tolerations"])
    if "volumes" in values:
        values["volumes"] = tuple(_volume(v, f"{where}.volumes[{i}]")
                                  for i, v in enumerate(values["volumes"]))
    if values.get("target", "indexed-job") not in TARGETS:
        raise ConfigError(f"{where}.target must be one of {', '.join(TARGETS)}")
    if values.get("gang") not in (None,) + GANGS:
        raise ConfigError(f"{where}.gang must be one of {', '.join(GANGS)}")
    if values.get("contract", "slurm") not in CONTRACTS:
        raise ConfigError(f"{where}.contract must be one of {', '.join(CONTRACTS)}")
    return PartitionConfig(**values)


def cluster_config_from_dict(data: Mapping[str, Any]) -> ClusterConfig:
    """Check and convert a parsed TOML document; raises :class:`ConfigError`."""
    _known(data, ClusterConfig, "config")
    values: Dict[str, Any] = dict(data)
    if values.get("backend") not in (None,) + BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}")
    if "partitions" in values:
        parts = values["partitions"]
        if not isinstance(parts, Mapping) or not parts:
            raise ConfigError("partitions must be a table of partition tables")
        values["partitions"] = tuple(_partition(n, p) for n, p in parts.items())
        values.setdefault("default_partition", next(iter(parts)))
    if "local" in values:
        _known(values["local"], LocalConfig, "local")
        values["local"] = LocalConfig(**values["local"])
    config = ClusterConfig(**values)
    if config.partition(None) is None:
        raise ConfigError(f"default_partition {config.default_partition!r} is not defined")
    return config
