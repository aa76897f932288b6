"""Who submits to a cluster, and the namespaces that follows from it.

The submitter is whom the API server authenticates (:mod:`..api.identity`), not the local account:
its Slurm name, uid and gid (the ``[users]`` mapping) replace the login side's in the job's
:class:`~parsers.jobspec.SubmitContext` (``SLURM_JOB_USER``, ``SLURM_JOB_UID``, the records,
a partition's ``run_as = "submitter"``), and its cluster name is the owner every object of
the job names (:class:`translators.ownership.Ownership`), which the admission policy checks.

Inside a job, the commands authenticate as the job ServiceAccount with a token bound to
their pod. A job submitted so belongs to the submitting job's owner, as that job's record
says; it carries the submitting pod's name and the submitting job's pods pattern, which the
policy checks against the token (readers believe the claim only when the submitting job's
record confirms it: :mod:`..read.owners`).

A partition's ``namespace`` may be a template naming the user (``u-{user}``,
:func:`translators.users.namespace_for`): each user's jobs then live in a namespace of their
own, the strongest isolation (see README, "Users and trust").
"""

from __future__ import annotations

from parsers.vocabulary import ACTIVE, ARRAY_JOB_ID, JOB_ID, RECORD_SELECTOR, STATE
import dataclasses
from typing import Iterable, List, Mapping, Optional, Set, Tuple

from parsers.jobspec import JobSpec, SubmitContext
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.identity import (
    ClusterUser,
    group_name,
    slurm_groups,
    slurm_identity,
    who_am_i,
)
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP
from sbatch_k8s.operation_errors import BackendError
from translators.config import ClusterConfig, PartitionConfig
from translators.ownership import Ownership, any_of
from translators.users import namespace_for, slurm_user_name



def partition_namespace(partition: PartitionConfig, client: KubeClient,
                        slurm_name: str) -> str:
    """Where ``partition``'s jobs of the user ``slurm_name`` live."""
    if not partition.namespace:
        return client.target.namespace
    return namespace_for(partition.namespace, slurm_name)


def user_namespaces(config: ClusterConfig, client: KubeClient, slurm_name: str) -> Set[str]:
    """Every namespace the partitions put the user's jobs in."""
    return {partition_namespace(p, client, slurm_name) for p in config.partitions}


def all_record_namespaces(client: KubeClient) -> Set[str]:
    """The namespaces holding job records anywhere in the cluster (an operator's view of
    per-user namespaces; needs ``list`` of ConfigMaps cluster-wide)."""
    try:
        items, _ = client.list(CONFIG_MAP, None, RECORD_SELECTOR)
    except KubeError as e:
        if e.status == 403:
            return set()
        raise
    return {str((i.get("metadata") or {}).get("namespace")) for i in items}


def _parent_record(client: KubeClient, namespaces: Iterable[str], parent_id: int
                   ) -> Optional[Tuple[str, str]]:
    """(believed owner, own pods pattern) of the submitting job's record."""
    from sbatch_k8s.backends.kubernetes.read.owners import attributed, own_pattern
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map, record_name

    def find(job_id: int):  # type: ignore[no-untyped-def]
        for namespace in sorted(set(namespaces)):
            found = client.get(CONFIG_MAP, record_name(job_id), namespace)
            if found is not None:
                return record_from_config_map(found)[0]
        return None
    record = find(parent_id)
    if record is None:
        return None
    from translators.config import UsersConfig

    believed = attributed([record], UsersConfig(), find)[0]
    return (believed.owner, own_pattern(record)) if believed.owner else None


def released_by(client: KubeClient, job: JobSpec, namespaces: Iterable[str],
                user: str) -> str:
    """The pattern of the pods of the jobs ``job`` waits for (their node 0 releases it):
    the jobs its dependency names, and for ``singleton`` the unfinished jobs of ``user``
    with its name (all earlier than it: a later one never holds it back)."""
    from parsers.dependency_state import dependency_targets
    from sbatch_k8s.backends.kubernetes.read.owners import own_pattern
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map

    if job.dependency is None or not job.dependency.clauses:
        return ""
    wanted = sorted(set(dependency_targets(job.dependency)))
    singleton = any(clause.kind == "singleton" for clause in job.dependency.clauses)
    listed = ",".join(str(i) for i in wanted)
    selectors = [f"{RECORD_SELECTOR},{label} in ({listed})"
                 for label in (JOB_ID, ARRAY_JOB_ID) if wanted]
    if singleton:
        selectors.append(f"{RECORD_SELECTOR},{STATE}={ACTIVE}")
    patterns: List[str] = []
    for namespace in sorted(set(namespaces)):
        for selector in selectors:
            items, _ = client.list(CONFIG_MAP, namespace, selector)
            for item in items:
                try:
                    record = record_from_config_map(item)[0]
                except ValueError:
                    continue
                named = selector.endswith(f"={ACTIVE}")
                if not named or (record.name == job.job_name and record.user == user):
                    patterns.append(own_pattern(record))
    return any_of(tuple(dict.fromkeys(patterns)))


def with_job_account(partition: PartitionConfig, client: KubeClient,
                     namespace: str) -> PartitionConfig:
    """``partition`` running its pods as the job ServiceAccount when it names none and the
    account exists in ``namespace`` (``deploy/rbac.yaml`` applied): node 0 then records
    its end, publishes its steps and releases the jobs waiting for it with nothing else
    configured. ``service_account = ""`` keeps pods without one."""
    from sbatch_k8s.backends.kubernetes.api.identity import JOB_SERVICE_ACCOUNT
    from sbatch_k8s.backends.kubernetes.api.kinds import SERVICE_ACCOUNT

    if partition.service_account is not None:
        return partition
    try:
        found = client.get(SERVICE_ACCOUNT, JOB_SERVICE_ACCOUNT, namespace)
    except KubeError as e:
        if e.status != 403:
            raise
        found = None
    if found is None:
        return partition
    return dataclasses.replace(partition, service_account=JOB_SERVICE_ACCOUNT)


def cluster_submitter(client: KubeClient, config: ClusterConfig, environ: Mapping[str, str],
                      context: SubmitContext) -> Tuple[SubmitContext, Ownership, ClusterUser]:
    """The submission's context as the cluster knows its user, the ownership its objects
    carry, and the authenticated caller (module docstring)."""
    caller = who_am_i(client, dict(environ))
    if not caller.username:
        raise BackendError("the API server did not say who these credentials are "
                           "(SelfSubjectReview answered no user name)")
    ownership = Ownership(owner=caller.username)
    if caller.is_job_account(client.target.namespace) and \
            str(environ.get("SLURM_JOB_ID", "")).isdigit():
        parent = int(environ["SLURM_JOB_ID"])
        namespaces = user_namespaces(config, client, slurm_user_name(caller.username,
                                                                     config.users))
        found = _parent_record(client, namespaces | {client.target.namespace}, parent)
        if found is None:
            raise BackendError(f"the record of job {parent}, which this pod runs, does not "
                               "say whose it is: a job submitted from here would be nobody's")
        ownership = Ownership(owner=found[0], submitted_from=caller.pod_name,
                              owner_pods=found[1], parent_job=str(parent))
    name, uid, gid = slurm_identity(ClusterUser(ownership.owner), config.users)
    context = dataclasses.replace(context, user=name, uid=uid, gid=gid, group=group_name(gid, name),
                                  groups=slurm_groups(name, gid, config.users))
    return context, ownership, caller
