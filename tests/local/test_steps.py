"""srun inside a job: layout, environment, labels, stdin, exit rules, parallel steps."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.local.harness import LocalSlurm, job_id_of, shell_wait


def run_job(slurm: LocalSlurm, body: str, *args: str) -> str:
    """Run a script (``body`` after the shebang) to its end; its output file."""
    slurm.script("job.sh", "#!/bin/bash\n" + body)
    done = slurm.run("sbatch", "--wait", "-o", "job.out", *args, "job.sh")
    assert done.stderr == "" or "warning" in done.stderr, done.stderr
    return slurm.read("job.out")


def test_sequential_steps_are_numbered_and_laid_out_in_blocks(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "srun bash -c 'echo $SLURM_STEP_ID $SLURM_PROCID $SLURM_NODEID "
                  "$SLURM_LOCALID $SLURMD_NODENAME $SLURM_STEP_TASKS_PER_NODE' | sort\n"
                  "srun -n3 bash -c 'echo $SLURM_STEP_ID $SLURM_PROCID $SLURM_NODEID' | sort\n"
                  "srun -N1 bash -c 'echo $SLURM_STEP_ID $SLURM_PROCID $SLURM_NTASKS' | sort\n",
                  "-N2", "--ntasks-per-node=2")
    assert out.splitlines() == [
        "0 0 0 0 127.0.0.2 2(x2)", "0 1 0 1 127.0.0.2 2(x2)",
        "0 2 1 0 127.0.0.3 2(x2)", "0 3 1 1 127.0.0.3 2(x2)",
        "1 0 0", "1 1 0", "1 2 1",
        "2 0 2", "2 1 2",
    ]


def test_a_step_is_named_by_srun_j_else_by_its_command(slurm: LocalSlurm) -> None:
    """As slurmctld names steps (real Slurm 22.05: ``496.0|named``, ``496.1|true``); the
    job's own name in the environment does not name its steps."""
    slurm.script("job.sh", "#!/bin/bash\n#SBATCH -J wrap\nsrun -J named true\nsrun true\n")
    job = job_id_of(slurm.run("sbatch", "--wait", "-o", "/dev/null", "job.sh").stdout)
    steps = slurm.run("sacct", "-j", str(job), "-n", "-P", "-o", "JobID,JobName").stdout
    assert f"{job}.0|named" in steps.splitlines() and f"{job}.1|true" in steps.splitlines()


def test_nodes_only_job_runs_one_task_per_node(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "echo batch ${SLURM_NTASKS-unset} $SLURM_TASKS_PER_NODE\n"
                  "srun bash -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_DISTRIBUTION' | sort\n",
                  "-N3")
    assert out.splitlines() == ["batch unset 1(x3)", "0 3 cyclic", "1 3 cyclic",
                                "2 3 cyclic"]


def test_label_width_follows_the_task_count(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "srun -l -n11 --overcommit echo hi | sort | head -3\n"
                  "srun -l -n2 printf abc | sort\n", "-n2")
    assert out.splitlines() == [" 0: hi", " 1: hi", " 2: hi", "0: abc", "1: abc"]


def test_unlabelled_output_passes_partial_lines_through(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "srun -n1 printf abc; echo; srun -n1 bash -c 'printf a; sleep 0.2; "
                  "printf b; echo c'\n")
    assert out == "abc\nabc\n"


def test_stdin_goes_to_every_task_by_default(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "echo hi | srun -l -n2 cat | sort\n"
                  "echo one | srun -l -n2 -i 1 cat | sort\n"
                  "echo none | srun -l -n2 -i none cat | sort\n", "-n2")
    assert out.splitlines() == ["0: hi", "1: hi", "1: one"]


def test_background_step_on_one_node_and_wait(slurm: LocalSlurm) -> None:
    """A step in the background runs beside the steps that follow (it prints once the
    foreground step has ended), and ``wait`` waits for it."""
    after_fg = shell_wait("[ -e fg.done ]")
    out = run_job(slurm, "srun --overlap -N1 -n1 -w 127.0.0.3 bash -c "
                  f"'{after_fg}; echo bg $SLURMD_NODENAME' &\n"
                  "srun --overlap -n2 bash -c 'echo fg $SLURM_PROCID' | sort\n"
                  "touch fg.done\nwait\necho all done\n", "-N2")
    assert out.splitlines() == ["fg 0", "fg 1", "bg 127.0.0.3", "all done"]


def test_parallel_steps_wait_for_cpus_unless_they_overlap(slurm: LocalSlurm) -> None:
    """While step A holds the job's CPUs (both its tasks up, until the script lets it end),
    an overlapping step C runs at once and step B waits, saying so, until A has ended."""
    a_holds = shell_wait("[ -e a.go ]")
    a_is_up = shell_wait("[ -e a.0 ] && [ -e a.1 ]")
    b_waits = shell_wait('grep -q "Requested nodes are busy" job.out')   # run_job's -o
    out = run_job(slurm, f"srun -n2 bash -c 'touch a.$SLURM_PROCID; {a_holds}; echo A' &\n"
                  f"{a_is_up}\n"
                  "srun --overlap -N1 -n1 echo C\n"
                  "srun -N1 -n1 echo B 2>&1 &\n"
                  f"{b_waits}\ntouch a.go\nwait\n", "-N2")
    lines = out.splitlines()
    assert lines[0] == "C"
    assert "srun: Job" in out and "step creation temporarily disabled, retrying " \
                                  "(Requested nodes are busy)" in out
    assert lines.index("B") > lines.index("A")


def test_exit_codes_and_error_lines(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "srun -n4 bash -c 'exit 3' 2>&1; echo rc=$?\n"
                  "srun -n2 bash -c '[ $SLURM_PROCID = 1 ] && kill -9 $$; sleep 0.3' 2>&1;"
                  " echo rc=$?\n"
                  "srun -N1 -n1 nonexistent-command 2>&1; echo rc=$?\n", "-N2", "-n4")
    lines = out.splitlines()
    job = out.split("StepId=")[1].split(".")[0]
    assert sorted(lines[:2]) == [
        "srun: error: 127.0.0.2: tasks 0-2: Exited with exit code 3",
        "srun: error: 127.0.0.3: task 3: Exited with exit code 3"]
    assert lines[2:] == [
        "rc=3",
        "srun: error: 127.0.0.3: task 1: Killed",
        f"srun: Force Terminated StepId={job}.1",
        "rc=137",
        "slurmstepd: error: execve(): nonexistent-command: No such file or directory",
        "srun: error: 127.0.0.2: task 0: Exited with exit code 2",
        "rc=2",
    ]


def test_kill_on_bad_exit_ends_the_step(slurm: LocalSlurm) -> None:
    out = run_job(slurm, "srun -K -n4 bash -c '[ $SLURM_PROCID = 1 ] && exit 3; sleep 30' "
                  "2>&1; echo rc=$?\n", "-N2", "-n4")
    lines = out.splitlines()
    assert lines[0] == "srun: error: 127.0.0.2: task 1: Exited with exit code 3"
    assert re.fullmatch(r"srun: Terminating StepId=\d+\.0", lines[1])
    assert re.fullmatch(r"slurmstepd: error: \*\*\* STEP \d+\.0 ON 127\.0\.0\.2 CANCELLED AT "
                        r"\S+ \*\*\*", lines[2])
    assert "srun: error: 127.0.0.3: task 3: Terminated" in lines or \
        "srun: error: 127.0.0.3: tasks 2-3: Terminated" in lines
    assert lines[-1] == "rc=143"


@pytest.mark.parametrize("options, code, stderr", [
    ("--bogus", 255, "srun: unrecognized option '--bogus'\n"
                     "Try \"srun --help\" for more information\n"),
    ("-N abc", 255, 'srun: error: "abc" is not a valid node count\n'),
    ("--time=xyz", 255, "srun: error: Invalid --time specification\n"),
    ("-n abc", 1, 'srun: error: Invalid numeric value "abc" for --ntasks.\n'),
    ("-n5", 1, "srun: error: Unable to create step for job {job}: More processors requested "
               "than permitted\n"),
    ("-x 127.0.0.2 -N2", 1, "srun: error: Only allocated 1 nodes asked for 2\n"
                            "srun: error: Are required nodes explicitly excluded?\n"),
])
def test_bad_srun_options_give_slurms_errors(slurm: LocalSlurm, options: str, code: int,
                                             stderr: str) -> None:
    slurm.script("job.sh", f"#!/bin/bash\nsrun {options} true 2>err.txt\necho rc=$?\n")
    done = slurm.run("sbatch", "--wait", "-o", "job.out", "-N2", "-n4", "job.sh")
    job = job_id_of(done.stdout)
    assert slurm.read("job.out") == f"rc={code}\n"
    assert slurm.read("err.txt") == stderr.format(job=job)


def test_srun_outside_an_allocation_creates_a_job(slurm: LocalSlurm) -> None:
    done = slurm.run("srun", "-N2", "-n3", "-l", "bash", "-c",
                     "echo $SLURM_PROCID $SLURM_NTASKS; cat", stdin="in\n")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["0: 0 3", "0: in", "1: 1 3", "1: in",
                                                "2: 2 3", "2: in"]
    failed = slurm.run("srun", "-n2", "bash", "-c", "exit $((SLURM_PROCID+4))")
    assert failed.returncode == 5
    assert "srun: error: 127.0.0.2: task 1: Exited with exit code 5" in failed.stderr


def test_pyxis_options_on_srun(slurm: LocalSlurm) -> None:
    # "#" would end the directive (as in Slurm): the pyxis registry separator is escaped.
    slurm.script("job.sh", "#!/bin/bash\n#SBATCH --container-image=nvcr.io\\#nvidia/pytorch:24.01\n"
                 "#SBATCH --container-mounts=/data:/data\n"
                 "srun --container-image=nvcr.io/nvidia/pytorch:24.01 "
                 "--container-mounts=/data:/data "
                 "--container-workdir=/tmp pwd; echo rc=$?\n"
                 "srun --container-image=ubuntu:22.04 true; echo rc=$?\n"
                 "srun --container-mounts=/scratch:/scratch true; echo rc=$?\n")
    done = slurm.run("sbatch", "--wait", "-o", "job.out", "job.sh")
    assert ("sbatch: warning: --container-image has no effect on the local backend: jobs run"
            in done.stderr)
    assert slurm.read("job.out").splitlines() == [
        "/tmp", "rc=0",
        "srun: error: --container-image=ubuntu:22.04: this job runs in "
        "nvcr.io#nvidia/pytorch:24.01; sbatch-k8s runs every step in the job's image", "rc=1",
        "srun: error: --container-mounts: /scratch is not mounted in this job; mounts are made "
        "when the job starts (give them to sbatch's --container-mounts)", "rc=1"]


def test_jobs_that_do_not_fit_wait_for_resources(tmp_path: Path) -> None:
    """A job that does not fit beside a running one waits (``PD Resources``) until it ends
    (the first job runs until the test has seen that); one that can never fit is refused."""
    cluster = LocalSlurm(tmp_path, config="[local]\ncpus = 4\n")
    go = cluster.work / "first.go"
    try:
        first = job_id_of(cluster.run("sbatch", "-n4", "--wrap",
                                      shell_wait(f"[ -e {go} ]")).stdout)
        second = job_id_of(cluster.run("sbatch", "-n2", "-o", "second.out", "--wrap",
                                       "echo ran").stdout)
        try:
            cluster.wait_for(lambda: cluster.run("squeue", "-h", "-j", str(second), "-o",
                                                 "%t %r").stdout == "PD Resources\n", timeout=60)
            assert cluster.run("squeue", "-h", "-j", str(first), "-o", "%t").stdout == "R\n"
        finally:
            go.touch()
        cluster.wait_for(lambda: (cluster.work / "second.out").exists(), timeout=60)
        cluster.wait_for(lambda: cluster.read("second.out") == "ran\n", timeout=60)
        too_big = cluster.run("sbatch", "-n5", "--wrap", "true")
        assert (too_big.returncode, too_big.stderr) == (
            1, "sbatch: error: the job needs 5 CPUs; this machine offers 4 (cpus = N in the "
               "[local] table of the configuration file ($SBATCHK8S_CONFIG, else "
               "~/.config/sbatch-k8s/config.toml))\n"
               "sbatch: error: Batch job submission failed: Requested node configuration is "
               "not available\n")
    finally:
        cluster.cleanup()


def test_a_task_is_over_when_its_process_is(slurm: LocalSlurm, tmp_path) -> None:
    """What a task started keeps its output pipes open (a torchrun worker whose agent the
    OOM killer took, a daemon): the step still ends when the task's own process has, and what
    it left running is killed with the step, as Slurm's process tracking kills it. Before,
    srun waited for the pipes (the job sat until its time limit)."""
    marker = f"leftover-{tmp_path.name}"
    out = run_job(slurm, f"srun -N2 bash -c 'exec -a {marker} sleep 300 & echo started'\n"
                  "echo step ended with $?\n", "-N2")
    assert out.splitlines() == ["started", "started", "step ended with 0"], out
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout == "", f"left running: {left.stdout}"
