"""``--exclusive`` says what the pods actually request: whole nodes only where the partition
gives their size (node_cpus, node_gpus); otherwise just the job's own request."""

from __future__ import annotations

from parsers.allocation import NodeShape
from parsers.options import SBATCH, find_option
from tests.pod_side.support import SHAPE, allocation_for


def test_without_a_node_shape_the_warning_names_the_request():
    allocation = allocation_for("--exclusive -c2 --gpus-per-node=1", NodeShape())
    assert (allocation.cpus_per_node, allocation.gpus_per_node) == ((2,), 1)
    assert allocation.warnings == (
        "--exclusive: the partition's node size is not configured (node_cpus, node_gpus), so "
        "each pod requests only what the job asks for, 2 CPUs and 1 GPU, not a whole node; "
        "other jobs' pods are still kept off its nodes",)


def test_a_plain_exclusive_job_without_a_shape_gets_one_cpu_and_says_so():
    allocation = allocation_for("--exclusive", NodeShape())
    assert allocation.cpus_per_node == (1,)
    assert "1 CPU and no GPUs, not a whole node" in allocation.warnings[0]


def test_with_a_node_shape_the_whole_node_is_requested_without_more_words():
    allocation = allocation_for("--exclusive -N2", SHAPE)
    assert (allocation.cpus_per_node, allocation.gpus_per_node) == ((4, 4), 4)
    assert allocation.warnings == ()


def test_the_tables_note_does_not_promise_whole_nodes_unconditionally():
    note = find_option(SBATCH, "exclusive").note
    assert "all allocatable" not in note and "node_cpus" in note
