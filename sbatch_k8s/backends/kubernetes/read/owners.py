"""Whose each cluster job is, as readers must believe it, and who may act on it.

A record's ownership comes from its annotations (:mod:`translators.ownership`), which the
cluster's admission policy checked when the record was created and keeps from changing:
``sbatch-k8s.io/owner`` is the creator's authenticated name. A job submitted from inside
another job (by the job ServiceAccount) only *claims* an owner: the policy verified which
pod submitted it and that the pod's name matches the claimed submitting job's pods pattern;
the claim is believed here (:func:`attributed`) when the record of the job it names has
exactly that pods pattern, a believed owner equal to the claim, and had not ended before
the claimed job was submitted. An unconfirmed claim owns nothing: the job shows as
``nobody``. The Slurm user name, uid and gid every reader shows are the owner's
(:func:`sbatch_k8s.backends.kubernetes.api.identity.slurm_identity`), never what the record's
data says (its creator wrote that).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from parsers.job_records import JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.api.identity import ClusterUser, group_name, slurm_identity
from translators.config import UsersConfig
from parsers.vocabulary import OWNER, OWNER_PODS, PARENT_JOB, PODS, SUBMITTED_FROM

#: What an unconfirmed claim shows (Slurm's name and uid of nobody).
NOBODY = ("nobody", 65534)
#: How many submitting jobs a chain of in-job submissions may go back through.
MAX_CHAIN = 8


def ownership_fields(cm: Mapping[str, Any]) -> Dict[str, str]:
    """The record's ownership as :class:`JobRecord` fields, from its annotations."""
    annotations = (cm.get("metadata") or {}).get("annotations") or {}
    pods = str(annotations.get(PODS, ""))
    if annotations.get(SUBMITTED_FROM):
        return {"owner": "", "owner_claim": f"{annotations.get(PARENT_JOB, '')} "
                                             f"{annotations.get(OWNER, '')}",
                "acting_hosts": f"{pods}\t{annotations.get(OWNER_PODS, '')}"}
    return {"owner": str(annotations.get(OWNER, "")), "owner_claim": "",
            "acting_hosts": pods}


def own_pattern(record: JobRecord) -> str:
    """The pattern of the job's own pods."""
    return record.acting_hosts.split("\t")[0]


def _believed(record: JobRecord, find: Callable[[int], Optional[JobRecord]],
              depth: int = 0) -> str:
    """The owner readers believe (module docstring); "" for none."""
    if not record.owner_claim:
        return record.owner
    parent_text, _, claimed = record.owner_claim.partition(" ")
    submitter = record.acting_hosts.split("\t", 1)[1] if "\t" in record.acting_hosts else ""
    if depth >= MAX_CHAIN or not parent_text.isdigit() or not claimed or not submitter:
        return ""
    parent = find(int(parent_text))
    if parent is None or own_pattern(parent) != submitter:
        return ""
    if parent.end_time is not None and record.submit_time is not None and \
            parent.end_time < record.submit_time:
        return ""
    return claimed if _believed(parent, find, depth + 1) == claimed else ""


def attributed(records: Sequence[JobRecord], users: UsersConfig,
               lookup: Optional[Callable[[int], Optional[JobRecord]]] = None
               ) -> List[JobRecord]:
    """``records`` with their believed owner, and that owner's Slurm name, uid and gid
    (records without ownership annotations, written before they existed, stay as they
    are). ``lookup`` finds a submitting job not among ``records``."""
    by_id = {r.job_id: r for r in records}

    def find(job_id: int) -> Optional[JobRecord]:
        found = by_id.get(job_id)
        return found if found is not None or lookup is None else lookup(job_id)

    out = []
    for record in records:
        if not (record.owner or record.owner_claim):
            out.append(record)
            continue
        owner = _believed(record, find)
        if owner:
            name, uid, gid = slurm_identity(ClusterUser(owner), users)
        else:
            (name, uid), gid = NOBODY, NOBODY[1]
        out.append(with_changes(record, owner=owner, owner_claim="", user=name, uid=uid,
                                gid=gid, group=group_name(gid, name)))
    return out


def may_act(caller: ClusterUser, record: JobRecord, users: UsersConfig, namespace: str,
            caller_uid: int) -> bool:
    """Whether ``caller`` may cancel, hold, release, requeue or update the (attributed) job:
    an operator, its owner, or (the job ServiceAccount's token) its own pods or those of the
    job that submitted it, as the admission policy lets them."""
    import re

    if caller.is_operator(users):
        return True
    if record.owner:
        if record.owner == caller.username:
            return True
        if caller.is_job_account(namespace):
            return any(p and re.fullmatch(p.strip("^$"), caller.pod_name)
                       for p in record.acting_hosts.split("\t"))
        return False
    return not record.owner_claim and record.uid == caller_uid
