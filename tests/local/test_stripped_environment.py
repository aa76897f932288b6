"""Inside a local job, Slurm's commands work with nothing but the job id, as a job-step
executor calls them; each node has its own hostname (issue 18, items 2 and 8).

A workflow manager's job-step executor strips every ``SLURM_*`` variable but the job's
identity, and every ``SBATCH_*``/``SRUN_*``, then runs
``srun -n1 --cpu-bind=q --cpus-per-task=2 --nodes=1 <command>`` and judges the step by srun's
exit code. Real slurmd and slurmctld know the rest from the job id; here the node file
(``sbatch_k8s.runtime.agent.node_file``) does, in each node's own mount namespace.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

import pytest

from tests.local.harness import LocalSlurm, job_id_of

pytestmark = pytest.mark.slow

#: The executor: its filter of the environment, then srun exactly as it runs it (a shell
#: command line), the step judged by its exit code.
EXECUTOR = r'''
import os, subprocess, sys
IDENTITY = ("SLURM_JOB_ID", "SLURM_JOBID")
env = {k: v for k, v in os.environ.items()
       if not (k.startswith("SLURM_") and k not in IDENTITY)
       and not k.startswith(("SBATCH_", "SRUN_"))}
call = "srun -n1 --cpu-bind=q --cpus-per-task=2 --nodes=1 " + sys.argv[1]
done = subprocess.run(call, shell=True, env=env, capture_output=True, text=True)
print(f"rc={done.returncode}")
print(f"out={done.stdout.strip()}")
print(f"err={done.stderr.strip()}")
'''

#: The same commands with an environment of only PATH, HOME and one job id variable.
BARE = 'env -i PATH="$PATH" HOME="$HOME" {var}="$SLURM_JOB_ID"'

def stripped_script(extra: str = "") -> str:
    """The job: the executor, each command under ``env -i`` with one job id variable (both
    names), ``extra`` lines, the job's own variables' prefixes, then ``scancel`` with the
    job id alone."""
    return f"""#!/bin/bash
#SBATCH -N2 -c2 -J stripped -o job.out
cat > executor.py <<'EOF'
{EXECUTOR}
EOF
python3 executor.py 'sh -c "echo step \\$SLURM_STEP_ID on \\$(hostname)"' > executor.txt
J="$SLURM_JOB_ID"
{BARE.format(var="SLURM_JOB_ID")} srun -N2 -l hostname > bare-srun.txt 2>&1
echo $? >> bare-srun.txt
{BARE.format(var="SLURM_JOBID")} scontrol show job "$J" > bare-scontrol.txt 2>&1
{BARE.format(var="SLURM_JOB_ID")} squeue -h -j "$J" -o "%i %T %D" > bare-squeue.txt 2>&1
{BARE.format(var="SLURM_JOB_ID")} sacct -X -n -P -j "$J" -o JobID,State > bare-sacct.txt 2>&1
{extra}
env | grep -E '^(SBATCH|SRUN|SALLOC)_' > prefixed.txt
{BARE.format(var="SLURM_JOB_ID")} scancel "$J"
sleep 60
"""


#: Locally also: the full commands (this checkout's bin/) instead of the job's shims, and the
#: nodes' hostnames.
SCRIPT = stripped_script("""\
full="$(echo "$PATH" | tr ':' '\\n' | grep -v "/node-0/bin$" | paste -sd:)"
FULL='env -i PATH="$full" HOME="$HOME" SLURM_JOB_ID="$J"'
eval "$FULL" srun -n1 hostname > full-srun.txt 2>&1; echo $? >> full-srun.txt
eval "$FULL" squeue -h -j "$J" -o %T > full-squeue.txt 2>&1
hostname > hostnames.txt
srun -N2 -l bash -c 'echo "$(hostname) $(hostname -i) $SLURMD_NODENAME"' | sort >> hostnames.txt""")


def run_job(slurm: LocalSlurm) -> Dict[str, str]:
    slurm.script("job.sh", SCRIPT)
    done = slurm.run("sbatch", "--wait", "job.sh", timeout=120)
    job = job_id_of(done.stdout)
    files = {p.stem: p.read_text() for p in slurm.work.glob("*.txt")}
    files["job"] = str(job)
    files["state"] = slurm.run("sacct", "-X", "-n", "-P", "-j", str(job),
                               "-o", "State").stdout.strip()
    return files


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    slurm = LocalSlurm(tmp_path_factory.mktemp("stripped"))
    try:
        return run_job(slurm)
    finally:
        slurm.cleanup()


def test_the_executors_srun_runs_its_step(ran: Dict[str, str]) -> None:
    lines = dict(line.split("=", 1) for line in ran["executor"].splitlines())
    assert lines["rc"] == "0", ran["executor"]
    assert lines["out"] == "step 0 on 127.0.0.2"
    assert lines["err"] == ""        # --cpu-bind=q asks for quiet: no warning either


def test_every_command_needs_only_the_job_id(ran: Dict[str, str]) -> None:
    job = ran["job"]
    *tasks, code = ran["bare-srun"].splitlines()
    assert (sorted(tasks), code) == (["0: 127.0.0.2", "1: 127.0.0.3"], "0")
    assert ran["bare-scontrol"].startswith(f"JobId={job} JobName=stripped\n")
    assert "NodeList=127.0.0.[2-3]" in ran["bare-scontrol"]
    assert ran["bare-squeue"] == f"{job} RUNNING 2\n"
    assert ran["bare-sacct"] == f"{job}|RUNNING\n"
    assert ran["full-srun"] == "127.0.0.2\n0\n"
    assert ran["full-squeue"] == "RUNNING\n"
    assert ran["state"].startswith("CANCELLED")  # scancel with the job id alone


def test_no_variable_takes_a_slurm_input_prefix(ran: Dict[str, str]) -> None:
    assert ran["prefixed"] == ""


def test_each_node_has_its_own_hostname_resolving_to_its_address(ran: Dict[str, str]) -> None:
    assert ran["hostnames"].splitlines() == [
        "127.0.0.2", "0: 127.0.0.2 127.0.0.2 127.0.0.2", "1: 127.0.0.3 127.0.0.3 127.0.0.3"]
    assert os.uname().nodename not in ("127.0.0.2", "127.0.0.3")   # the machine's is its own


def test_the_node_file_is_the_nodes_own(slurm: LocalSlurm, tmp_path: Path) -> None:
    """Two jobs with the same id on different state directories (two users, two test
    runs) each see their own node file at the same path."""
    other = LocalSlurm(tmp_path / "other")
    try:
        for cluster in (slurm, other):
            cluster.script("own.sh", "#!/bin/sh\ncat /tmp/sbatch-k8s/job-$SLURM_JOB_ID.json "
                                     "> own.json\nsleep 2\n")
        first, second = slurm.start("sbatch", "--wait", "own.sh"), \
            other.start("sbatch", "--wait", "own.sh")
        assert first.wait(60) == 0 and second.wait(60) == 0
        seen = [json.loads(c.read("own.json")) for c in (slurm, other)]
        assert seen[0]["job_id"] == seen[1]["job_id"] == 1
        assert [s["variables"]["SBATCHK8S_JOB_DIR"] for s in seen] == [
            str(slurm.state / "jobs" / "1"), str(other.state / "jobs" / "1")]
        assert seen[0]["variables"]["SBATCHK8S_STATE_DIR"] == str(slurm.state)
        assert not (Path("/tmp/sbatch-k8s") / "job-1.json").exists() or \
            json.loads((Path("/tmp/sbatch-k8s") / "job-1.json").read_text()) not in seen
    finally:
        other.cleanup()
