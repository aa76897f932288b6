"""srun inside a job: exit codes, signals, failed launches, bad options, ``-K``, a ``-w``
list longer than ``-N`` allows, GPUs a job without GPUs cannot give, ``--label`` (its width
rule), stdin, and output file name patterns; then the steps as ``sacct`` records them.

One ``-N2 --ntasks-per-node=2`` job per side runs every case in turn from its batch script:
``srun … > s.<case>.out 2> s.<case>.err; echo $? > s.<case>.rc``. Several tasks write
concurrently, so stdout and stderr are compared as sorted lines (content and count, not
interleaving). Pattern cases run in their own directory, whose file names and contents are
compared.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser, id_pad, sort_lines
from tests.conformance.sides import Job, OurSlurm, RealSlurm, Side

TASK1 = 'if [ "$SLURM_PROCID" = 1 ]; then {}; fi'

#: case -> the srun command line (shell syntax, run by bash in the job's directory)
CASES: Dict[str, str] = {
    # exit codes and signals
    "exit-by-rank-n2": "srun -n2 sh -c 'exit $((SLURM_PROCID*3))'",
    "exit-3-all": "srun sh -c 'exit 3'",
    "exit-by-rank-all": "srun sh -c 'exit $((SLURM_PROCID*3))'",
    "exit-300": "srun -n1 sh -c 'exit 300'",
    "signal-kill": "srun sh -c '" + TASK1.format("kill -9 $$") + "'",
    "signal-term": "srun sh -c '" + TASK1.format("kill -TERM $$") + "'",
    "signal-segv": "srun sh -c '" + TASK1.format("kill -SEGV $$") + "'",
    "signal-usr1": "srun sh -c '" + TASK1.format("kill -USR1 $$") + "'",
    "signal-and-exit": "srun -n2 sh -c '" + TASK1.format("kill -SEGV $$") + "; exit 4'",
    "kill-on-bad-exit": "srun -K sh -c '" + TASK1.format("exit 3") + "; exec sleep 10'",
    "kill-on-bad-exit-long": "srun --kill-on-bad-exit=1 sh -c '" + TASK1.format("exit 3")
                             + "; exec sleep 10'",
    # launch failures
    "nonexistent-command": "srun -n2 nonexistent-cmd",
    "relative-missing": "srun -n1 ./relative-missing",
    "not-executable": "srun -n1 /etc/passwd",
    # bad options and requests
    "bad-option": "srun --bogus true",
    "bad-nodes": "srun -N abc true",
    "bad-time": "srun --time=xyz true",
    "bad-mem": "srun --mem=12Q true",
    "bad-ntasks": "srun -n abc true",
    "bad-ntasks-0": "srun -n 0 true",
    "no-command": "srun",
    "too-many-nodes": "srun -N3 true",
    "too-many-tasks": "srun -n5 true",
    "too-many-cpus": "srun -c3 -n1 true",
    "n1-on-2-nodes": "srun -n1 true",
    # limits a step is held to: -w cut to -N's maximum (its first names kept), GPUs
    "nodelist-cut": "srun -w \"$(scontrol show hostnames | tac | paste -sd,)\" -N1 -n1 "
                    "sh -c 'echo $SLURMD_NODENAME'",
    "nodelist-cut-too-many-cpus": "srun -w \"$(scontrol show hostnames | paste -sd,)\" -N1 -n1 "
                                  "-c4 true",
    "gpus-without-gres": "srun -N1 -n1 --gpus=1 true",
    # labels
    "label-4": "srun -l sh -c 'echo out; echo err >&2'",
    "label-10": "srun -n10 -O -l echo x",
    "label-11": "srun -n11 -O -l echo x",
    "label-no-newline": "srun -n1 -l printf abc",
    "label-empty-line": "srun -n1 -l echo",
    "label-env": "srun -n1 -l sh -c 'echo SLURM_LABELIO=$SLURM_LABELIO'",
    "no-label-no-newline": "srun -n1 printf abc",
    # stdin
    "stdin-broadcast": "echo INPUT | srun cat",
    "stdin-none": "echo INPUT | srun -i none cat",
    "stdin-task-1": "echo INPUT | srun -i 1 sh -c 'cat; echo end-$SLURM_PROCID'",
    # output file patterns (each in its own directory; files are compared)
    "pattern-task": "srun -o out-%t.txt sh -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'",
    "pattern-node": "srun -o out-%N-%n.txt true",
    "pattern-ids": "srun -o %j-%s-%J.txt true",
    "pattern-padding": "srun -o pad-%4t-%2n-%5j-%3s.txt true",
    "pattern-names": "srun -n1 -o user-%u-%x-%A-%a.txt true",
    "pattern-backslash": r"srun -n1 -o 'lit\%t.txt' true",
    "pattern-percent": "srun -n1 -o pct-%%t.txt true",
    "pattern-error-only": "srun -e err-%t.txt sh -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'",
    "pattern-none": "srun -o none sh -c 'echo o; echo e >&2'",
    "pattern-one-task": "srun -o 1 sh -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'",
}

#: cases run by a second job: one differs by intent (and would shift the step ids of
#: every later case), the other makes Slurm 22.05 leak its step, so no srun may follow it
TAIL: Dict[str, str] = {
    "N1-in-tpn-job": "srun -N1 true",
    "missing-input-file": "srun -n1 -i nosuchfile true",
}
#: every case of either job by name
ALL_CASES: Dict[str, str] = {**CASES, **TAIL}


def script(cases: Dict[str, str]) -> str:
    lines = ["#!/bin/bash", "top=$PWD"]
    for name, command in cases.items():
        lines += [f"mkdir -p d.{name} && cd d.{name}",
                  f"{command} > $top/s.{name}.out 2> $top/s.{name}.err < /dev/null"
                  if "|" not in command else
                  f"{command} > $top/s.{name}.out 2> $top/s.{name}.err",
                  f"echo $? > $top/s.{name}.rc",
                  "cd $top"]
    return "\n".join(lines) + "\n"


def run_job(side: Side, name: str, cases: Dict[str, str]) -> Job:
    return side.batch(name, script(cases), ["-N2", "--ntasks-per-node=2", "-J", "srunjob",
                                            "-o", "job.out"], idle_nodes=True, timeout=120)


@pytest.fixture(scope="module")
def all_jobs(real: RealSlurm, ours: OurSlurm) -> Dict[str, object]:
    return parallel({"real": lambda: run_job(real, "srun", CASES),
                     "ours": lambda: run_job(ours, "srun", CASES),
                     "real-tail": lambda: run_job(real, "srun-tail", TAIL),
                     "ours-tail": lambda: run_job(ours, "srun-tail", TAIL)})


@pytest.fixture(scope="module")
def jobs(all_jobs: Dict[str, object]) -> Dict[str, Job]:
    return {k: value(all_jobs[k]) for k in ("real", "ours")}


@pytest.fixture(scope="module")
def tail_jobs(all_jobs: Dict[str, object]) -> Dict[str, Job]:
    return {k: value(all_jobs[f"{k}-tail"]) for k in ("real", "ours")}


def normaliser(job: Job, other: Job) -> Normaliser:
    """The job's id and nodes; the other side's job id too (see normalise.py)."""
    return Normaliser(job.side, {job.job_id: "<job>"}, job.nodes(),
                      other_jobs={other.job_id: "<job>"})


def file_listing(job: Job, name: str, norm: Normaliser) -> str:
    """The files a pattern case created: names (``%N``, the node's hostname, made neutral:
    real Slurm's emulated nodes all have the machine's hostname, ours are named by their
    address; a ``%Nj`` id as the pattern pads it, see :func:`id_pad`) and sorted
    contents."""
    import socket

    out = []
    pad = id_pad(ALL_CASES[name])
    directory = job.cwd / f"d.{name}"
    for path in sorted(directory.iterdir()) if directory.exists() else []:
        shown = path.name
        hostnames = [socket.gethostname()] if job.side.kind == "real" else job.nodes()
        for hostname in hostnames:
            shown = shown.replace(hostname, "<hostname>")
        out.append(f"== {norm.text(shown, pad)}\n{sort_lines(norm.text(path.read_text()))}")
    return "".join(out)


def case_result(job: Job, other: Job, name: str) -> Tuple[str, str, str, str]:
    norm = normaliser(job, other)
    return (norm.text(job.read(f"s.{name}.out")),
            norm.text(job.read(f"s.{name}.err")),
            job.read(f"s.{name}.rc").strip(),
            file_listing(job, name, norm) if name.startswith("pattern-") else "")


def check_case(name: str, command: str, jobs: Dict[str, Job]) -> None:
    real = case_result(jobs["real"], jobs["ours"], name)
    ours = case_result(jobs["ours"], jobs["real"], name)
    problems: List[str] = []
    for what, r, o in zip(("stdout", "stderr", "exit code", "files"), real, ours):
        problems += diff_text(name, f"`{command}` {what}", r, o, sort=what != "files")
    if problems and jobs["real"].note:
        problems.append(jobs["real"].note)
    report(problems)


@pytest.mark.parametrize("name", list(CASES))
def test_srun(name: str, jobs: Dict[str, Job]) -> None:
    check_case(name, CASES[name], jobs)


@pytest.mark.parametrize("name", list(TAIL))
def test_srun_tail(name: str, tail_jobs: Dict[str, Job]) -> None:
    check_case(name, TAIL[name], tail_jobs)


def test_job_output(jobs: Dict[str, Job]) -> None:
    """What the batch script itself printed (nothing is expected)."""
    real, ours = jobs["real"], jobs["ours"]
    report(diff_text("srun-job", "job output",
                     normaliser(real, ours).text(real.read("job.out")),
                     normaliser(ours, real).text(ours.read("job.out"))))


def test_steps_in_sacct(jobs: Dict[str, Job]) -> None:
    """Every step as accounting records it: id, name, state, exit code."""
    texts = []
    for job, other in ((jobs["real"], jobs["ours"]), (jobs["ours"], jobs["real"])):
        job.side.wait_sacct(job.job_id)
        shown = job.side.run("sacct", "-j", str(job.job_id), "--parsable2",
                             "-o", "JobID,JobName,State,ExitCode,NTasks")
        texts.append(normaliser(job, other).text(shown.stdout + shown.stderr))
    report(diff_text("srun-sacct", "sacct --parsable2 of the steps", *texts))

