"""srun inside a job: parse_srun + layout_step with the job's environment as srun sees it,
against real Slurm 22.05 (slurm-observations/SUMMARY.md topic 2, 02-srun-in-alloc/*.out).

The environment is the batch step's (``batch_environment`` of the job's description), so a
step inherits ``SLURM_NTASKS``, ``SLURM_NTASKS_PER_NODE``, ``SLURM_JOB_NUM_NODES``,
``SLURM_CPUS_PER_TASK`` … exactly as the runtime hands them to srun.

Version notes: sbatch-k8s follows Slurm >= 23.02 for ``srun -N1`` in a ``--ntasks-per-node=k``
job (the inherited SLURM_NTASKS is dropped: k tasks on one node; 22.05 kept it and failed), and
26.05's wording and condition for the "can't honor --ntasks-per-node" warning (only when the
tasks exceed nodes x ntasks-per-node; 22.05 also warned for ``-n3`` in a 2x2 job and said "the
number of requested nodes").
"""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import pytest

from parsers.input_errors import SlurmInputError
from parsers.slurm_env import batch_environment
from parsers.step_layout import StepLayout, layout_step
from parsers.steps import StepRequest, parse_srun
from tests.pod_side.support import describe, node_names, words

#: The two observed jobs (02-srun-in-alloc/job1-N2-tpn2.out: job 29; job2-N3-n6.out: job 30).
TPN2 = "-N2 --ntasks-per-node=2"
N3N6 = "-N3 -n6"
N2 = "-N2"
JOB_IDS = {TPN2: 29, N3N6: 30, N2: 31}


def job_env(job_args: str) -> Tuple[Dict[str, str], Sequence[str], Sequence[int], bool]:
    desc = describe(job_args, job_id=JOB_IDS.get(job_args, 29))
    names = node_names(desc["node_count"])
    return batch_environment(desc, names), names, desc["cpus_per_node"], bool(desc["overcommit"])


def run_step(job_args: str, srun_args: str) -> Tuple[StepRequest, Dict[str, Tuple[int, ...]],
                                                      StepLayout]:
    env, names, cpus, overcommit = job_env(job_args)
    request = parse_srun(words(srun_args) + ["hostname"], env)
    layout = layout_step(request, names, cpus, int(env["SLURM_JOB_ID"]), overcommit)
    placed = {names[i]: ranks for i, ranks in zip(layout.node_indices, layout.ranks)}
    return request, placed, layout


def step_error(job_args: str, srun_args: str) -> Tuple[SlurmInputError, Tuple[str, ...]]:
    """The error of a step that cannot run, and the warnings srun printed before it."""
    env, names, cpus, overcommit = job_env(job_args)
    request = parse_srun(words(srun_args) + ["hostname"], env)
    with pytest.raises(SlurmInputError) as caught:
        layout_step(request, names, cpus, int(env["SLURM_JOB_ID"]), overcommit)
    return caught.value, request.warnings


CANT_RUN = "can't run {n} processes on {m} nodes, setting nnodes to {n}"


def cant_honor(per_node: int, tasks: int, nodes: int) -> str:
    return (f"can't honor --ntasks-per-node set to {per_node} which doesn't match the requested "
            f"tasks {tasks} with the maximum number of requested nodes {nodes}. Ignoring "
            "--ntasks-per-node.")


STEPS = [
    # job, srun args, {node: ranks}, distribution, warnings
    # -- job1: -N2 --ntasks-per-node=2 (batch: NTASKS=4, NTASKS_PER_NODE=2, TPN 2(x2)) --
    (TPN2, "", {"n1": (0, 1), "n2": (2, 3)}, "block", ()),
    # Slurm >= 23.02: the env's SLURM_NTASKS is dropped, 2 tasks on one node (22.05 failed).
    (TPN2, "-N1", {"n1": (0, 1)}, "block", ()),
    (TPN2, "-n1", {"n1": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=2),)),
    (TPN2, "-N1 -n1", {"n1": (0,)}, "cyclic", ()),
    (TPN2, "-n3", {"n1": (0, 1), "n2": (2,)}, "block", ()),
    (TPN2, "-N2 -n3", {"n1": (0, 1), "n2": (2,)}, "block", ()),
    (TPN2, "--ntasks-per-node=1", {"n1": (0, 1), "n2": (2, 3)}, "block", (cant_honor(1, 4, 2),)),
    (TPN2, "-w n2 -n1", {"n2": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=2),)),
    (TPN2, "-r 1 -N1 -n1", {"n2": (0,)}, "cyclic", ()),
    (TPN2, "-r 1 -N1", {"n2": (0, 1)}, "block", ()),
    (TPN2, "-m cyclic -n4", {"n1": (0, 2), "n2": (1, 3)}, "cyclic", ()),
    (TPN2, "-c2 -n2", {"n1": (0,), "n2": (1,)}, "cyclic", ()),
    (TPN2, "--overlap -n1", {"n1": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=2),)),
    (TPN2, "--exclusive -n1", {"n1": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=2),)),
    (TPN2, "-n 1 -c 1 --exact", {"n1": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=2),)),
    (TPN2, "-x n2 -N1 -n1", {"n1": (0,)}, "cyclic", ()),
    # -- job2: -N3 -n6 (layout 4,1(x2)) --
    (N3N6, "", {"n1": (0, 1, 2, 3), "n2": (4,), "n3": (5,)}, "block", ()),
    (N3N6, "-n1", {"n1": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=3),)),
    (N3N6, "-N1 -n1", {"n1": (0,)}, "cyclic", ()),
    (N3N6, "-n3", {"n1": (0,), "n2": (1,), "n3": (2,)}, "cyclic", ()),
    (N3N6, "-n3 -m cyclic", {"n1": (0,), "n2": (1,), "n3": (2,)}, "cyclic", ()),
    (N3N6, "-N2 -n3", {"n1": (0, 1), "n2": (2,)}, "block", ()),
    (N3N6, "--ntasks-per-node=1", {"n1": (0, 1, 2, 3), "n2": (4,), "n3": (5,)}, "block",
     (cant_honor(1, 6, 3),)),
    (N3N6, "-w n2 -n1", {"n2": (0,)}, "cyclic", (CANT_RUN.format(n=1, m=3),)),
    (N3N6, "-x n1 -N2 -n2", {"n2": (0,), "n3": (1,)}, "cyclic", ()),
    (N3N6, "-r 1 -N1 -n1", {"n2": (0,)}, "cyclic", ()),
    (N3N6, "-m cyclic -n4", {"n1": (0, 3), "n2": (1,), "n3": (2,)}, "cyclic", ()),
    (N3N6, "-m cyclic", {"n1": (0, 3, 4, 5), "n2": (1,), "n3": (2,)}, "cyclic", ()),
    (N3N6, "-n7 --overcommit", {"n1": (0, 1, 2, 3, 4), "n2": (5,), "n3": (6,)}, "block", ()),
    # Observed in job 754 (same shape): -w only requires a node; the rest in job order.
    (N3N6, "-w n3 -N2 -n2", {"n1": (0,), "n3": (1,)}, "cyclic", ()),
    (N3N6, "-w n2 -n3 -c2", {"n1": (0,), "n2": (1,), "n3": (2,)}, "cyclic", ()),
    # -- a -N2 job: no SLURM_NTASKS, srun runs one task per node --
    (N2, "", {"n1": (0,), "n2": (1,)}, "cyclic", ()),
    (N2, "-N1", {"n1": (0,)}, "cyclic", ()),
]


@pytest.mark.parametrize("job, srun, placed, distribution, warnings", STEPS,
                         ids=[f"{s[0]}|srun {s[1]}" for s in STEPS])
def test_step_layout_matches_real_slurm(job, srun, placed, distribution, warnings):
    request, got, layout = run_step(job, srun)
    assert got == placed
    assert list(got) == sorted(got)  # the step's nodes in job order
    assert layout.distribution == distribution
    assert request.warnings == warnings


ERRORS = [
    # job, srun args, error lines, warnings printed before them
    (TPN2, "-x n1", ["srun: error: Only allocated 1 nodes asked for 2",
                     "srun: error: Are required nodes explicitly excluded?"], ()),
    (TPN2, "-c3 -n1", ["srun: error: Unable to create step for job 29: More processors "
                       "requested than permitted"], (CANT_RUN.format(n=1, m=2),)),
    # 26.05 warns here (5 > 2 nodes x 2); 22.05 did not.
    (TPN2, "-n5", ["srun: error: Unable to create step for job 29: More processors requested "
                   "than permitted"], (cant_honor(2, 5, 2),)),
    (TPN2, "-N3", ["srun: error: Only allocated 2 nodes asked for 3"], ()),
    (N3N6, "-N1", ["srun: error: Unable to create step for job 30: More processors requested "
                   "than permitted"], ()),
    (N3N6, "-N2", ["srun: error: Unable to create step for job 30: More processors requested "
                   "than permitted"], ()),
    (N3N6, "-n7", ["srun: error: Unable to create step for job 30: More processors requested "
                   "than permitted"], ()),
    (N3N6, "-c2", ["srun: error: Unable to create step for job 30: More processors requested "
                   "than permitted"], ()),
    (N3N6, "-x n1", ["srun: error: Only allocated 2 nodes asked for 3",
                     "srun: error: Are required nodes explicitly excluded?"], ()),
    (N3N6, "-N2 -n2 -c3", ["srun: error: Unable to create step for job 30: More processors "
                           "requested than permitted"], ()),
    (N3N6, "-x n1,n2,n3", ["srun: error: Hostlist is empty!  Can't run job."], ()),
    (N3N6, "-w n4", ["srun: error: Unable to create step for job 30: Requested node "
                     "configuration is not available"], ()),
    (N2, "-n3", ["srun: error: Unable to create step for job 31: More processors requested "
                 "than permitted"], ()),
    (N2, "--ntasks-per-node=2", ["srun: error: Unable to create step for job 31: More "
                                 "processors requested than permitted"], ()),
]


@pytest.mark.parametrize("job, srun, lines, warnings", ERRORS,
                         ids=[f"{s[0]}|srun {s[1]}" for s in ERRORS])
def test_steps_that_do_not_fit_fail_at_once(job, srun, lines, warnings):
    error, printed = step_error(job, srun)
    assert error.render("srun").splitlines() == lines
    assert error.exit_code == 1
    assert printed == warnings


def test_nodelist_keeps_the_job_node_order():
    """``srun -w n3`` (no -n) in a -N3 -n6 job (observed, job2-N3-n6.out): the nodelist only
    requires n3; all 6 tasks run in job order, 0-3 on n1, 4 on n2, 5 on n3."""
    _, placed, layout = run_step(N3N6, "-w n3")
    assert [layout.node_indices, placed] == [(0, 1, 2), {"n1": (0, 1, 2, 3), "n2": (4,),
                                                         "n3": (5,)}]


def test_relative_beyond_the_allocation_names_relative():
    """``srun -r 2 -n2`` in a -N3 -n6 job (observed): srun lowered -N to 2 itself, which
    counts as -N given on the command line."""
    error, printed = step_error(N3N6, "-r 2 -n2")
    assert printed == (CANT_RUN.format(n=2, m=3),)
    assert error.render("srun").splitlines() == [
        "srun: error: --relative and --nodes option incompatible with count of allocated "
        "nodes (2+2>3)"]
    assert error.exit_code == 1


@pytest.mark.parametrize("srun, line", [
    # Observed on 22.05 and in 26.05's _validate_relative: the node count is the job's.
    ("-r 1", "srun: error: --relative and SLURM_JOB_NUM_NODES option incompatible with count "
             "of allocated nodes (1+3>3)"),
    ("-r 3 -N1 -n1", "srun: error: --relative and --nodes option incompatible with count of "
                     "allocated nodes (3+1>3)"),
])
def test_relative_with_the_inherited_node_count_names_the_variable(srun, line):
    error, _ = step_error(N3N6, srun)
    assert error.render("srun").splitlines() == [line]


def test_cpus_per_task_step_on_the_small_nodes():
    """``srun -c2 -n2`` in a -N3 -n6 job (CPUs 4,1,1; observed): the step's 4 CPUs fit in
    n1+n2, and a node too small for one task still runs one (slurm_step_layout.c)."""
    request, placed, layout = run_step(N3N6, "-c2 -n2")
    assert request.warnings == (CANT_RUN.format(n=2, m=3),)
    assert placed == {"n1": (0,), "n2": (1,)}
    assert layout.distribution == "cyclic"


def test_a_step_never_has_zero_tasks():
    """``srun -N 0-3 --ntasks-per-node=2`` in a -N3 -n6 job: srun asks for 3 nodes x 2 tasks
    (``_set_ntasks`` counts the step's nodes, not -N's minimum 0), and --ntasks-per-node caps
    each node's share of the layout: 3,2,1 as observed on real Slurm."""
    _, placed, layout = run_step(N3N6, "-N 0-3 --ntasks-per-node=2")
    assert placed == {"n1": (0, 1, 2), "n2": (3, 4), "n3": (5,)}
    assert layout.distribution == "block"


def test_a_node_range_takes_the_nodes_the_cpus_need():
    """``srun -N 1-3`` in a -N3 -n6 job (observed on 22.05: 4,1(x2))."""
    _, placed, _ = run_step(N3N6, "-N 1-3")
    assert placed == {"n1": (0, 1, 2, 3), "n2": (4,), "n3": (5,)}


# -- what srun inherits from the job ------------------------------------------------------------

@pytest.mark.parametrize("job, srun, ntasks, per_node, nodes, cpt", [
    (TPN2, "", 4, 2, (2, 2), None),
    (N3N6, "", 6, None, (3, 3), None),
    (N2, "", 2, None, (2, 2), None),               # no SLURM_NTASKS: one task per node
    ("-N2 -c2", "", 2, None, (2, 2), 2),           # SLURM_CPUS_PER_TASK is read (23.11+)
    ("-N2 -c2", "-c1", 2, None, (2, 2), 1),
    (TPN2, "-n3", 3, 2, (2, 2), None),
    # The env's SLURM_NTASKS dropped: layout_step counts the step's nodes x 2.
    (TPN2, "-N1", None, 2, (1, 1), None),
])
def test_request_inherits_the_jobs_geometry(job, srun, ntasks, per_node, nodes, cpt):
    env, _, _, _ = job_env(job)
    request = parse_srun(words(srun) + ["hostname"], env)
    assert request.ntasks == ntasks
    assert request.ntasks_per_node == per_node
    assert (request.nodes.min_nodes, request.nodes.max_nodes) == nodes
    assert request.cpus_per_task == cpt


def test_job_name_is_not_inherited_inside_a_job():
    env, _, _, _ = job_env(TPN2)
    assert env["SLURM_JOB_NAME"] == "job.sh"
    assert parse_srun(["hostname"], env).job_name is None
    assert parse_srun(["-J", "mine", "hostname"], env).job_name == "mine"


def test_options_after_the_command_belong_to_it():
    env, _, _, _ = job_env(TPN2)
    request = parse_srun(["-l", "python", "train.py", "--nodes", "3", "-n", "9"], env)
    assert request.command == ("python", "train.py", "--nodes", "3", "-n", "9")
    assert (request.label, request.ntasks) == (True, 4)


def test_partition_inside_a_job_is_accepted():
    """``srun -p nosuchpart -n1 true`` inside an allocation succeeds on real Slurm."""
    env, names, cpus, _ = job_env(TPN2)
    request = parse_srun(["-p", "nosuchpart", "-n1", "true"], env)
    assert layout_step(request, names, cpus, 29).ntasks == 1


@pytest.mark.parametrize("argv, lines, code", [
    (["--bogus", "true"], ["srun: unrecognized option '--bogus'",
                           'Try "srun --help" for more information'], 255),
    (["-N", "abc", "true"], ['srun: error: "abc" is not a valid node count'], 255),
    (["--time=xyz", "true"], ["srun: error: Invalid --time specification"], 255),
    (["--mem=12Q", "true"], ["srun: error: Invalid --mem specification"], 255),
    (["-n", "abc", "true"], ['srun: error: Invalid numeric value "abc" for --ntasks.'], 1),
    (["-n", "0", "true"], ['srun: error: Invalid numeric value "0" for --ntasks.'], 1),
    (["--het-group=0", "true"], ["srun: error: --het-group is not supported by sbatch-k8s: no "
                                 "heterogeneous jobs"], 1),
])
def test_srun_option_errors(argv, lines, code):
    env, _, _, _ = job_env(TPN2)
    with pytest.raises(SlurmInputError) as caught:
        parse_srun(argv, env)
    assert caught.value.render("srun").splitlines() == lines
    assert caught.value.exit_code == code


@pytest.mark.parametrize("argv", [[], ["-l", "-n2"]])
def test_no_command_is_fatal(argv):
    """Observed on 22.05 (srun/opt.c fatal()): ``srun: fatal: No command given to execute.``"""
    with pytest.raises(SlurmInputError) as caught:
        parse_srun(argv, {})
    assert caught.value.render("srun") == "srun: fatal: No command given to execute.\n"
    assert caught.value.exit_code == 1


def test_no_command_is_fatal_outside_a_job_too():
    """srun outside an allocation (sbatch_k8s/cli/srun.py) refuses it in the same words."""
    from sbatch_k8s.backends.local.srun_outside import allocation_argv

    with pytest.raises(SlurmInputError) as caught:
        allocation_argv(["-N2"], "/tmp")
    assert caught.value.render("srun") == "srun: fatal: No command given to execute.\n"
    assert caught.value.exit_code == 1


def test_arbitrary_distribution_follows_the_nodelist():
    _, placed, layout = run_step(TPN2, "-m arbitrary -w n2,n1,n1")
    assert placed == {"n2": (0,), "n1": (1, 2)}
    assert layout.distribution == "arbitrary"


def test_plane_distribution():
    _, placed, _ = run_step(TPN2, "-m plane=3")
    assert placed == {"n1": (0, 1, 2), "n2": (3,)}
