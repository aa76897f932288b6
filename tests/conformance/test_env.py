"""``SLURM_*``/``SLURMD_*`` (and GPU) variables of the batch step and of every task of a few
srun steps, for allocation shapes the emulated 4-node cluster (4 CPUs per node, n1/n2 with 4
GPUs) can hold; plus the job's output (srun's warnings) and the task → node layout.

One job per shape, the same script on both sides: the batch step writes its environment to
``env.batch``, each step's tasks write theirs to ``env.s<k>.<rank>`` (array elements:
``env.a<index>.…``). Real Slurm's jobs run one after the other (so placement does not depend
on our own concurrent jobs), ours run concurrently.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from tests.conformance.compare import diff_env, diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser, parse_env
from tests.conformance.sides import Job, OurSlurm, RealSlurm, Side

PROBE = """#!/bin/sh
env | grep -E '^(SLURM|SLURMD)_|^(CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES)=' \\
  | LC_ALL=C sort > "$1.$SLURM_PROCID"
"""

#: case -> (sbatch options, srun options of each step)
SHAPES: Dict[str, Tuple[Sequence[str], Sequence[str]]] = {
    "env-N2-tpn2": (["-N2", "--ntasks-per-node=2"],
                    ["", "-N1 -n1", "-n3", "-m cyclic", "--label"]),
    "env-N2": (["-N2"], ["", "-N1 -n1"]),
    "env-n3": (["-n3"], ["", "-n1"]),
    "env-N2-n5": (["-N2", "-n5"], ["", "-n2"]),
    "env-c2-n2": (["-c2", "-n2"], ["", "-n1"]),
    "env-array": (["--array=1-3"], [""]),
    "env-gpu": (["-N2", "--gpus-per-node=2", "-p", "gpu"], ["", "-N1 -n1"]),
}


def script(steps: Sequence[str]) -> str:
    lines = ["#!/bin/bash",
             'P=env${SLURM_ARRAY_TASK_ID:+.a$SLURM_ARRAY_TASK_ID}',
             "./probe.sh $P.batch"]
    for k, opts in enumerate(steps):
        lines.append(f"srun {opts} ./probe.sh $P.s{k}".replace("  ", " "))
        lines.append(f'echo "step {k} rc=$?"')
    return "\n".join(lines) + "\n"


def run_shape(side: Side, case: str) -> Job:
    args, steps = SHAPES[case]
    directory = side.case_dir(case)
    (directory / "probe.sh").write_text(PROBE)
    (directory / "probe.sh").chmod(0o755)
    return side.batch(case, script(steps), ["-o", "job.out", *args], idle_nodes=True)


@pytest.fixture(scope="module")
def jobs(real: RealSlurm, ours: OurSlurm) -> Dict[str, Dict[str, Job]]:
    """Every shape run on both sides: real ones in sequence, ours concurrently."""
    def real_all() -> Dict[str, Job]:
        return {case: run_shape(real, case) for case in SHAPES}

    calls = {f"ours:{case}": (lambda c=case: run_shape(ours, c)) for case in SHAPES}
    calls["real"] = real_all
    results = parallel(calls, workers=len(calls))
    out: Dict[str, Dict[str, Job]] = {}
    real_jobs = results["real"]
    for case in SHAPES:
        out[case] = {"real": value(real_jobs)[case] if not isinstance(real_jobs, Exception)
                     else real_jobs, "ours": results[f"ours:{case}"]}
    return out


def env_files(job: Job) -> List[str]:
    return sorted(p.name for p in job.cwd.glob("env.*"))


def placeholders(job: Job, index: Optional[int] = None) -> Dict[int, str]:
    """The job's id ``<job>``; for array element ``index``: the array's id ``<array>`` and the
    element's own ``<job>``."""
    if index is None:
        return {job.job_id: "<job>"}
    return {job.job_id: "<array>", job.array_ids.get(index, job.job_id): "<job>"}


def normalisers(job: Job, other: Job) -> Dict[str, Normaliser]:
    """File prefix (``env`` or ``env.a<i>``) → the normaliser of that job/element (the other
    side's ids of the same job or element are replaced too)."""
    if not job.array_ids:
        return {"env": Normaliser(job.side, placeholders(job), job.nodes(),
                                  other_jobs=placeholders(other))}
    out = {}
    for index, own in job.array_ids.items():
        nodes = job.side.expand(job.side.job_field(own, "NodeList"))
        out[f"env.a{index}"] = Normaliser(job.side, placeholders(job, index), nodes,
                                          array_id=job.job_id,
                                          other_jobs=placeholders(other, index))
    return out


@pytest.mark.parametrize("case", list(SHAPES))
def test_environment(case: str, jobs: Dict[str, Dict[str, Job]]) -> None:
    real, ours = value(jobs[case]["real"]), value(jobs[case]["ours"])
    problems: List[str] = []
    real_n, our_n = normalisers(real, ours), normalisers(ours, real)
    if sorted(real_n) != sorted(our_n):
        problems.append(f"[{case}] array elements: real {sorted(real_n)}, ours {sorted(our_n)}")
    real_files, our_files = env_files(real), env_files(ours)
    for name in sorted(set(real_files) - set(our_files)):
        problems.append(f"[{case}] {name}: written on real Slurm only (a task that did not run "
                        "here)")
    for name in sorted(set(our_files) - set(real_files)):
        problems.append(f"[{case}] {name}: written by sbatch-k8s only (an extra task)")
    for name in sorted(set(real_files) & set(our_files)):
        prefix = next((p for p in sorted(real_n, key=len, reverse=True)
                       if name.startswith(p + ".")), "env")
        if prefix not in our_n:
            continue
        problems += diff_env(case, name,
                             real_n[prefix].env(parse_env(real.read(name)), case),
                             our_n[prefix].env(parse_env(ours.read(name)), case))
    if not real.array_ids:
        problems += diff_text(case, "job output (srun messages)",
                              real_n["env"].text(real.read("job.out")),
                              our_n["env"].text(ours.read("job.out")))
    report(problems + [n for n in (real.note,) if n and problems])
