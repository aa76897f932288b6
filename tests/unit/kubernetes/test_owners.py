"""Whose a cluster job is as readers believe it, and who may act on it
(:mod:`sbatch_k8s.backends.kubernetes.read.owners`)."""

from __future__ import annotations

import json
from typing import Any, Dict

from sbatch_k8s.backends.kubernetes.api.identity import ClusterUser
from sbatch_k8s.backends.kubernetes.read.owners import attributed, may_act
from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map
from translators.config import UsersConfig
from translators.users import hashed_uid

USERS = UsersConfig()
A_PODS = "^a-1-[0-9]+-[a-z0-9]{5}$"
B_PODS = "^b-2-[0-9]+-[a-z0-9]{5}$"


def _record(job_id: int, annotations: Dict[str, str], **values: Any) -> Any:
    data = dict({"job_id": job_id, "name": "j", "user": "forged", "uid": 0, "group": "g",
                 "gid": 0, "partition": "p", "state": "RUNNING", "submit_time": 100},
                **values)
    cm = {"metadata": {"name": f"sbatch-k8s-job-{job_id}", "annotations": annotations},
          "data": {"record.json": json.dumps(data), "workload.json": "{}"}}
    return record_from_config_map(cm)[0]


def _claim(job_id: int, parent: int, claimed: str, owner_pods: str, **values: Any) -> Any:
    return _record(job_id, {"sbatch-k8s.io/owner": claimed, "sbatch-k8s.io/pods": "^c$",
                            "sbatch-k8s.io/submitted-from": "x-0-abcde",
                            "sbatch-k8s.io/owner-pods": owner_pods,
                            "sbatch-k8s.io/parent-job": str(parent)}, **values)


def test_the_owner_annotation_decides_user_and_uid_not_the_data() -> None:
    record, = attributed([_record(1, {"sbatch-k8s.io/owner": "alice",
                                      "sbatch-k8s.io/pods": A_PODS})], USERS)
    assert (record.owner, record.user, record.uid) == ("alice", "alice",
                                                      hashed_uid("alice", USERS))


def test_an_in_job_claim_is_believed_only_when_the_parent_confirms_it() -> None:
    parent = _record(1, {"sbatch-k8s.io/owner": "alice", "sbatch-k8s.io/pods": A_PODS})
    bobs = _record(2, {"sbatch-k8s.io/owner": "bob", "sbatch-k8s.io/pods": B_PODS})
    good = _claim(3, 1, "alice", A_PODS)
    wrong_pods = _claim(4, 2, "alice", B_PODS)        # B's job claiming A
    wrong_parent = _claim(5, 1, "alice", B_PODS)      # names A's job, was B's pod
    late = _claim(6, 7, "alice", A_PODS, submit_time=500)
    ended = _record(7, {"sbatch-k8s.io/owner": "alice", "sbatch-k8s.io/pods": A_PODS},
                    state="COMPLETED", end_time=400)
    chained = _claim(8, 3, "alice", "^c$")            # submitted from job 3's pod
    shown = {r.job_id: r for r in attributed(
        [parent, bobs, good, wrong_pods, wrong_parent, late, ended, chained], USERS)}
    assert shown[3].user == "alice" and shown[3].owner == "alice"
    assert shown[8].user == "alice"
    for job in (4, 5, 6):
        assert (shown[job].owner, shown[job].user, shown[job].uid) == ("", "nobody", 65534)


def test_who_may_act() -> None:
    record, = attributed([_record(1, {"sbatch-k8s.io/owner": "alice",
                                      "sbatch-k8s.io/pods": A_PODS})], USERS)
    alice, bob = ClusterUser("alice"), ClusterUser("bob")
    operator = ClusterUser("carol", ("sbatch-k8s:operators",))
    pod = ClusterUser("system:serviceaccount:ns:sbatch-k8s-job", (), (
        ("authentication.kubernetes.io/pod-name", ("a-1-0-abcde",)),))
    other_pod = ClusterUser("system:serviceaccount:ns:sbatch-k8s-job", (), (
        ("authentication.kubernetes.io/pod-name", ("b-2-0-abcde",)),))
    assert may_act(alice, record, USERS, "ns", 0)
    assert may_act(operator, record, USERS, "ns", 0)
    assert may_act(pod, record, USERS, "ns", 0)
    assert not may_act(bob, record, USERS, "ns", record.uid)   # the uid decides nothing
    assert not may_act(other_pod, record, USERS, "ns", 0)
    assert not may_act(pod, record, USERS, "elsewhere", 0)
