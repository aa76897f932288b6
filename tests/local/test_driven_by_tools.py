"""What tools that drive Slurm run, on the local backend, read the way each tool reads it
(issue 18; the same command lines against real Slurm: ``tests/conformance/test_tools.py``).

- A workflow manager polls ``sacct -X --parsable2 --clusters all --noheader
  --format=JobIdRaw,State --starttime <2 days ago> --endtime now --name <uuid>`` and maps
  each ``id|state`` line to its job (item 1).
- A pilot-job library submits ``sbatch -N2 --exclusive`` and reads the id from
  ``Submitted batch job N``; each node then has all the CPUs sinfo says a node has (item 3).
- It also reads ``sinfo -o "%P %G %l %p %c %m"`` column by column (item 4).
- ``sacct -j N.S`` lists that step alone, nothing for a step that does not exist (item 7).
- A new user's first steps (item 9): ``sbatch --k8s-lint`` of a GPU script on a machine
  without GPUs, ``sinfo -N -l``'s memory, ``sattach --help``, ``-v``, ``sbatch-k8s
  --version``, a job name with a byte that is not UTF-8.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys

import uuid
from typing import Dict

import pytest

from tests.local.harness import REPO, LocalSlurm

pytestmark = pytest.mark.slow


def _wait_ended(slurm: LocalSlurm, *job_ids: int, timeout: float = 60) -> None:
    wanted = ",".join(str(j) for j in job_ids)
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", wanted).stdout == "", timeout)


def test_a_workflow_managers_status_poll(slurm: LocalSlurm) -> None:
    name = str(uuid.uuid4())
    ok = int(slurm.run("sbatch", "--parsable", "-J", name, "--wrap=true").stdout)
    fails = int(slurm.run("sbatch", "--parsable", "-J", name, "--wrap=exit 1").stdout)
    _wait_ended(slurm, ok, fails)
    since = (datetime.datetime.now() - datetime.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    done = slurm.run("sacct", "-X", "--parsable2", "--clusters", "all", "--noheader",
                     "--format=JobIdRaw,State", "--starttime", since, "--endtime", "now",
                     "--name", name)
    assert done.returncode == 0 and done.stderr == ""
    states = dict(line.split("|") for line in done.stdout.splitlines())
    assert states == {str(ok): "COMPLETED", str(fails): "FAILED"}


@pytest.mark.parametrize("argv, out, err, code", [
    (["squeue", "-M", "all", "-h"], "", "", 0),
    (["squeue", "-M", "bogus,sbatch-k8s", "-h"], "",
     "squeue: error: No cluster 'bogus' known by database.\n", 0),
    (["sinfo", "-M", "sbatch-k8s", "-h", "-o", "%P %V"], "debug* sbatch-k8s\n", "", 0),
    (["scancel", "-M", "bogus", "12345"], "",
     "scancel: error: No cluster 'bogus' known by database.\nscancel: error: 'bogus' can't "
     "be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list "
     "clusters' to see available clusters.\n", 1),
    (["sacct", "-M", "bogus", "-X", "-n"], "", "", 0),
])
def test_clusters_options(slurm: LocalSlurm, argv: list, out: str, err: str,
                          code: int) -> None:
    done = slurm.run(*argv)
    assert (done.stdout, done.stderr, done.returncode) == (out, err, code)


def test_sbatch_names_the_cluster_it_was_asked_for(slurm: LocalSlurm) -> None:
    named = slurm.run("sbatch", "-M", "all", "--wrap=true")
    assert re.fullmatch(r"Submitted batch job \d+ on cluster sbatch-k8s\n", named.stdout)
    parsable = slurm.run("sbatch", "-M", "sbatch-k8s", "--parsable", "--wrap=true")
    assert re.fullmatch(r"\d+;sbatch-k8s\n", parsable.stdout)


def test_a_pilot_job_librarys_exclusive_nodes(slurm: LocalSlurm) -> None:
    done = slurm.run("sbatch", "-N2", "--exclusive", "-o", "pilot.out",
                     "--wrap=echo $SLURM_JOB_CPUS_PER_NODE; srun -l hostname | sort")
    found = re.search(r"Submitted batch job (\d+)", done.stdout)
    assert found, done.stderr
    _wait_ended(slurm, int(found.group(1)))
    per_node = slurm.run("sinfo", "-h", "-N", "-o", "%c").stdout.split()[0]
    assert slurm.read("pilot.out") == f"{per_node}(x2)\n0: 127.0.0.2\n1: 127.0.0.3\n"
    # while it ran it held the pool: sinfo's totals read it as one pool, not two
    shown = slurm.run("sacct", "-X", "-n", "-P", "-j", found.group(1), "-o", "AllocCPUS")
    assert shown.stdout == f"{2 * int(per_node)}\n"


def test_the_pilot_job_librarys_sinfo_columns(slurm: LocalSlurm) -> None:
    done = slurm.run("sinfo", "-o", "%P %G %l %p %c %m")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    header, *rows = [line.split() for line in done.stdout.splitlines()]
    assert header == ["PARTITION", "GRES", "TIMELIMIT", "PRIO_TIER", "CPUS", "MEMORY"]
    for partition, gres, limit, tier, cpus, memory in rows:
        assert (int(tier), int(cpus) >= 1, int(memory) > 1) == (1, True, True), rows


def test_sacct_lists_the_steps_it_is_asked_for(slurm: LocalSlurm) -> None:
    job = int(slurm.run("sbatch", "--parsable", "--wrap=srun true; srun true").stdout)
    _wait_ended(slurm, job)
    one = slurm.run("sacct", "-j", f"{job}.1", "-P", "-n", "-o", "JobID,State")
    assert one.stdout == f"{job}.1|COMPLETED\n"
    missing = slurm.run("sacct", "-j", f"{job}.5", "--format=Reason", "--noheader")
    assert (missing.stdout, missing.returncode) == ("", 0)
    allocation = slurm.run("sacct", "-X", "-j", f"{job}.5", "-P", "-n", "-o", "JobID")
    assert allocation.stdout == f"{job}\n"


def test_lint_reports_what_this_machine_lacks_as_a_finding(slurm: LocalSlurm) -> None:
    slurm.script("gpu.sh", "#!/bin/sh\n#SBATCH --gpus=2\nnvidia-smi\n")
    done = slurm.run("sbatch", "--k8s-lint", "gpu.sh")
    assert done.returncode == 0, done.stdout
    assert "capacity: sbatch: error: Batch job submission failed: Requested node " \
           "configuration is not available" in done.stdout


def test_a_new_users_first_commands(slurm: LocalSlurm) -> None:
    memory = slurm.run("sinfo", "-N", "-l", "-h").stdout.split()[6]
    assert int(memory) > 1
    helped = slurm.run("sattach", "--help").stdout
    refused = [line for line in helped.splitlines() if "filter" in line or "--label" in line]
    assert refused and all("[not supported:" in line for line in refused), helped
    for command, args in (("squeue", []), ("sinfo", []), ("sacct", ["-X"]),
                          ("scontrol", ["show", "partition"])):
        said = slurm.run(command, "-v", *args).stderr.splitlines()
        assert said[0] == f"{command}: backend local, state directory {slurm.state}", said
    version = subprocess.run([sys.executable, "-m", "sbatch_k8s.tool", "--version"],
                             cwd=REPO, env=slurm.env, capture_output=True, text=True)
    assert (version.returncode, version.stdout.startswith("sbatch-k8s ")) == (0, True)


def test_a_name_with_a_byte_that_is_not_utf8(slurm: LocalSlurm) -> None:
    done = subprocess.run([*slurm.commands("sbatch"), "--parsable", "-J", b"caf\xe9",
                           "--wrap=true"], cwd=slurm.work, env=slurm.env,
                          capture_output=True)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    job = int(done.stdout)
    _wait_ended(slurm, job)
    named: Dict[str, str] = {c: slurm.run(*argv).stdout for c, argv in (
        ("sacct", ["sacct", "-X", "-n", "-P", "-j", str(job), "-o", "JobName"]),
        ("scontrol", ["scontrol", "show", "job", str(job)]))}
    assert named["sacct"] == "caf?\n"
    assert "JobName=caf?" in named["scontrol"]
