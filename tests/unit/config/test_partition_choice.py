"""A script naming its old cluster's partition: accepted with one warning on the built-in
configuration, refused as Slurm does with a configuration file, unless the file maps it."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.jobspec import SubmitOptions
from sbatch_k8s.submission_plan import plan_submission, resolve_partition
from tests.pod_side.support import job_for
from translators.config import BUILT_IN, cluster_config_from_dict

TWO = {"partitions": {"debug": {}, "a100": {"node_gpus": 8}}}


def _config(**extra):
    return cluster_config_from_dict(dict(TWO, **extra))


def test_built_in_configuration_runs_an_unknown_partition_in_debug_with_a_warning():
    partition, notes = resolve_partition(job_for("-p gpu"), BUILT_IN)
    assert partition.name == "debug"
    assert notes == ("invalid partition specified: gpu; no configuration file names "
                     "partitions, so the job runs in partition debug",)


def test_the_warning_is_among_the_allocations():
    plan = plan_submission(job_for("-p gpu"), SubmitOptions(), BUILT_IN, {})
    assert plan.warnings[0].startswith("invalid partition specified: gpu;")
    assert plan.allocation.warnings == plan.warnings
    assert plan_submission(job_for("-p debug"), SubmitOptions(), BUILT_IN, {}).warnings == ()


def test_a_configuration_file_refuses_an_unknown_partition_as_slurm_does():
    with pytest.raises(SlurmInputError) as e:
        resolve_partition(job_for("-p gpu"), _config())
    assert e.value.render("sbatch") == (
        "sbatch: error: invalid partition specified: gpu\n"
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n")
    assert e.value.exit_code == 1


def test_an_alias_maps_the_name_silently():
    assert resolve_partition(job_for("-p gpu"), _config(partition_aliases={"gpu": "a100"})) \
        == (_config().partition("a100"), ())


@pytest.mark.parametrize("args, expected", [
    ("-p gpu,a100", "a100"),      # the first name that exists or is mapped
    ("-p nosuch,gpu", "a100"),
    ("-p debug", "debug"),        # a defined partition is never an alias
])
def test_comma_lists_take_the_first_usable_name(args, expected):
    config = _config(partition_aliases={"gpu": "a100", "debug": "a100"})
    assert resolve_partition(job_for(args), config)[0].name == expected


def test_a_catch_all_alias_takes_every_other_name_with_a_warning():
    partition, notes = resolve_partition(job_for("-p h100"),
                                         _config(partition_aliases={"*": "a100"}))
    assert partition.name == "a100"
    assert notes == ('invalid partition specified: h100; partition_aliases maps unknown names '
                     '("*"), so the job runs in partition a100',)
