"""From a checked JobSpec to a submission: the login-side facts, the partition, the
allocation, then the backend (or, for ``--k8s-print``, the manifests only)."""

from __future__ import annotations

import dataclasses
import datetime
import os
import secrets
import socket
from typing import Mapping, Optional, Tuple

from parsers.allocation import Allocation, NodeShape, allocate
from parsers.errors import SlurmInputError
from parsers.jobspec import JobSpec, SubmitContext, SubmitOptions
from sbatch_k8s.cli.common import print_warning
from sbatch_k8s.config_file import load_config
from translators.config import BUILT_IN, ClusterConfig, PartitionConfig


def submit_context(environ: Mapping[str, str]) -> SubmitContext:
    """Who submits, from where, with which environment."""
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = environ.get("USER", str(uid))
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    host = socket.gethostname().split(".")[0]
    return SubmitContext(cwd=os.getcwd(), host=host, user=user, uid=uid, gid=gid, group=group,
                         environment=tuple(sorted(environ.items())),
                         groups=tuple(sorted(set(os.getgroups()))))


def resolve_partition(job: JobSpec, config: ClusterConfig) -> Tuple[
        PartitionConfig, Tuple[str, ...]]:
    """The job's partition and what to warn about it.

    The first name of the comma list that is defined, or that ``partition_aliases`` maps
    to a defined partition; else the catch-all alias (``"*"``, which the built-in
    configuration has) with a warning; else Slurm's refusal."""
    names = (job.partition or config.default_partition).split(",")
    for name in names:
        found = config.partition(name) if name else None
        alias = config.alias_of(name)
        if found is None and alias is not None:
            found = config.partition(alias)
        if found is not None:
            return found, ()
    catch_all = config.catch_all()
    if catch_all is not None:
        how = ("no configuration file names partitions" if config is BUILT_IN else
               'partition_aliases maps unknown names ("*")')
        return config.partition(catch_all), (  # type: ignore[return-value]
            f"invalid partition specified: {names[0]}; {how}, so the job runs in partition "
            f"{catch_all}",)
    raise SlurmInputError(f"invalid partition specified: {names[0]}",
                          "Batch job submission failed: Invalid partition name specified",
                          exit_code=1)


def choose_partition(job: JobSpec, config: ClusterConfig) -> PartitionConfig:
    """The job's partition (see :func:`resolve_partition`), or Slurm's refusal."""
    return resolve_partition(job, config)[0]


def node_shape(partition: PartitionConfig) -> NodeShape:
    """The size of one node of ``partition``."""
    return NodeShape(partition.node_cpus, partition.node_gpus, partition.node_memory_mb)


def with_partition_defaults(job: JobSpec, config: ClusterConfig) -> JobSpec:
    """``job`` with what its partition sets for jobs that do not say: the memory per CPU
    (``def_mem_per_cpu_mb``, Slurm's DefMemPerCPU) when no ``--mem*`` option was given."""
    partition = choose_partition(job, config)
    memory_given = (job.mem_per_node_mb, job.mem_per_cpu_mb, job.mem_per_gpu_mb)
    if partition.def_mem_per_cpu_mb is None or any(m is not None for m in memory_given):
        return job
    return dataclasses.replace(job, mem_per_cpu_mb=partition.def_mem_per_cpu_mb)


def plan(job: JobSpec, config: ClusterConfig, shape: Optional[NodeShape] = None
         ) -> Tuple[PartitionConfig, Allocation]:
    """Partition and allocation for ``job`` on nodes of ``shape`` (the partition's by
    default); the allocation's warnings start with the partition's. Raises Slurm's
    refusals."""
    partition, notes = resolve_partition(job, config)
    allocation = allocate(job, shape or node_shape(partition))
    if notes:
        allocation = dataclasses.replace(allocation, warnings=notes + allocation.warnings)
    return partition, allocation


def now_iso() -> str:
    """Submit time as Slurm prints timestamps (local time, seconds)."""
    return datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


#: The Kubernetes minor ``--k8s-print`` renders for without ``--k8s-kubernetes-version``.
PRINT_KUBERNETES_MINOR = 29


def print_manifests(job: JobSpec, submit: SubmitOptions, environ: Mapping[str, str]) -> str:
    """``sbatch --k8s-print``: the manifests as YAML, complete for ``kubectl apply
    --server-side -f -`` (a client-side apply cannot keep the runtime ConfigMap in its
    256 kB ``last-applied-configuration`` annotation): the
    shared runtime ConfigMap first (left out with ``--k8s-print=objects``, for namespaces
    that have it), then the job's objects. Nothing is contacted or created."""
    from parsers.option_values import K8S_PRINT_OBJECTS, kubernetes_minor
    from sbatch_k8s.manifest_yaml import dump_manifests
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_digest, bundle_hash
    from translators import RenderInputs, render
    from translators.objects import runtime_config_map

    config, _ = load_config(environ)
    partition, allocation = plan(job, config)
    bundle = build_bundle()
    runtime_hash = bundle_hash(bundle)
    version = submit.k8s_kubernetes_version
    inputs = RenderInputs(
        job=job, allocation=allocation, context=submit_context(environ), partition=partition,
        cluster_name=config.cluster_name, job_id=submit.k8s_job_id or 1,
        token=secrets.token_hex(16), runtime_hash=runtime_hash,
        runtime_digest=bundle_digest(bundle),
        submit_time=now_iso(), target=submit.k8s_target or partition.target,
        kubernetes_minor=kubernetes_minor(version) if version else PRINT_KUBERNETES_MINOR)
    result = render(inputs)
    if not submit.quiet:
        for note in result.warnings:
            print_warning("sbatch", note)
    manifests = list(result.manifests)
    if submit.k8s_print != K8S_PRINT_OBJECTS:
        manifests.insert(0, runtime_config_map(runtime_hash, bundle))
    return dump_manifests(manifests)


def submit_job(job: JobSpec, submit: SubmitOptions, environ: Mapping[str, str]) -> int:
    """Submit through the configured backend; prints what sbatch prints; returns the exit
    code (the job's with ``--wait``)."""
    import sys

    from sbatch_k8s.backends import open_backend

    backend = open_backend(environ)
    if submit.verbose > 0:
        sys.stderr.write(f"sbatch: {backend.describe()}\n")
    return backend.submit(job, submit)
