"""Object names: ``<slug>-<jobid>`` (``<slug>-<arrayjobid>-<taskid>`` for array elements).

Every object of a job carries one name, built from the job name so that ``kubectl get`` reads
like ``squeue``. The slug keeps only what a DNS-1035 label allows (lower-case letters, digits,
``-``; a letter first) and is shortened so that the *longest* name Kubernetes or the operator
derives from the workload's name (pod hostnames, per-pod Services, the JobSet webhook's
``<js>-<rjob>-<i>-<j>-abcde``; see :data:`translators.targets.TARGETS`) still fits in 63
characters. The job id is never shortened: it is what makes names unique.
"""

from __future__ import annotations

import re
from typing import Sequence, Tuple

from parsers.input_errors import submission_failed
from translators.targets import TargetTraits

DNS_LABEL_MAX = 63
_OTHER = re.compile(r"[^a-z0-9]+")


def job_name_to_slug(job_name: str, max_length: int = DNS_LABEL_MAX) -> str:
    """The job name as the start of a DNS-1035 label, at most ``max_length`` characters:
    lower case, runs of other characters → one ``-``, trimmed, ``j`` prefixed when it does
    not start with a letter, ``job`` when nothing is left."""
    slug = _OTHER.sub("-", job_name.lower()).strip("-")
    if not slug:
        slug = "job"
    elif not slug[0].isalpha():
        slug = "j" + slug
    return slug[:max_length].rstrip("-")


def derived_name_extra(traits: TargetTraits, pods: int) -> int:
    """How many characters the longest derived name adds to the workload name."""
    extra = 0
    for pattern, back in traits.derived_names:
        if back is None:
            extra = max(extra, len(pattern.format(name="", index="")))
        elif pods - back >= 0:
            extra = max(extra, len(pattern.format(name="", index=pods - back)))
    return extra


def unit_names(
    job_name: str, suffixes: Sequence[str], pods: int, traits: TargetTraits
) -> Tuple[str, ...]:
    """``<slug>-<suffix>`` for each suffix (``1234`` or ``1234-7``), with one slug short
    enough for every derived name of a workload of ``pods`` pods."""
    budget = DNS_LABEL_MAX - derived_name_extra(traits, pods) - 1 - max(map(len, suffixes))
    if budget < 1:
        raise submission_failed(
            f"Kubernetes names for {pods} pods of job {suffixes[0]} would exceed "
            f"{DNS_LABEL_MAX} characters")
    slug = job_name_to_slug(job_name, budget) or "j"
    return tuple(f"{slug}-{suffix}" for suffix in suffixes)
