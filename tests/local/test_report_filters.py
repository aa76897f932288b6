"""Every filter of scancel, squeue, sacct and sinfo filters, end to end on the local backend:
a job that matches is acted on or listed, one that does not is left alone. Expected texts
were compared with Slurm 22.05 (``../shared/tools/real-slurm``).
"""

from __future__ import annotations

import getpass
from typing import Dict

import pytest

from tests.local.harness import LocalSlurm, job_id_of


def _held(slurm: LocalSlurm, name: str, *args: str) -> int:
    """A held job: pending for ever, no process behind it."""
    return job_id_of(slurm.run("sbatch", "-H", "-J", name, *args, "--wrap", "true").stdout)


def _states(slurm: LocalSlurm) -> Dict[int, str]:
    listing = slurm.run("squeue", "-h", "-t", "all", "-o", "%i %T").stdout.split("\n")
    return {int(line.split()[0]): line.split()[1] for line in listing if line}


@pytest.fixture
def two_held(slurm: LocalSlurm) -> Dict[str, int]:
    return {"alpha": _held(slurm, "alpha"), "beta": _held(slurm, "beta")}


@pytest.mark.parametrize("args, cancelled", [
    (["-n", "alpha"], {"alpha"}),
    (["-t", "PD", "-n", "beta"], {"beta"}),
    (["-t", "R"], set()),
    (["-p", "debug", "-n", "alpha"], {"alpha"}),
    (["-p", "nosuchpartition"], set()),
    (["-A", getpass.getuser(), "-n", "beta"], {"beta"}),
    (["-A", "otheraccount"], set()),
    (["-q", "normal", "-n", "alpha"], {"alpha"}),
    (["-q", "high"], set()),
    (["-u", getpass.getuser(), "-n", "alpha"], {"alpha"}),
    (["-u", "nobody"], set()),
    (["--reservation=maint"], set()),
    (["--wckey=key"], set()),
    (["-w", "nosuchnode"], set()),  # issue #10: this cancelled every job
])
def test_scancel_filters(slurm: LocalSlurm, two_held: Dict[str, int], args: list,
                         cancelled: set) -> None:
    result = slurm.run("scancel", *args)
    assert (result.returncode, result.stderr) == (0, "")
    states = _states(slurm)
    assert {name for name, job in two_held.items() if states[job] == "CANCELLED"} == cancelled


def test_scancel_applies_filters_to_named_jobs(slurm: LocalSlurm,
                                               two_held: Dict[str, int]) -> None:
    alpha, beta = two_held["alpha"], two_held["beta"]
    assert slurm.run("scancel", str(alpha), "-n", "wrongname").returncode == 0
    assert slurm.run("scancel", str(alpha), "-u", "nobody").returncode == 0
    assert _states(slurm)[alpha] == "PENDING"
    loud = slurm.run("scancel", "-v", str(alpha), "-n", "wrongname")
    assert loud.stderr == ("scancel: error: No active jobs match ALL job filters, including: "
                           "job_name=wrongname \n")
    assert slurm.run("scancel", f"{alpha},{beta}", "-n", "beta").returncode == 0
    assert _states(slurm) == {alpha: "PENDING", beta: "CANCELLED"}
    unknown = slurm.run("scancel", "99999", "-p", "debug")
    assert (unknown.returncode, unknown.stderr) == (
        1, "scancel: error: Kill job error on job id 99999: Invalid job id specified\n")


def test_scancel_nodelist_cancels_the_jobs_on_those_nodes(slurm: LocalSlurm) -> None:
    held = _held(slurm, "held")
    running = job_id_of(slurm.run("sbatch", "--wrap", "sleep 60").stdout)
    slurm.wait_for(lambda: _states(slurm)[running] == "RUNNING")
    node = slurm.run("squeue", "-h", "-j", str(running), "-o", "%N").stdout.strip()
    (slurm.work / "nodes").write_text(f"{node}\n")
    assert slurm.run("scancel", "-w", "nosuchnode").returncode == 0
    assert _states(slurm)[running] == "RUNNING"
    assert slurm.run("scancel", "-w", str(slurm.work / "nodes")).returncode == 0
    slurm.wait_for(lambda: _states(slurm)[running] == "CANCELLED")
    assert _states(slurm)[held] == "PENDING"


def test_scancel_refuses_what_it_cannot_do(slurm: LocalSlurm,
                                           two_held: Dict[str, int]) -> None:
    alpha = str(two_held["alpha"])
    sibling = slurm.run("scancel", "--sibling=other", alpha)
    assert (sibling.returncode, sibling.stderr) == (
        191, f"scancel: error: Kill job error on job id {alpha}: Not a valid federated job\n")
    cluster = slurm.run("scancel", "-M", "other", alpha)
    assert cluster.returncode == 1 and "No cluster 'other' known" in cluster.stderr
    assert _states(slurm)[two_held["alpha"]] == "PENDING"


def test_scancel_interactive_asks_for_each_job(slurm: LocalSlurm,
                                               two_held: Dict[str, int]) -> None:
    answer = slurm.run("scancel", "-i", "-t", "PD", stdin="n\ny\n")
    alpha, beta = two_held["alpha"], two_held["beta"]
    assert answer.stdout == (f"Cancel job_id={alpha} name=alpha partition=debug [y/n]? "
                             f"Cancel job_id={beta} name=beta partition=debug [y/n]? ")
    assert _states(slurm) == {alpha: "PENDING", beta: "CANCELLED"}


@pytest.mark.parametrize("args, usage", [
    (["--help"], "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]\n"),
    (["--usage"], "Usage: scancel [--autocomplete prefix] [-A account]"),
    (["-V"], "slurm 22.05.8"),
    (["--version"], "slurm 22.05.8"),
])
def test_scancel_answers_help_usage_and_version(slurm: LocalSlurm, args: list,
                                                usage: str) -> None:
    result = slurm.run("scancel", *args)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(usage)


@pytest.mark.parametrize("args, listed", [
    (["-n", "alpha"], {"alpha"}),
    (["-t", "R"], set()),
    (["-p", "debug"], {"alpha", "beta"}),
    (["-p", "other"], set()),
    (["-A", "otheraccount"], set()),
    (["-q", "normal"], {"alpha", "beta"}),
    (["-u", "nobody"], set()),
    (["--me"], {"alpha", "beta"}),
    (["--notme"], set()),
    (["-w", "nosuchnode"], set()),
    (["-L", "lic"], set()),
    (["-R", "maint"], set()),
    (["-M", "sbatch-k8s", "-n", "beta"], {"beta"}),
])
def test_squeue_filters(slurm: LocalSlurm, two_held: Dict[str, int], args: list,
                        listed: set) -> None:
    result = slurm.run("squeue", "-h", "-o", "%j", *args)
    assert set(result.stdout.split()) - {"CLUSTER:", "sbatch-k8s"} == listed


def test_sacct_filters_and_batch_script(slurm: LocalSlurm, two_held: Dict[str, int]) -> None:
    def names(*args: str) -> set:
        return set(slurm.run("sacct", "-X", "-n", "-P", "-o", "JobName", *args).stdout.split())

    assert names("--name", "alpha") == {"alpha"}
    assert names("--name", "gamma") == set()
    assert names("-r", "debug") == {"alpha", "beta"} and names("-r", "other") == set()
    assert names("-C", "nosuchfeature") == set()
    assert names("-I", "1") == {"alpha", "beta"} and names("-I", "2-4") == set()
    assert names("-M", "other") == set()
    script = slurm.run("sacct", "-B", "-j", str(two_held["alpha"])).stdout
    assert script.startswith(f"Batch Script for {two_held['alpha']}\n{'-' * 80}\n#!")
    assert script.endswith("true\n\n")


@pytest.mark.parametrize("args, expected", [
    (["-t", "idle"], "debug* idle"),
    (["-t", "alloc"], "debug* n/a"),
    (["-n", "127.0.0.2"], "debug* idle"),
    (["-n", "nosuchnode"], "debug* n/a"),
    (["-d"], "debug* n/a"),
    (["-p", "debug"], "debug* idle"),
])
def test_sinfo_filters(slurm: LocalSlurm, args: list, expected: str) -> None:
    assert slurm.run("sinfo", "-h", "-o", "%P %t", *args).stdout.strip() == expected


def test_sinfo_reasons_and_reservations(slurm: LocalSlurm) -> None:
    assert slurm.run("sinfo", "-R").stdout == (
        "REASON               USER      TIMESTAMP           NODELIST\n")
    assert slurm.run("sinfo", "-T").stdout == "No reservations in the system\n"


@pytest.mark.parametrize("command", ["squeue", "sacct", "sinfo"])
def test_json_is_refused_in_one_line(slurm: LocalSlurm, command: str) -> None:
    result = slurm.run(command, "--json")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"{command}: error: --json is not supported by sbatch-k8s")
    assert result.stderr.count("\n") == 1


def test_scontrol_without_a_command_reads_stdin(slurm: LocalSlurm) -> None:
    empty = slurm.run("scontrol", stdin="")
    assert (empty.returncode, empty.stdout) == (0, "scontrol: \n")
    session = slurm.run("scontrol", stdin="show hostnames n[1-2]\nbogus\n")
    assert session.stdout == (
        "scontrol: show hostnames n[1-2]\nn1\nn2\nscontrol: bogus\nscontrol: \n")
    assert (session.returncode, session.stderr) == (1, "invalid keyword: bogus\n")


@pytest.mark.parametrize("command", ["squeue", "sacct", "sinfo", "scontrol"])
def test_help_lists_the_options(slurm: LocalSlurm, command: str) -> None:
    result = slurm.run(command, "--help")
    assert result.returncode == 0 and "man " not in result.stdout
    assert "--version" in result.stdout and result.stdout.startswith(f"Usage: {command} ")
