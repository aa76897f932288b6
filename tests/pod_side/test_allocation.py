"""allocate() against real Slurm 22.05's allocations (slurm-observations/SUMMARY.md topic 1),
on the observed nodes: 4 CPUs, 4 GPUs, 4000 MB each (cons_tres, CR_Core, idle nodes).

Each row is one observed case: ``sbatch <args>`` → nodes, batch ``SLURM_TASKS_PER_NODE``,
``SLURM_JOB_CPUS_PER_NODE`` and ``SLURM_NTASKS`` (None = absent). Where sbatch-k8s differs
from the observation the case is an xfail naming the difference.
"""

from __future__ import annotations

import pytest

from parsers.allocation import NodeShape, allocate, pack_tasks
from parsers.input_errors import SlurmInputError
from parsers.slurm_env import run_length
from tests.conformance.differences import INTENDED
from tests.pod_side.support import SHAPE, allocation_for, job_for

OBSERVED = [
    # case, sbatch args, nodes, SLURM_TASKS_PER_NODE, SLURM_JOB_CPUS_PER_NODE, SLURM_NTASKS
    ("a", "-N2", 2, "1(x2)", "1(x2)", None),
    ("b", "-n3", 1, "3", "3", 3),
    ("c", "-n5", 2, "4,1", "4,1", 5),
    ("d", "-N2 -n5", 2, "4,1", "4,1", 5),
    ("e", "-N2 -n3", 2, "2,1", "2,1", 3),
    ("f", "-N2 --ntasks-per-node=3", 2, "3(x2)", "3(x2)", 6),
    # The batch TPN keeps 3(x2) although only 5 tasks were asked for (scontrol NumTasks=6).
    ("g", "-N2 --ntasks-per-node=3 -n5", 2, "3(x2)", "3(x2)", 5),
    ("h", "-N3 -n4 -c2", 3, "2,1(x2)", "4,2(x2)", 4),
    ("i", "-n2 -c3", 2, "1(x2)", "3(x2)", 2),
    ("j", "-N2 --exclusive", 2, "4(x2)", "4(x2)", None),
    ("k", "-N1 -c2", 1, "1", "2", None),
    ("q", "-N1-2", 2, "1(x2)", "1(x2)", None),
    ("r", "--ntasks-per-node=2", 1, "2", "2", 2),
    ("s", "-N2 -m cyclic -n4", 2, "3,1", "3,1", 4),
    ("t", "-n9", 3, "4(x2),1", "4(x2),1", 9),
    ("u", "-N2 -n5 -m cyclic", 2, "4,1", "4,1", 5),
    ("v", "-n4 -c2", 2, "2(x2)", "4(x2)", 4),
    ("o1", "--mem=1000 -N2", 2, "1(x2)", "1(x2)", None),
    ("o2", "--mem-per-cpu=300 -n2", 1, "2", "2", 2),
    ("-N2 -n4", "-N2 -n4", 2, "3,1", "3,1", 4),
    ("-N3 -n6", "-N3 -n6", 3, "4,1(x2)", "4,1(x2)", 6),
    ("l", "--gpus-per-node=2 -N2", 2, "1(x2)", "1(x2)", None),
    ("w", "--gres=gpu:2 -N2", 2, "1(x2)", "1(x2)", None),
    ("m1", "--gpus=3", 1, "1", "1", None),
    ("n", "--gpus-per-task=1 -n3", 1, "3", "3", 3),
]


@pytest.mark.parametrize("case, args, nodes, tasks, cpus, ntasks", OBSERVED,
                         ids=[row[0] for row in OBSERVED])
def test_allocation_matches_real_slurm(case, args, nodes, tasks, cpus, ntasks):
    allocation = allocation_for(args)
    assert allocation.node_count == nodes
    assert run_length(allocation.tasks_per_node) == tasks
    assert run_length(allocation.cpus_per_node) == cpus
    assert allocation.ntasks == ntasks


@pytest.mark.parametrize("args, gpus, memory", [
    ("--gpus-per-node=2 -N2", 2, None),   # l: GRES=gpu:2(IDX:0-1) on each node
    ("--gres=gpu:2 -N2", 2, None),        # w
    ("--gpus=3", 3, None),                # m1: one node, SLURM_JOB_GPUS=0,1,2
    ("--gpus-per-task=1 -n3", 3, None),   # n: one node, 3 GPUs
    ("-N2 --exclusive", 4, None),         # j: all GPUs of the node come with --exclusive
    ("-N2", 0, None),
    ("--mem=1000 -N2", 0, 1000),          # o1: SLURM_MEM_PER_NODE=1000
    ("--mem-per-cpu=300 -n2", 0, 600),    # o2: 300 per CPU, 2 CPUs
    ("--mem=0", 0, 4000),                 # all of the node's memory
    ("--mem-per-gpu=100 --gpus=2", 2, 200),
])
def test_gpus_and_memory_per_node(args, gpus, memory):
    allocation = allocation_for(args)
    assert allocation.gpus_per_node == gpus
    assert allocation.mem_per_node_mb == memory


def test_gpus_spread_over_nodes_size_every_pod_for_the_busiest_node():
    """m2 ``--gpus=3 -N2``: every pod is built from one template, so each node is sized for
    the busiest one (2 GPUs)."""
    assert allocation_for("--gpus=3 -N2").gpus_per_node == 2


def test_gpus_spread_over_nodes_give_each_node_slurms_share():
    """m2 ``--gpus=3 -N2``: real Slurm gives n1 2 GPUs (IDX:0-1) and n2 1 (IDX:0), 3 in all.
    Pods cannot differ, so both request 2 (the job holds 4, which the submission says in the
    approximated style); each node's share is still Slurm's, and its GPU variables name only
    that share (test_slurm_env.test_gpu_variables, m2)."""
    allocation = allocation_for("--gpus=3 -N2")
    assert allocation.gpus_on_nodes == (2, 1)
    assert "behaviour:uneven GPUs per node" in INTENDED
    assert allocation.warnings == (
        "--gpus is approximated: all pods of a job request the same resources, so each of the "
        "2 pods requests 2 GPUs (4 in all for 3); the tasks on each node see 2,1 of them",)


@pytest.mark.parametrize("args, per_pod, shares", [
    ("--gpus=8 -N2", 4, (4, 4)),
    ("--gpus=4 -N3", 2, (2, 1, 1)),            # Slurm's spread: 2,1,1
    ("--gpus=5 -N2", 3, (3, 2)),               # Slurm gives 4,1; no pod holds 4 here
    ("--gpus-per-task=1 -N2 -n5", 4, (4, 1)),  # the tasks' layout 4,1
    ("--gpus-per-node=2 -N2", 2, (2, 2)),
    ("-N2 --exclusive", 4, (4, 4)),
    ("-N2", 0, (0, 0)),
])
def test_gpu_shares_never_exceed_a_pod(args, per_pod, shares):
    allocation = allocation_for(args)
    assert (allocation.gpus_per_node, allocation.gpus_on_nodes) == (per_pod, shares)
    assert bool(allocation.warnings) == (sum(shares) < per_pod * len(shares))


def test_fewer_gpus_than_nodes_is_refused():
    """Observed: ``--gpus=1 -N2 -p gpu`` (exit 1)."""
    with pytest.raises(SlurmInputError) as caught:
        allocation_for("--gpus=1 -N2")
    assert caught.value.render("sbatch").splitlines() == [
        "sbatch: error: Failed to validate job spec, --gpus < -N",
        "sbatch: error: Invalid generic resource (gres) specification"]
    assert caught.value.exit_code == 1


def test_node_count_from_the_gpus_needed():
    assert allocation_for("--gpus=6").node_count == 2


def test_range_of_nodes_gets_its_maximum():
    assert allocation_for("-N 2-4").node_count == 4


def test_fewer_tasks_than_nodes_lowers_the_node_count_with_slurms_warning():
    allocation = allocation_for("-N3 -n2")
    assert allocation.node_count == 2
    assert allocation.warnings == ("can't run 2 processes on 3 nodes, setting nnodes to 2",)


def test_nodelist_without_nodes_sizes_the_job():
    assert allocation_for("-w n[1-3]").node_count == 3


def test_overcommit_sizes_one_task_per_node():
    allocation = allocation_for("-N2 -n8 --overcommit")
    assert run_length(allocation.tasks_per_node) == "4(x2)"
    assert run_length(allocation.cpus_per_node) == "1(x2)"


def test_unknown_shape_packs_everything_on_one_node():
    allocation = allocate(job_for("-n 64 -c 2"), NodeShape())
    assert (allocation.node_count, allocation.tasks_per_node, allocation.cpus_per_node) == (
        1, (64,), (128,))


@pytest.mark.parametrize("ntasks, nodes, limit, expected", [
    (5, 2, 4, (4, 1)),
    (3, 2, 4, (2, 1)),
    (4, 2, 4, (3, 1)),
    (6, 3, 4, (4, 1, 1)),
    (9, 3, 4, (4, 4, 1)),
    (8, 2, 4, (4, 4)),
    (4, 3, 2, (2, 1, 1)),
    (7, 2, None, (6, 1)),
])
def test_pack_tasks_leaves_one_task_for_each_later_node(ntasks, nodes, limit, expected):
    assert pack_tasks(ntasks, nodes, limit) == expected


# -- refusals (SUMMARY §7) ----------------------------------------------------------------------

CONFIG_UNAVAILABLE = ("sbatch: error: Batch job submission failed: Requested node configuration "
                      "is not available")


@pytest.mark.parametrize("args, lines", [
    # Observed: -c 5 on 4-CPU nodes.
    ("-c 5", ["sbatch: error: CPU count per node can not be satisfied", CONFIG_UNAVAILABLE]),
    ("--ntasks-per-node=5", ["sbatch: error: CPU count per node can not be satisfied",
                             CONFIG_UNAVAILABLE]),
    # Observed: -N 0.
    ("-N 0", ["sbatch: error: Batch job submission failed: Node count specification invalid"]),
    # Observed: --ntasks-per-node=2 -n 3 -N 1 (more tasks than ntasks-per-node x nodes).
    ("--ntasks-per-node=2 -n 3 -N 1", [CONFIG_UNAVAILABLE]),
    ("--ntasks-per-node=1 -n 5 -N 2", [CONFIG_UNAVAILABLE]),
    # Observed: --gres=gpu:5 -p gpu, and GPUs beyond a node.
    ("--gres=gpu:5", [CONFIG_UNAVAILABLE]),
    ("--gpus-per-node=5", [CONFIG_UNAVAILABLE]),
    ("--gpus-per-task=2 -n3 -N1", [CONFIG_UNAVAILABLE]),
    # Real Slurm accepts '-n 20 -N 1' and leaves it pending forever (PartitionConfig);
    # sbatch-k8s refuses it at once.
    ("-n 20 -N 1", [CONFIG_UNAVAILABLE]),
    ("-N1 -n2 -c3", [CONFIG_UNAVAILABLE]),
])
def test_refusals(args, lines):
    with pytest.raises(SlurmInputError) as caught:
        allocation_for(args)
    assert caught.value.render("sbatch").splitlines() == lines
    assert caught.value.exit_code == 1


def test_memory_beyond_the_node_is_refused():
    with pytest.raises(SlurmInputError) as caught:
        allocation_for("--mem=5000")
    assert caught.value.render("sbatch").splitlines()[-1] == CONFIG_UNAVAILABLE
    assert caught.value.exit_code == 1


@pytest.mark.parametrize("args", ["--mem=5000", "--mem-per-cpu=5000"])
def test_memory_beyond_the_node_says_so_first(args):
    """Observed (``--mem=5000``, ``--mem-per-cpu=5000``): slurmctld names memory first."""
    with pytest.raises(SlurmInputError) as caught:
        allocation_for(args)
    assert caught.value.render("sbatch").splitlines() == [
        "sbatch: error: Memory specification can not be satisfied", CONFIG_UNAVAILABLE]


def test_memory_per_cpu_adding_up_beyond_the_node_says_only_that_it_does_not_fit():
    """Observed: ``--mem-per-cpu=2000 -c3`` (6000 MB on 4000 MB nodes): each value fits a node,
    so slurmctld's refusal does not name memory."""
    with pytest.raises(SlurmInputError) as caught:
        allocation_for("--mem-per-cpu=2000 -c3")
    assert caught.value.render("sbatch").splitlines() == [CONFIG_UNAVAILABLE]


def test_shape_is_what_the_observations_ran_on():
    assert (SHAPE.cpus, SHAPE.gpus, SHAPE.memory_mb) == (4, 4, 4000)
