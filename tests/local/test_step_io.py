"""srun's files, step accounting and step-level scancel, as real Slurm behaves (observed on
22.05 by the conformance suite)."""

from __future__ import annotations

import os

from tests.local.harness import LocalSlurm, job_id_of, shell_wait


def _job(slurm: LocalSlurm, body: str, options: str = "-N1 -n2") -> str:
    slurm.script("job.sh", f"#!/bin/bash\n#SBATCH {options}\n{body}")
    done = slurm.run("sbatch", "--wait", "-o", "job.out", "job.sh", timeout=120)
    assert done.stderr == "" or "Submitted" not in done.stderr, done.stderr
    return slurm.read("job.out")


def test_stderr_follows_the_output_option(slurm: LocalSlurm) -> None:
    body = """\
run() { srun -n2 "$@" bash -c 'echo out$SLURM_PROCID; echo err$SLURM_PROCID >&2'; }
run -o out-%t.txt; cat out-0.txt out-1.txt
echo ---none; run -o none
echo ---one; run -o 1 2>/dev/null
echo ---all; srun -n1 -o all bash -c 'echo out; echo err >&2' 2>/dev/null
echo ---single; run -o single.txt; sort single.txt
echo ---apart; srun -n1 -o o.txt -e e.txt bash -c 'echo out; echo err >&2'; cat o.txt e.txt
"""
    assert _job(slurm, body) == ("out0\nerr0\nout1\nerr1\n---none\n---one\nout1\nerr1\n"
                                 "---all\nout\n---single\nerr0\nerr1\nout0\nout1\n"
                                 "---apart\nout\nerr\n")


def test_input_files(slurm: LocalSlurm) -> None:
    body = """\
printf 'line1\\nline2\\n' > in.txt; echo task0 > in-0.txt; echo task1 > in-1.txt
srun -n1 -i nosuchfile true; echo "rc=$?"
srun -n2 --label -i in.txt cat | sort
srun -n2 --label -i in-%t.txt cat | sort
srun -n1 -i missing-%t.txt cat; echo "rc=$?"
"""
    missing = os.path.join(str(slurm.work), "missing-0.txt")
    assert _job(slurm, body) == (
        "srun: error: Could not open stdin file: No such file or directory\nrc=1\n"
        "0: line1\n0: line2\n1: line1\n1: line2\n0: task0\n1: task1\n"
        f"slurmstepd: error: Could not open stdin file {missing}: No such file or directory\n"
        "srun: error: 127.0.0.2: task 0: Exited with exit code 1\nrc=1\n")


def test_exec_failures_exit_with_the_errno(slurm: LocalSlurm) -> None:
    body = "srun -n1 /etc/passwd; echo \"rc=$?\"\nsrun -n1 ./missing; echo \"rc=$?\"\n"
    assert _job(slurm, body) == (
        "slurmstepd: error: execve(): /etc/passwd: Permission denied\n"
        "srun: error: 127.0.0.2: task 0: Exited with exit code 13\nrc=13\n"
        f"slurmstepd: error: execve(): {slurm.work}/./missing: No such file or directory\n"
        "srun: error: 127.0.0.2: task 0: Exited with exit code 2\nrc=2\n")


def test_step_states_in_sacct(slurm: LocalSlurm) -> None:
    body = ("srun -n2 bash -c '[ $SLURM_PROCID = 0 ] && kill -SEGV $$; exit 4'\n"
            "srun -n2 -K bash -c '[ $SLURM_PROCID = 0 ] && exit 3; exec sleep 30'\n"
            "srun -n1 true\n")
    slurm.script("job.sh", f"#!/bin/bash\n#SBATCH -N1 -n2\n{body}")
    job = job_id_of(slurm.run("sbatch", "--wait", "-o", "/dev/null", "job.sh").stdout)
    acct = slurm.run("sacct", "-j", str(job), "-P", "-n", "-o",
                     "JobID,State,ExitCode,AllocCPUS").stdout.splitlines()
    assert acct == [f"{job}|COMPLETED|0:0|2", f"{job}.batch|COMPLETED|0:0|2",
                    f"{job}.extern|COMPLETED|0:0|2", f"{job}.0|FAILED|4:0|2",
                    f"{job}.1|CANCELLED|0:15|2", f"{job}.2|COMPLETED|0:0|1"]


def test_scancel_of_one_step_and_sacct_of_a_running_job(slurm: LocalSlurm) -> None:
    """``scancel -s USR1`` of a step reaches both its tasks (the script cancels the step once
    both lines are in its output, job.out), ``scancel`` ends it; sacct lists the running job
    and its steps."""
    both_up = shell_wait("[ -e up.0 ] && [ -e up.1 ]")
    both_got = shell_wait('[ "$(grep -c "^got USR1" job.out)" -ge 2 ]')
    body = f"""\
srun -n2 bash -c 'trap "echo got USR1 \\$SLURM_PROCID" USR1; touch up.$SLURM_PROCID
  while true; do sleep 0.1; done' &
pid=$!
{both_up}
scancel -v -s USR1 $SLURM_JOB_ID.0
{both_got}
scancel -v $SLURM_JOB_ID.0
wait $pid; echo "srun rc=$?"
srun -n1 true
sacct -j $SLURM_JOB_ID -P -n -o JobID,State,ExitCode
"""
    # (bash reports its sleep killed by USR1: "User defined signal 1")
    out = [line for line in _job(slurm, body).splitlines() if "User defined" not in line]
    job = out[-1].split(".")[0]
    assert out[0] == f"scancel: Signal 10 to step {job}.0"
    assert sorted(out[1:3]) == ["got USR1 0", "got USR1 1"]
    assert out[3] == f"scancel: Terminating step {job}.0"
    assert out[4].startswith(f"slurmstepd: error: *** STEP {job}.0 ON 127.0.0.2 CANCELLED AT ")
    assert "srun rc=137" in out
    assert out[-5:] == [f"{job}|RUNNING|0:0", f"{job}.batch|RUNNING|0:0",
                        f"{job}.extern|RUNNING|0:0", f"{job}.0|CANCELLED|0:9",
                        f"{job}.1|COMPLETED|0:0"]


def test_a_script_killed_by_a_signal_is_a_launch_failure(slurm: LocalSlurm) -> None:
    job = job_id_of(slurm.run("sbatch", "--wait", "-o", "/dev/null", "--wrap",
                              "kill -9 $$").stdout)
    shown = slurm.run("scontrol", "show", "job", str(job)).stdout
    assert "JobState=FAILED Reason=JobLaunchFailure " in shown
    assert " ExitCode=0:9\n" in shown
