"""Where a job's pods may run: scheduler, priority, node selection, affinity, tolerations.

* The partition gives the scheduler, service account, priority class, node selector and
  tolerations; ``--qos`` picks a priority class from the partition's ``qos_priority_classes``.
* ``--nodelist``/``--exclude`` → required node affinity on ``kubernetes.io/hostname``.
* ``--constraint`` → required node affinity on feature labels
  (``<feature_label_prefix><feature>`` Exists): ``&``/``,`` join features in one term, ``|``
  separates terms, ``!`` negates; Slurm's counts (``a*2``) and brackets (matching OR) cannot
  be said with node affinity and are dropped with a warning. ``--prefer`` → preferred terms.
* ``--exclusive`` → required pod anti-affinity per node against other jobs' pods; every other
  job keeps off nodes where an exclusive pod runs. (The scheduler also honours an existing
  pod's anti-affinity against newcomers, so either term alone would do; both are written so
  each pod's spec says what it expects.)
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from parsers.input_errors import submission_failed
from parsers.jobspec import JobSpec
from translators import metadata
from translators.config import PartitionConfig

HOSTNAME_LABEL = "kubernetes.io/hostname"
_FEATURE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_COUNT = re.compile(r"\*\d+")


def priority_class(job: JobSpec, partition: PartitionConfig) -> Optional[str]:
    """The pods' priority class: the ``--qos`` entry of the partition's map, else the
    partition's; a ``--qos`` the map does not know is refused as Slurm refuses it."""
    table = dict(partition.qos_priority_classes)
    if job.qos and table:
        if job.qos not in table:
            raise submission_failed("Invalid qos specification")
        return table[job.qos]
    return partition.priority_class


def kueue_priority_class(job: JobSpec, partition: PartitionConfig) -> Optional[str]:
    """The Kueue WorkloadPriorityClass label value (a queue and a mapped ``--qos``)."""
    if partition.queue and job.qos:
        return dict(partition.qos_priority_classes).get(job.qos)
    return None


def pod_scheduling_fields(
    partition: PartitionConfig, priority: Optional[str]
) -> Dict[str, Any]:
    """``serviceAccountName``, ``schedulerName``, ``priorityClassName`` where configured."""
    fields: Dict[str, Any] = {}
    if partition.service_account:
        fields["serviceAccountName"] = partition.service_account
    scheduler = "volcano" if partition.gang == "volcano" else partition.scheduler_name
    if scheduler:
        fields["schedulerName"] = scheduler
    if priority:
        fields["priorityClassName"] = priority
    return fields


def tolerations_to_manifest(partition: PartitionConfig) -> List[Dict[str, Any]]:
    """The partition's tolerations (TOML tables of strings; ``tolerationSeconds`` is a number)."""
    out = []
    for pairs in partition.tolerations:
        toleration: Dict[str, Any] = dict(pairs)
        if "tolerationSeconds" in toleration:
            toleration["tolerationSeconds"] = int(toleration["tolerationSeconds"])
        out.append(toleration)
    return out


def constraint_to_terms(
    text: str, option: str
) -> Tuple[Tuple[Tuple[str, ...], ...], Tuple[str, ...]]:
    """A ``--constraint``/``--prefer`` expression as OR-ed terms of AND-ed features
    (``!f`` negated), and warnings for what was dropped."""
    warnings = []
    if any(c in text for c in "[]()"):
        warnings.append(f"--{option}={text}: brackets are dropped (any node with the features "
                        "qualifies, not one choice for all nodes)")
        text = re.sub(r"[\[\]()]", "", text)
    if _COUNT.search(text):
        warnings.append(f"--{option}={text}: node counts per feature are dropped")
        text = _COUNT.sub("", text)
    terms = []
    for alternative in text.split("|"):
        features = tuple(f.strip() for f in re.split(r"[&,]", alternative))
        for feature in features:
            if not _FEATURE.match(feature.lstrip("!")):
                raise submission_failed("Invalid feature specification")
        terms.append(features)
    return tuple(terms), tuple(warnings)


def _feature_expression(feature: str, prefix: str) -> Dict[str, Any]:
    if feature.startswith("!"):
        return {"key": prefix + feature[1:], "operator": "DoesNotExist"}
    return {"key": prefix + feature, "operator": "Exists"}


def _host_expressions(job: JobSpec) -> Tuple[List[Dict[str, Any]], List[str]]:
    expressions = []
    warnings = []
    for names, operator, option in ((job.nodelist, "In", "nodelist"),
                                    (job.exclude, "NotIn", "exclude")):
        if names and names[0] == "@file":
            warnings.append(f"--{option}={names[1]}: the node file was not read; ignored")
            continue
        if names:
            expressions.append({"key": HOSTNAME_LABEL, "operator": operator,
                                "values": list(dict.fromkeys(names))})
    return expressions, warnings


def node_affinity(
    job: JobSpec, partition: PartitionConfig
) -> Tuple[Optional[Dict[str, Any]], Tuple[str, ...]]:
    """The ``nodeAffinity`` of ``--nodelist/--exclude/--constraint/--prefer`` (None if none)."""
    prefix = partition.feature_label_prefix
    base, warnings = _host_expressions(job)
    affinity: Dict[str, Any] = {}
    required: Tuple[Tuple[str, ...], ...] = ((),)
    if job.constraint:
        required, dropped = constraint_to_terms(job.constraint, "constraint")
        warnings.extend(dropped)
    if base or job.constraint:
        terms = [{"matchExpressions": base + [_feature_expression(f, prefix) for f in term]}
                 for term in required]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": terms}
    if job.prefer:
        preferred, dropped = constraint_to_terms(job.prefer, "prefer")
        warnings.extend(dropped)
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 1, "preference": {
                "matchExpressions": [_feature_expression(f, prefix) for f in term]}}
            for term in preferred]
    return (affinity or None), tuple(warnings)


def _other_pods_term(expressions: List[Dict[str, Any]], job_id: Optional[int]) -> Dict[str, Any]:
    if job_id is not None:
        expressions = expressions + [
            {"key": metadata.JOB_ID, "operator": "NotIn", "values": [str(job_id)]}]
    return {"labelSelector": {"matchExpressions": expressions}, "topologyKey": HOSTNAME_LABEL}


def exclusive_label(job: JobSpec) -> Optional[str]:
    """The pod's ``sbatch-k8s.io/exclusive`` value: ``true`` (whole node), ``user`` or None."""
    return {"node": "true", "user": "user"}.get(job.exclusive or "")


def exclusivity_warnings(job: JobSpec) -> Tuple[str, ...]:
    """Warnings for the ``--exclusive`` modes Kubernetes cannot express."""
    if job.exclusive in ("mcs", "topo"):
        return (f"--exclusive={job.exclusive} has no effect on Kubernetes",)
    return ()


def pod_anti_affinity(job: JobSpec, job_id: Optional[int], user: str) -> Dict[str, Any]:
    """The ``podAntiAffinity`` keeping exclusive jobs alone on their nodes. ``job_id`` None
    (an array run as one Indexed Job) also keeps the job's own pods apart."""
    managed = {"key": metadata.MANAGED_BY, "operator": "In", "values": [metadata.MANAGER]}
    mode = exclusive_label(job)
    if mode == "true":
        term = _other_pods_term([managed], job_id)
    elif mode == "user":
        term = _other_pods_term([managed, {"key": metadata.USER, "operator": "NotIn",
                                           "values": [metadata.text_to_label_value(user)]}],
                                None)
    else:
        term = _other_pods_term(
            [{"key": metadata.EXCLUSIVE, "operator": "In", "values": ["true"]}], job_id)
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
