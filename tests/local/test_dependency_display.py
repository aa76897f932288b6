"""What squeue ``%E``, ``scontrol show job`` and sacct show of dependencies, as Slurm 22.05
printed them for the same submissions: each item not yet met with its state
(``(unfulfilled)``, ``(failed)``), met items dropped from a ``,`` list, a ``?`` list cleared
by one met item, ``_*`` for a whole array, ``(null)`` once the job may start; a job
``--kill-on-invalid-dep=yes`` cancels is ``CANCELLED`` with reason
``DependencyNeverSatisfied`` in squeue, ``None`` in sacct (it has a start: start = end)."""

from __future__ import annotations

from typing import Dict

from tests.local.harness import LocalSlurm, job_id_of


def _submit(slurm: LocalSlurm, *args: str) -> int:
    done = slurm.run("sbatch", "-o", "/dev/null", *args)
    assert done.returncode == 0, done.stderr
    return job_id_of(done.stdout)


def _shown(slurm: LocalSlurm) -> Dict[int, str]:
    out = slurm.run("squeue", "-h", "-t", "all", "-o", "%i|%E|%r|%T").stdout
    return {int(line.split("|")[0].split("_")[0]): line.split("|", 1)[1]
            for line in out.splitlines()}


def test_dependency_states_as_slurm_prints_them(slurm: LocalSlurm) -> None:
    held = _submit(slurm, "--hold", "--wrap", "true")
    array = _submit(slurm, "--hold", "--array=0-2", "--wrap", "true")
    ok = _submit(slurm, "--wrap", "true")
    bad = _submit(slurm, "--wrap", "exit 3")
    slurm.wait_for(lambda: _shown(slurm)[bad].endswith("FAILED")
                   and _shown(slurm)[ok].endswith("COMPLETED"), timeout=60)
    cases = {
        f"afterok:{held}": f"afterok:{held}(unfulfilled)|Dependency",
        f"afterok:{array}": f"afterok:{array}_*(unfulfilled)|Dependency",
        f"aftercorr:{array}": f"aftercorr:{array}_*(unfulfilled)|Dependency",
        f"afterany:{held}?afternotok:{array}_1":
            f"afterany:{held}(unfulfilled)?afternotok:{array}_1(unfulfilled)|Dependency",
        f"after:{held}+5": f"after:{held}+5(unfulfilled)|Dependency",
        f"afterok:{ok},afterok:{held}": f"afterok:{held}(unfulfilled)|Dependency",
        f"afterany:{ok}:{held}": f"afterany:{held}(unfulfilled)|Dependency",
        f"afterok:{bad},afterok:{held}":
            f"afterok:{bad}(failed),afterok:{held}(unfulfilled)|DependencyNeverSatisfied",
        f"afterok:{bad}?afterok:{held}":
            f"afterok:{bad}(failed)?afterok:{held}(unfulfilled)|Dependency",
    }
    jobs = {_submit(slurm, "-d", expression, "--wrap", "true"): expression
            for expression in cases}

    def settled() -> bool:
        shown = _shown(slurm)
        return all(shown[job].rsplit("|", 1)[0] == cases[expression]
                   for job, expression in jobs.items())

    slurm.wait_for(settled, timeout=60)
    shown = _shown(slurm)
    assert {expression: shown[job] for job, expression in jobs.items()} == {
        expression: f"{text}|PENDING" for expression, text in cases.items()}
    show = slurm.run("scontrol", "show", "job", str(next(iter(jobs)))).stdout
    assert f"Dependency=afterok:{held}(unfulfilled)" in show


def test_singleton_and_met_dependency_show_as_slurm(slurm: LocalSlurm) -> None:
    first = _submit(slurm, "-J", "same", "--hold", "--wrap", "true")
    second = _submit(slurm, "-J", "same", "-d", "singleton", "--wrap", "true")
    slurm.wait_for(lambda: _shown(slurm)[second] == "singleton(unfulfilled)|Dependency|PENDING")
    assert slurm.run("scontrol", "release", str(first)).returncode == 0
    slurm.wait_for(lambda: _shown(slurm)[second] == "(null)|None|COMPLETED", timeout=60)


def test_kill_on_invalid_dep_shows_as_slurm(slurm: LocalSlurm) -> None:
    bad = _submit(slurm, "--wrap", "exit 3")
    killed = _submit(slurm, "-d", f"afterok:{bad}", "--kill-on-invalid-dep=yes",
                     "--wrap", "true")
    slurm.wait_for(lambda: _shown(slurm).get(killed, "").endswith("CANCELLED"), timeout=60)
    assert _shown(slurm)[killed] == \
        f"afterok:{bad}(failed)|DependencyNeverSatisfied|CANCELLED"
    line = slurm.run("sacct", "-X", "-n", "-P", "-j", str(killed), "-o",
                     "JobID,State,Reason,ExitCode").stdout.strip()
    assert line == f"{killed}|CANCELLED|None|0:0"
    start, end = slurm.run("sacct", "-X", "-n", "-P", "-j", str(killed), "-o",
                           "Start,End").stdout.strip().split("|")
    assert start == end != "Unknown"
