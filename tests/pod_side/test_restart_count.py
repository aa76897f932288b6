"""A run restarted inside its workload (a JobSet gang restart, an array element's replaced
pod) counts in SLURM_RESTART_COUNT on top of the restarts of our own requeues."""

from __future__ import annotations

from sbatch_k8s.runtime.agent.node_setup import RESTARTED_VARIABLE, with_restarts


def test_restarts_inside_the_workload_add_to_the_description() -> None:
    desc = {"job_id": 7, "restart_count": 2}
    assert with_restarts(desc, {RESTARTED_VARIABLE: "3"})["restart_count"] == 5
    assert with_restarts({"job_id": 7}, {RESTARTED_VARIABLE: "1"})["restart_count"] == 1
    assert desc["restart_count"] == 2


def test_no_restart_leaves_the_description_alone() -> None:
    desc = {"job_id": 7, "restart_count": 2}
    # The downward API gives "" for a label or annotation the pod does not carry.
    for environ in ({}, {RESTARTED_VARIABLE: ""}, {RESTARTED_VARIABLE: "0"},
                    {RESTARTED_VARIABLE: "x"}):
        assert with_restarts(desc, environ) is desc
