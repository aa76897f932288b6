"""Ports of Slurm's option handling that sbatch-k8s had only half: ``--tres-per-task``
(``_validate_tres_per_task``), node ranges with ``--gpus``, the early environment
(``_opt_early_env``) and ``--mail-type`` (``parse_mail_type``)."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.values.gres import GpuCount
from tests.pod_side.support import SCRIPT, allocation_for, job_for, submit


def _fatal(args, env=None) -> str:
    with pytest.raises(SlurmInputError) as e:
        submit(SCRIPT, f"{args} job.sh", env)
    return e.value.render("sbatch").rstrip("\n")


# -- --tres-per-task (slurm_opt.c _validate_tres_per_task) ---------------------------------

@pytest.mark.parametrize("args, cpus, gpus", [
    ("--tres-per-task=cpu=4", 4, ()),
    ("--tres-per-task=cpu:2,gres/gpu:1", 2, (GpuCount(None, 1),)),
    ("--tres-per-task=gres/gpu:a100:2", None, (GpuCount("a100", 2),)),
    ("--tres-per-task=gres:gpu:1", None, (GpuCount(None, 1),)),
    ("-c3 --tres-per-task=gres/gpu=1", 3, (GpuCount(None, 1),)),
])
def test_cpu_and_gpu_entries_are_applied_as_c_and_gpus_per_task(args, cpus, gpus):
    job = job_for(f"-n2 {args}")
    assert (job.cpus_per_task, job.gpus_per_task) == (cpus, gpus)


def test_the_allocation_follows_them():
    allocation = allocation_for("-n2 --tres-per-task=cpu=2,gres/gpu:1")
    assert (allocation.cpus_per_node, allocation.gpus_per_node) == ((4,), 2)


@pytest.mark.parametrize("args, line", [
    ("--tres-per-task=mem=4G", "Invalid TRES for --tres-per-task: mem"),
    ("--tres-per-task=cpu=1,memory=4", "Invalid TRES for --tres-per-task: mem"),
    ("--tres-per-task=node=1", "Invalid TRES for --tres-per-task: node"),
    ("--tres-per-task=billing=1", "Invalid TRES for --tres-per-task: billing"),
    ("--tres-per-task=fs/disk=1", "Invalid TRES for --tres-per-task: fs"),
    ("--tres-per-task=bb/datawarp=1", "Invalid TRES for --tres-per-task: bb"),
    ("-c2 --tres-per-task=cpu=2",
     "You can not have --tres-per-task=cpu= and --cpus-per-task please use one or the other"),
    ("--gpus-per-task=1 --tres-per-task=gres/gpu:1",
     "You can not have --tres-per-task=gres/gpu= and --gpus-per-task please use one or the "
     "other"),
])
def test_what_slurm_refuses(args, line):
    assert _fatal(f"-n1 {args}") == f"sbatch: fatal: {line}"


def test_an_option_beats_the_environments_entry():
    job, _ = submit(SCRIPT, "-c3 job.sh", {"SBATCH_TRES_PER_TASK": "cpu=2"})
    assert job.cpus_per_task == 3
    assert job.tres_per_task == (("cpu", 3),)


# -- node ranges: slurmctld takes only the nodes the GPUs need (real 22.05) ----------------

@pytest.mark.parametrize("args, nodes, warnings", [
    ("-N1-3 --gpus=2", 1, ()),      # observed: 1 node (n1) on the 4-GPU nodes
    ("-N1-3 --gpus=5", 2, None),    # observed: 2 nodes
    ("-N2-3 --gpus=2", 2, ()),
    ("-N1-3", 3, ()),               # observed: n[1-3]
    ("-N1-3 -n2", 2, ()),           # observed: n[1-2], no warning
    ("-N2-3 -n1", 1, ("can't run 1 processes on 2 nodes, setting nnodes to 1",)),  # observed
    ("-N3 -n2", 2, ("can't run 2 processes on 3 nodes, setting nnodes to 2",)),    # observed
])
def test_node_ranges(args, nodes, warnings):
    allocation = allocation_for(args)
    assert allocation.node_count == nodes
    if warnings is not None:
        assert allocation.warnings == warnings


# -- SBATCH_IGNORE_PBS and SBATCH_DEBUG come before everything (sbatch/opt.c) -------------

PBS = "#!/bin/sh\n#SBATCH --ignore-pbs\n#PBS -N pbsname\ntrue\n"


def test_ignore_pbs_variable_is_read_before_the_script():
    """Real 22.05: SBATCH_IGNORE_PBS=no does not undo the script's #SBATCH --ignore-pbs."""
    job, _ = submit(PBS, "job.sh", {"SBATCH_IGNORE_PBS": "no"})
    assert job.ignore_pbs is True


def test_verbose_is_not_read_from_the_script():
    """Real 22.05: #SBATCH -vvv leaves sbatch quiet (verbose is set in the early pass)."""
    _, options = submit("#!/bin/sh\n#SBATCH -vvv\n#SBATCH -Q\ntrue\n", "job.sh")
    assert (options.verbose, options.quiet) == (0, False)


def test_a_bad_debug_variable_is_reported_before_the_command_line():
    from parsers.sbatch_input import first_pass

    with pytest.raises(SlurmInputError) as e:
        first_pass(["--time=abc", "job.sh"], {"SBATCH_DEBUG": "yes"})
    assert e.value.lines == ('Invalid numeric value "yes" for --verbose.',)


# -- --mail-type (proc_args.c parse_mail_type; real 22.05 observed) ------------------------

@pytest.mark.parametrize("text, kinds", [
    ("begin, end", ("BEGIN",)),
    ("bogus,end", ("END",)),
    ("end,,fail", ("END", "FAIL")),
    ("NONE,bogus", ("NONE",)),
    ("Time_Limit_90", ("TIME_LIMIT_90",)),
])
def test_mail_types_are_read_as_slurm_reads_them(text, kinds):
    assert job_for([f"--mail-type={text}"]).other("mail_type") == kinds


@pytest.mark.parametrize("text", [" end", ",", "", "\u017ftage_out", "beg\u0131n"])
def test_invalid_mail_types(text):
    assert _fatal(f"'--mail-type={text}'") == "sbatch: error: Invalid --mail-type specification"
