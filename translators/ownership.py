"""Whose a job is, written on every object the job has, for the cluster to enforce.

Slurm's promise on a shared cluster is that a job is its owner's: nobody else changes,
cancels or runs code in it. On Kubernetes the API server keeps that promise, whatever client
a user holds, through the ValidatingAdmissionPolicy of ``deploy/policy.yaml``; the policy
can only compare what a request carries (the authenticated user, the object, the object
before) with what the object says, so every object of a job (its ConfigMap, Secret,
Service, PodGroup, workload, the pods' template and its record) carries these annotations
(:data:`OWNERSHIP_KEYS`):

* ``sbatch-k8s.io/owner``: the cluster user name of the owner (what ``SelfSubjectReview``
  said the submitting credentials are). The policy admits a create only when it names the
  user creating it, and an update or delete only by that user (or an operator, the
  controller, the job's own pods, below).
* ``sbatch-k8s.io/pods``: an anchored regular expression of the names of the job's own pods
  (:func:`pod_name_pattern`, per target). Requests made with the job ServiceAccount's token
  carry the name of the pod the token is bound to
  (``authentication.kubernetes.io/pod-name``); a pod whose name it matches acts for this
  job (node 0 records the job's end, publishes its steps).
* ``sbatch-k8s.io/released-by``: for a job waiting on others (``--dependency``), the pattern
  of their pods: node 0 of a job it waits for may release it (its pod template unchanged).
* ``sbatch-k8s.io/submitted-from`` and ``sbatch-k8s.io/owner-pods``: for a job submitted from
  inside another job (with the job ServiceAccount): the submitting pod's name, which the
  policy checks against the token, and the submitting job's pods pattern, which that name
  must match. Its ``owner`` then is the submitting job's owner as that job's record says;
  readers believe it only when the record of the job named by ``sbatch-k8s.io/parent-job``
  has that very ``pods`` pattern (:mod:`sbatch_k8s.backends.kubernetes.read.owners`).

None of these may change once set (the policy refuses an update that changes them). Pure.
"""

from __future__ import annotations

from parsers.vocabulary import (
    OWNER,
    PODS,
    RELEASED_BY,
    SUBMITTED_FROM,
    OWNER_PODS,
    PARENT_JOB,
)
import re
from dataclasses import dataclass
from typing import Dict, Tuple

#: The annotations no update may change (the policy's ``identity-unchanged`` rule).
OWNERSHIP_KEYS: Tuple[str, ...] = (OWNER, PODS, RELEASED_BY, SUBMITTED_FROM, OWNER_PODS,
                                   PARENT_JOB)

#: How the pods of a workload named ``{name}`` are named, per target: what the Job
#: controller (``<job>-<index>-<5 random>``), the JobSet controller (``<js>-<rjob>-<job
#: index>-<pod index>-<5 random>``; our one replicated job is ``node``), the training
#: operator (``<job>-master-0``, ``<job>-worker-<i>``) and the MPI operator (launcher Job
#: ``<job>-launcher`` whose pod is ``<job>-launcher-<5 random>``, ``<job>-worker-<i>``) name
#: them. Workload names are short enough that none of these is ever truncated
#: (:mod:`translators.naming`), and end with the job id, so no job's pattern matches the
#: pods of another job of the same target.
POD_NAME_PATTERNS: Dict[str, str] = {
    "indexed-job": "{name}-[0-9]+-[a-z0-9]{{5}}",
    "jobset": "{name}-node-[0-9]+-[0-9]+-[a-z0-9]{{5}}",
    "pytorchjob": "{name}-(master|worker)-[0-9]+",
    "mpijob": "{name}-(launcher-[a-z0-9]{{5}}|worker-[0-9]+)",
}


def pod_name_pattern(target: str, workload_name: str) -> str:
    """The anchored pattern of the names of ``workload_name``'s pods on ``target``."""
    return "^" + POD_NAME_PATTERNS[target].format(name=re.escape(workload_name)) + "$"


def any_of(patterns: Tuple[str, ...]) -> str:
    """One anchored pattern matching what any of ``patterns`` matches ("" for none)."""
    kept = sorted(set(p for p in patterns if p))
    if len(kept) <= 1:
        return kept[0] if kept else ""
    return "^(" + "|".join(p[1:-1] for p in kept) + ")$"


@dataclass(frozen=True)
class Ownership:
    """Who a submission belongs to (the backend finds out; the translators write it).

    ``owner``: the cluster user name ("" renders no ownership annotations: ``--k8s-print``
    without a cluster); ``released_by``: the pod pattern of the jobs it waits for;
    ``submitted_from``, ``owner_pods``, ``parent_job``: set when the job ServiceAccount of a
    running job submits it (see the module docstring)."""

    owner: str = ""
    released_by: str = ""
    submitted_from: str = ""
    owner_pods: str = ""
    parent_job: str = ""

    def annotations(self, pods: str) -> Dict[str, str]:
        """The ownership annotations of an object of a job whose pods match ``pods``."""
        if not self.owner:
            return {}
        found = {OWNER: self.owner, PODS: pods, RELEASED_BY: self.released_by,
                 SUBMITTED_FROM: self.submitted_from, OWNER_PODS: self.owner_pods,
                 PARENT_JOB: self.parent_job}
        return {key: value for key, value in found.items() if value}
