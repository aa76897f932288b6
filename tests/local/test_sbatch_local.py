"""sbatch on the local backend: submission output, --wait, output files, arrays, errors."""

from __future__ import annotations

import re

import pytest

from tests.local.harness import LocalSlurm, job_id_of

HELLO = """#!/bin/bash
#SBATCH --job-name=hello --nodes=2 --ntasks-per-node=2
#SBATCH --output=hello-%j.out
echo "job $SLURM_JOB_ID nodes $SLURM_JOB_NODELIST tasks $SLURM_NTASKS args $*"
srun --label hostname >/dev/null
srun --label bash -c 'echo "rank $SLURM_PROCID on $SLURMD_NODENAME"' | sort
"""


def test_submits_runs_and_writes_the_output_file(slurm: LocalSlurm) -> None:
    slurm.script("hello.sh", HELLO)
    done = slurm.run("sbatch", "--wait", "hello.sh", "a", "b c")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"Submitted batch job \d+\n", done.stdout)
    job = job_id_of(done.stdout)
    assert slurm.read(f"hello-{job}.out").splitlines() == [
        f"job {job} nodes 127.0.0.[2-3] tasks 4 args a b c",
        "0: rank 0 on 127.0.0.2",
        "1: rank 1 on 127.0.0.2",
        "2: rank 2 on 127.0.0.3",
        "3: rank 3 on 127.0.0.3",
    ]


def test_parsable_and_quiet(slurm: LocalSlurm) -> None:
    parsable = slurm.run("sbatch", "--parsable", "--wrap", "true")
    assert re.fullmatch(r"\d+\n", parsable.stdout) and parsable.returncode == 0
    quiet = slurm.run("sbatch", "-Q", "--wrap", "true")
    assert quiet.stdout == "" and quiet.returncode == 0
    following = slurm.run("sbatch", "--parsable", "--wrap", "true")
    assert int(following.stdout) == int(parsable.stdout) + 2


@pytest.mark.parametrize("command, code", [
    ("exit 0", 0), ("exit 3", 3), ("kill -9 $$", 1), ("kill -TERM $$", 1),
])
def test_wait_returns_the_jobs_exit_code(slurm: LocalSlurm, command: str, code: int) -> None:
    done = slurm.run("sbatch", "--wait", "-o", "/dev/null", "--wrap", command)
    assert done.returncode == code, done.stderr


def test_default_output_name_and_patterns(slurm: LocalSlurm) -> None:
    job = job_id_of(slurm.run("sbatch", "--wait", "--wrap", "echo out; echo err >&2").stdout)
    assert slurm.read(f"slurm-{job}.out") == "out\nerr\n"
    done = slurm.run("sbatch", "--wait", "-J", "pat", "-o", "logs/%x-%4j.out",
                     "-e", "logs/%x-%j.err", "--wrap", "echo out; echo err >&2")
    job = job_id_of(done.stdout)
    assert slurm.read(f"logs/pat-{job:04d}.out") == "out\n"
    assert slurm.read(f"logs/pat-{job}.err") == "err\n"


def test_open_mode_append_keeps_earlier_output(slurm: LocalSlurm) -> None:
    for word in ("one", "two"):
        slurm.run("sbatch", "--wait", "-o", "same.out", "--open-mode=append", "--wrap",
                  f"echo {word}")
    assert slurm.read("same.out") == "one\ntwo\n"
    slurm.run("sbatch", "--wait", "-o", "same.out", "--wrap", "echo three")
    assert slurm.read("same.out") == "three\n"


def test_chdir_and_missing_workdir(slurm: LocalSlurm) -> None:
    (slurm.work / "sub").mkdir()
    slurm.run("sbatch", "--wait", "-D", "sub", "-o", "where.out", "--wrap", "pwd")
    assert slurm.read("sub/where.out").strip().endswith("/work/sub")


def test_array_elements_and_their_variables(slurm: LocalSlurm) -> None:
    script = slurm.script("arr.sh", "#!/bin/sh\n#SBATCH --array=1-5:2%2 -o arr-%A_%a.out\n"
                          "echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_JOB_ID "
                          "$SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX "
                          "$SLURM_ARRAY_TASK_STEP\n")
    done = slurm.run("sbatch", "--wait", script)
    base = job_id_of(done.stdout)
    seen = [slurm.read(f"arr-{base}_{task}.out").split() for task in (1, 3, 5)]
    assert [s[:2] for s in seen] == [[str(base), "1"], [str(base), "3"], [str(base), "5"]]
    assert sorted(int(s[2]) for s in seen) == [base, base + 1, base + 2]
    assert all(s[3:] == ["3", "1", "5", "2"] for s in seen)


def test_wait_on_an_array_returns_the_highest_exit_code(slurm: LocalSlurm) -> None:
    done = slurm.run("sbatch", "--wait", "--array=0-3", "-o", "/dev/null", "--wrap",
                     "exit $SLURM_ARRAY_TASK_ID")
    assert done.returncode == 3


def test_squeue_folds_the_pending_elements_of_an_array(slurm: LocalSlurm) -> None:
    held = job_id_of(slurm.run("sbatch", "-H", "--array=1-7,9", "--wrap", "true").stdout)
    limited = job_id_of(slurm.run("sbatch", "--array=1-6%2", "-o", "/dev/null", "--wrap",
                                  "sleep 30").stdout)
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", str(limited), "-t", "R",
                                     "-o", "%i").stdout.count("\n") == 2)
    listing = slurm.run("squeue", "-h", "-o", "%i %t %r").stdout.splitlines()
    # Slurm's default order: pending by priority (a held job's is 0), then running.
    assert listing == [f"{limited}_[3-6%2] PD JobArrayTaskLimit",
                       f"{held}_[1-7,9] PD JobHeldUser",
                       f"{limited}_1 R None", f"{limited}_2 R None"]
    expanded = slurm.run("squeue", "-h", "-r", "-j", str(held), "-o", "%i").stdout.split()
    assert expanded == [f"{held}_{task}" for task in (1, 2, 3, 4, 5, 6, 7, 9)]
    slurm.run("scancel", str(limited))


def test_test_only_creates_nothing(slurm: LocalSlurm) -> None:
    done = slurm.run("sbatch", "--test-only", "-N2", "--wrap", "true")
    assert done.returncode == 0 and done.stdout == ""
    assert re.fullmatch(r"sbatch: Job \d+ to start at \S+ using 2 processors on nodes "
                        r"127\.0\.0\.\[2-3\] in partition debug\n", done.stderr)


@pytest.mark.parametrize("script, args, code, stderr", [
    ("#!/bin/bash\n#SBATCH --time=abc\necho hello\n", (), 255,
     "sbatch: error: Invalid --time specification\n"),
    ("#!/bin/bash\n#SBATCH --bogus=1\necho hello\n", (), 255,
     "sbatch: unrecognized option '--bogus=1'\n"
     "Try \"sbatch --help\" for more information\n"),
    ("#!/bin/bash\n#SBATCH --nodes=0\necho hello\n", (), 1,
     "sbatch: error: Batch job submission failed: Node count specification invalid\n"),
    ("#!/bin/bash\n#SBATCH --array=5-1\necho hello\n", (), 1,
     "sbatch: error: Batch job submission failed: Invalid job array specification\n"),
    ("echo hello\n", (), 1,
     "sbatch: error: This does not look like a batch script.  The first\n"
     "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
     "sbatch: error: For instance: #!/bin/sh\n"),
    ("", (), 1, "sbatch: error: Batch script is empty!\n"),
    ("#!/bin/sh\ntrue\n", ("--mem=1000", "--mem-per-cpu=100"), 1,
     "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"),
])
def test_bad_input_gets_slurms_words_and_creates_nothing(
        slurm: LocalSlurm, script: str, args: tuple, code: int, stderr: str) -> None:
    slurm.script("job.sh", script)
    done = slurm.run("sbatch", *args, "job.sh")
    assert (done.returncode, done.stdout, done.stderr) == (code, "", stderr)
    assert not (slurm.state / "jobs").exists() or not any((slurm.state / "jobs").iterdir())


def test_missing_script_file(slurm: LocalSlurm) -> None:
    done = slurm.run("sbatch", "nope.sh")
    assert (done.returncode, done.stderr) == (1, "sbatch: error: Unable to open file nope.sh\n")


def test_script_from_stdin_is_named_sbatch(slurm: LocalSlurm) -> None:
    """The controller names it ``sbatch``; sbatch itself exported no name, so the job's
    environment has no SLURM_JOB_NAME (as on real Slurm)."""
    done = slurm.run("sbatch", "--wait", "-o", "stdin.out",
                     stdin="#!/bin/sh\necho name=${SLURM_JOB_NAME-unset}\n")
    assert done.returncode == 0
    assert slurm.read("stdin.out") == "name=unset\n"
    job = job_id_of(done.stdout)
    listed = slurm.run("squeue", "-h", "-t", "all", "-j", str(job), "-o", "%j").stdout
    assert listed == "sbatch\n"
