"""The submission plan: one immutable value with the effective limits, built once."""

from __future__ import annotations

import dataclasses

import pytest

from parsers.allocation import NodeShape
from parsers.input_errors import SlurmInputError
from parsers.jobspec import SubmitOptions
from sbatch_k8s.submission_plan import plan_submission
from tests.pod_side.support import job_for
from translators.config import BUILT_IN, cluster_config_from_dict

CONFIG = cluster_config_from_dict({"partitions": {"debug": {
    "default_time_min": 30, "max_time_min": 120, "def_mem_per_cpu_mb": 256,
    "node_cpus": 8}}})


def _plan(args: str, config=CONFIG, **kw):
    return plan_submission(job_for(args), SubmitOptions(), config, {}, **kw)


def test_the_plan_is_immutable():
    plan = _plan("-N1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.job = None  # type: ignore[misc]


@pytest.mark.parametrize("args, limit", [("-N1", 30), ("--time=5", 5), ("--time=120", 120)])
def test_the_job_carries_the_time_limit_it_runs_with(args, limit):
    plan = _plan(args)
    assert plan.time_limit_min == plan.job.time_limit_min == limit


@pytest.mark.parametrize("args", ["--time=121", "--time=0"])
def test_beyond_max_time_is_refused_before_anything(args):
    with pytest.raises(SlurmInputError) as e:
        _plan(args)
    assert e.value.render("sbatch").endswith(
        "Requested time limit is invalid (missing or exceeds some limit)\n")


def test_no_limits_configured_means_none():
    assert _plan("-N1", BUILT_IN).time_limit_min is None


def test_the_partition_default_memory_is_in_the_job():
    plan = _plan("-c2")
    assert plan.job.mem_per_cpu_mb == 256
    assert plan.allocation.mem_per_node_mb == 512


def test_other_nodes_keep_the_partition_notes_first():
    plan = _plan("-p gpu --exclusive", BUILT_IN)
    assert plan.warnings[0].startswith("invalid partition specified: gpu;")
    wider = plan.on_nodes(NodeShape(16, 2, None), "read from the cluster")
    assert wider.warnings[0] == plan.warnings[0]
    assert wider.warnings[-1] == "read from the cluster"
    assert wider.allocation.cpus_per_node == (16,)
    assert wider.job is plan.job and plan.allocation.cpus_per_node != (16,)
