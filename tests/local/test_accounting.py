"""Accounting on the local backend with real jobs: each task's CPU (its rusage) and memory
(sampled every ``--acctg-freq``) recorded per step, ``sstat`` while the step runs, ``sacct``'s
usage fields and ``seff`` after the end, and Slurm's refusals."""

from __future__ import annotations

from typing import Dict, List

import pytest

from tests.local.harness import LocalSlurm, job_id_of, shell_wait

pytestmark = pytest.mark.slow

MIB = 1 << 20
#: Holds MB megabytes (touched), burns CPU seconds, then, given a file STOP, sleeps until it
#: exists (at most 120 s): sstat's window, which the test closes once it has looked.
HOLD_AND_BURN = ("import os, sys, time\n"
                 "mb, cpu = (float(a) for a in sys.argv[1:3])\n"
                 "block = bytearray(int(mb) * 1024 * 1024)\n"
                 "for i in range(0, len(block), 4096): block[i] = 1\n"
                 "end = time.process_time() + cpu\n"
                 "while time.process_time() < end: pass\n"
                 "print('ready', flush=True)\n"
                 "end = time.time() + 120\n"
                 "while sys.argv[3:] and not os.path.exists(sys.argv[3]) and time.time() < end:\n"
                 "    time.sleep(0.1)\n")
#: The batch script holds 60 MB and burns 1.5 s itself, then a 2-node step of two tasks
#: each holds 80 MB, burns 1 s and sleeps until the file {stop} exists, then a task too
#: short to be sampled.
JOB = ("#!/bin/sh\n#SBATCH -N2 --ntasks-per-node=1 --acctg-freq=1 --mem=1G\n"
       "python3 hold.py 60 1.5\n"
       "srun python3 hold.py 80 1 {stop}\n"
       "srun -n1 true\n")


def _fields(slurm: LocalSlurm, command: str, *args: str) -> List[Dict[str, str]]:
    """``command -P ARGS``'s lines as dicts by column name."""
    done = slurm.run(command, "-P", *args)
    assert done.returncode == 0, done.stderr
    head, *rows = done.stdout.splitlines()
    return [dict(zip(head.split("|"), row.split("|"))) for row in rows]


def _bytes(text: str) -> float:
    """A converted memory amount (``82124K``) in bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return float(text[:-1]) * units[text[-1]] if text[-1:] in units else float(text)


def _seconds(text: str) -> float:
    """``MM:SS.mmm`` or ``HH:MM:SS`` in seconds."""
    parts = text.replace(".", ":").split(":")
    if len(parts) == 3 and len(parts[2]) == 3:        # MM:SS.mmm
        return int(parts[0]) * 60 + int(parts[1]) + int(parts[2]) / 1000
    return int(parts[0]) * 3600 + int(parts[1]) * 60 + int(parts[2])


def test_usage_live_in_sstat_then_in_sacct_and_seff(slurm: LocalSlurm) -> None:
    usage_story(slurm)


def usage_story(slurm: LocalSlurm) -> None:
    """:data:`JOB`'s usage: in sstat while step 0 sleeps (until the story has looked), in
    sacct and seff after the end (the Kubernetes tier tells the same story, its pods on this
    machine seeing the working directory at the same path: tests/kube/test_accounting.py)."""
    stop = slurm.work / "hold.stop"
    slurm.script("hold.py", HOLD_AND_BURN)
    slurm.script("job.sh", JOB.format(stop=stop))
    job = job_id_of(slurm.run("sbatch", "job.sh").stdout)

    def step_sampled() -> bool:
        rows = _fields(slurm, "sstat", "-j", str(job), "-o", "JobID,NTasks,MaxRSS")
        return bool(rows) and rows[0]["MaxRSS"] != "" and _bytes(rows[0]["MaxRSS"]) > 75 * MIB

    try:        # step 0 sleeps until told to stop
        slurm.wait_for(step_sampled, timeout=90, interval=0.5)
        live = _fields(slurm, "sstat", "-a", "-j", str(job),
                       "-o", "JobID,NTasks,Nodelist,MaxRSS,MaxRSSNode,AveCPU,TRESUsageInMax")
        assert [row["JobID"] for row in live] == [f"{job}.batch", f"{job}.0"]
        step = live[1]
        nodes = slurm.run("squeue", "-h", "-j", str(job), "-o", "%N").stdout.strip()
        assert step["NTasks"] == "2" and step["Nodelist"] == nodes
        assert step["MaxRSSNode"] in slurm.run("scontrol", "show", "hostnames", nodes).stdout
        assert step["TRESUsageInMax"].startswith("cpu=00:00:0")
        missing = slurm.run("sstat", "-j", f"{job}.7", "-o", "JobID")
        assert missing.returncode == 0
        assert missing.stderr == f"sstat: error: StepId={job}.7 not found running.\n"
    finally:
        stop.touch()

    slurm.wait_for(lambda: slurm.run("sacct", "-n", "-X", "-j", str(job), "-o", "State")
                   .stdout.strip() == "COMPLETED", timeout=120, interval=0.5)
    rows = {row["JobID"]: row for row in _fields(
        slurm, "sacct", "-j", str(job), "-o",
        "JobID,TotalCPU,UserCPU,SystemCPU,MaxRSS,MaxRSSTask,AveRSS,NTasks,AveCPU")}
    batch, first, short = rows[f"{job}.batch"], rows[f"{job}.0"], rows[f"{job}.1"]
    assert _seconds(batch["TotalCPU"]) >= 1.4 and _bytes(batch["MaxRSS"]) > 55 * MIB
    assert _seconds(first["TotalCPU"]) >= 1.9            # two tasks, a second each
    assert _bytes(first["MaxRSS"]) > 75 * MIB and first["MaxRSSTask"] in ("0", "1")
    assert _bytes(first["AveRSS"]) > 75 * MIB and first["AveCPU"] == "00:00:01"
    # ``true`` ended before any sample: its CPU times only (its rusage), as in Slurm.
    assert short["MaxRSS"] == "" == short["AveCPU"] and short["NTasks"] == "1"
    assert short["TotalCPU"] != ""
    total = sum(_seconds(rows[key]["TotalCPU"]) for key in rows if key != str(job))
    assert _seconds(rows[str(job)]["TotalCPU"]) == pytest.approx(total, abs=0.01)
    assert rows[str(job)]["MaxRSS"] == ""                 # the job line: CPU times only

    report = slurm.run("seff", str(job))
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    assert lines[0] == f"Job ID: {job}" and "State: COMPLETED (exit code 0)" in lines
    assert "Nodes: 2" in lines and "Cores per node: 1" in lines
    utilised = next(line for line in lines if line.startswith("Memory Utilized: "))
    assert utilised.endswith(" MB (estimated maximum)")   # step 0's peak × its 2 tasks
    assert float(utilised.split()[2]) > 150
    assert any(line.startswith("Memory Efficiency: ") and line.endswith(" of 2.00 GB")
               or "(1.00 GB/node)" in line for line in lines)


def test_bad_acctg_freq_is_refused_in_slurms_words(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/sh\ntrue\n")
    for value, item in (("bogus", "bogus"), ("task=5,bogus=3", "bogus=3"), ("-1", "-1")):
        done = slurm.run("sbatch", f"--acctg-freq={value}", "job.sh")
        assert (done.returncode, done.stdout) == (255, "")
        assert done.stderr == f"sbatch: error: Invalid --acctg-freq specification: {item}\n"
    assert slurm.run("squeue", "-h").stdout == ""


def test_sstat_and_seff_errors(slurm: LocalSlurm) -> None:
    unknown = slurm.run("sstat", "-j", "4242", "-n")
    assert (unknown.returncode, unknown.stdout) == (0, "")
    assert unknown.stderr == "sstat: error: couldn't get steps for job 4242\n"
    none = slurm.run("sstat")
    assert none.returncode == 1
    assert none.stderr == "sstat: error: You didn't give me any jobs to stat.\n"
    bad = slurm.run("sstat", "-j", "abc")
    assert bad.returncode == 1 and bad.stderr == "sstat: fatal: Bad job/step specified: abc\n"
    absent = slurm.run("seff", "4242")
    assert (absent.returncode, absent.stderr) == (2, "Job not found.\n")
    usage = slurm.run("seff")
    assert usage.returncode == 1 and usage.stdout.startswith("Usage: seff [Options] <Jobid>")


#: A stand-in for nvidia-smi on this GPU-less machine (a real program the runtime runs as it
#: runs the real one): two GPUs at 40 % and 60 %, no process on them.
FAKE_NVIDIA_SMI = """#!/bin/sh
case "$*" in
  *--query-gpu=index,utilization.gpu*) printf '0, 40\\n1, 60\\n' ;;
  *--query-compute-apps*) printf 'pid, used_memory [MiB]\\n' ;;
  *) exit 9 ;;
esac
"""


def test_gpu_utilisation_reaches_the_console_charts(gpu_slurm: LocalSlurm) -> None:
    """A step on 2 (pretend) GPUs per node, sampled every second with nvidia-smi answering:
    the node's GPU utilisation — the mean of the GPUs its tasks see — is a point of the
    console's charts while the step runs (until the test has seen it)."""
    import os

    from sbatch_k8s.ui.jobs_source import JobsSource

    tools = gpu_slurm.root / "tools"
    tools.mkdir()
    (tools / "nvidia-smi").write_text(FAKE_NVIDIA_SMI)
    (tools / "nvidia-smi").chmod(0o755)
    path = f"{tools}{os.pathsep}{gpu_slurm.env['PATH']}"
    stop = gpu_slurm.work / "gpu.stop"
    until_stopped = shell_wait(f"[ -e {stop} ]")
    gpu_slurm.script("gpu.sh", "#!/bin/sh\n#SBATCH --gpus-per-node=2 --acctg-freq=1\n"
                               f"srun sh -c '{until_stopped}'\n")
    job = job_id_of(gpu_slurm.run("sbatch", "gpu.sh", env={"PATH": path}).stdout)
    source = JobsSource(dict(gpu_slurm.env, PATH=path), str(gpu_slurm.work))

    def measured() -> bool:
        record = source.find(str(job))
        answer = source.samples(record) if record is not None else None
        series = answer["series"] if isinstance(answer, dict) else []
        return any(v.get("gpu") == 50.0 for s in series for _, v in s["points"])

    try:        # the step runs until told to stop
        gpu_slurm.wait_for(measured, timeout=120, interval=0.5)
    finally:
        stop.touch()
