"""A soak of the output path and of job ends on a real data plane (not a test: opt-in).

``python -m tests.bench.soak --jobs 200`` submits jobs of mixed shapes with ``sbatch --wait``
(1–2 nodes; 0 B–50 MB of output whose bytes are the CRI log format's worst cases: ``\\r\\n``,
lone ``\\r``, NUL, invalid UTF-8, 1 MB lines, no final newline; exit codes, time limits,
cancels, a deleted node-0 pod, out-of-memory kills) to the cluster of ``$KUBECONFIG`` with
the configuration of ``$SBATCHK8S_CONFIG`` (``../shared/tools/real-node``'s ``env.sh``
sets both). Each job's output file is compared byte for byte with what the job wrote
(regenerated here from the same seed), and its end with what was done to it (sacct). It
prints one line per mismatch and a summary: jobs, bytes, mismatches (goal: 0).

The bytes come from :func:`generate` run inside the job (``python3 -c``) and here alike: a
seeded ``random.Random`` (``getrandbits``: the same stream on every Python 3).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

#: The generator's source, shipped in each job's script and executed here too.
GENERATOR = r'''
import random, sys
def generate(seed, size, out):
    r = random.Random(seed)
    table = bytearray(b"abcdefghijklmnopqrstuvwxyz0123456789 " * 7)[:256]
    for i, special in enumerate(b"\n\n\n\n\n\n\r\x00\xff\xfe\xc3\x80\t\x1b"):
        table[r.getrandbits(8)] = special
    table = bytes(table)
    written = 0
    while written < size:
        n = min(size - written, 1 << 16)
        if r.getrandbits(6) == 0:
            block = b"L" * min(n, 1 << 20)      # a long line, no newline in it
            n = len(block)
        else:
            block = r.getrandbits(8 * n).to_bytes(n, "little").translate(table)
            if r.getrandbits(3) == 0:
                block = block.replace(b"\n", b"\r\n")
        out.write(block)
        written += n
if __name__ == "__main__":
    generate(int(sys.argv[1]), int(sys.argv[2]), sys.stdout.buffer)
'''
#: slurmstepd's line before the job's own bytes: its directory is not in the pods.
CHDIR_NOTE = b"slurmstepd: error: couldn't chdir to"
SIZES = (0, 1, 100, 4096, 100_000, 1_000_000, 5_000_000, 12_000_000, 25_000_000, 50_000_000)
SIZE_WEIGHTS = (3, 3, 10, 10, 10, 8, 4, 3, 2, 1)


def generate(seed: int, size: int) -> bytes:
    """The bytes a job with ``seed`` and ``size`` writes."""
    import io

    scope: Dict[str, object] = {"__name__": "soak"}
    exec(GENERATOR, scope)
    buffer = io.BytesIO()
    scope["generate"](seed, size, buffer)        # type: ignore[operator]
    return buffer.getvalue()


@dataclass
class Case:
    """One job of the soak: its shape, what is done to it and what it must end as."""

    index: int
    kind: str          # ok, fail, timeout, cancel, delete, oom
    nodes: int
    size: int
    seed: int
    expect_state: str
    expect_exit: str
    problems: List[str] = field(default_factory=list)
    job_id: Optional[int] = None
    output_bytes: int = 0
    #: sbatch --wait's exit status and what it said on stderr.
    returncode: Optional[int] = None
    stderr: str = ""
    #: The output differs, and sbatch said how many bytes were lost and exited non-zero
    #: (the loss reported, as the project promises when bytes rotated away unread).
    reported_loss: bool = False


def plan(count: int, seed: int, max_bytes: int) -> List[Case]:
    """``count`` cases, mostly plain jobs, with every kind of end among them."""
    r = random.Random(seed)
    kinds = ["ok"] * 16 + ["fail"] * 2 + ["cancel", "timeout", "delete", "oom"]
    cases = []
    for i in range(count):
        kind = kinds[i % len(kinds)] if i < len(kinds) else r.choice(kinds)
        size = min(r.choices(SIZES, SIZE_WEIGHTS)[0], max_bytes)
        if kind in ("timeout", "cancel", "delete", "oom"):
            size = min(size, 100_000)
        state, code = {"ok": ("COMPLETED", "0:0"), "fail": ("FAILED", "3:0"),
                       "timeout": ("TIMEOUT", "0:0"), "cancel": ("CANCELLED", "0:0"),
                       "delete": ("COMPLETED", "0:0"),
                       "oom": ("OUT_OF_MEMORY", "0:125")}[kind]
        cases.append(Case(i, kind, 1 + r.getrandbits(1), size, r.getrandbits(31),
                          state, code))
    return cases


def script(case: Case) -> str:
    """The batch script of ``case``."""
    lines = ["#!/bin/sh", f"#SBATCH -N{case.nodes} -J soak-{case.index} -o soak-%j.out"]
    if case.kind == "timeout":
        lines.append("#SBATCH --time=1")
    if case.kind == "oom":
        lines.append("#SBATCH --mem=200M")
    if case.kind == "delete":
        lines.append("#SBATCH --requeue")
    gen = GENERATOR.replace("'", "'\"'\"'")
    lines.append(f"python3 -c '{gen}' {case.seed} {case.size}")
    if case.kind == "fail":
        lines.append("exit 3")
    elif case.kind in ("timeout", "cancel"):
        lines.append("sleep 600")
    elif case.kind == "delete":
        lines.append('[ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] || sleep 600')
    elif case.kind == "oom":
        lines.append("python3 -c 'a = []\nwhile True: a.append(bytearray(20 << 20))'")
    return "\n".join(lines) + "\n"


def _run(argv: List[str], env: Dict[str, str], cwd: str, timeout: float = 60
         ) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _pod_of_node0(job_id: int, env: Dict[str, str]) -> Optional[str]:
    done = _run(["kubectl", "get", "pods", "-l", f"sbatch-k8s.io/job-id={job_id}", "-o",
                 "jsonpath={range .items[*]}{.metadata.name} {.metadata.annotations."
                 "batch\\.kubernetes\\.io/job-completion-index} {.status.phase}{\"\\n\"}"
                 "{end}"], env, ".")
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" ")
        if rest.startswith("0 Running"):
            return name
    return None


def run_case(case: Case, env: Dict[str, str], work: str) -> Case:
    """Submit, act, wait, and compare."""
    directory = os.path.join(work, f"case-{case.index}")
    os.makedirs(directory)
    with open(os.path.join(directory, "job.sh"), "w") as f:
        f.write(script(case))
    waiting = subprocess.Popen(["sbatch", "--wait", "--parsable", "job.sh"], env=env,
                               cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    job_id: Optional[int] = None
    assert waiting.stdout is not None
    first = waiting.stdout.readline().strip()
    if first.split(";")[0].isdigit():
        job_id = case.job_id = int(first.split(";")[0])
    if job_id is not None and case.kind in ("cancel", "delete"):
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            state = _run(["squeue", "-h", "-j", str(job_id), "-o", "%T"], env, directory)
            if state.stdout.strip() == "RUNNING":
                break
            time.sleep(1)
        time.sleep(3)
        if case.kind == "cancel":
            _run(["scancel", str(job_id)], env, directory)
        else:
            pod = _pod_of_node0(job_id, env)
            if pod is None:
                case.problems.append("node 0's pod never ran")
            else:
                _run(["kubectl", "delete", "pod", pod, "--wait=false"], env, directory)
    try:
        _, stderr = waiting.communicate(timeout=1800)
        case.returncode, case.stderr = waiting.returncode, stderr
    except subprocess.TimeoutExpired:
        waiting.kill()
        case.problems.append("sbatch --wait did not return within 30 min")
        return case
    if job_id is None:
        case.problems.append(f"no job id: {first} {stderr.strip()}")
        return case
    try:
        _check(case, env, directory, stderr)
    except Exception as e:          # a soak reports, never stops
        case.problems.append(f"the check failed: {e!r}")
    return case


def _check(case: Case, env: Dict[str, str], directory: str, stderr: str) -> None:
    job_id = case.job_id
    rows = _run(["sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State,ExitCode"],
                env, directory).stdout.splitlines()
    state = (rows[0].split("|") + ["?"])[:2] if rows else ["?", "?"]
    if not state[0].startswith(case.expect_state) or state[1] != case.expect_exit:
        case.problems.append(f"ended {'|'.join(state)}, expected {case.expect_state}|"
                             f"{case.expect_exit}")
    if case.kind == "delete":
        runs = _run(["sacct", "-j", str(job_id), "-X", "-D", "-n", "-P", "-o", "State"],
                    env, directory).stdout.splitlines()
        if not runs or runs[0] != "NODE_FAIL":
            case.problems.append(f"the deleted run reads {runs[:1]}, expected NODE_FAIL")
    path = os.path.join(directory, f"soak-{job_id}.out")
    if not os.path.exists(path):
        case.problems.append(f"no output file (sbatch said: {stderr.strip()[-300:]})")
        return
    with open(path, "rb") as f:
        got = f.read()
    case.output_bytes = len(got)
    while got.startswith(CHDIR_NOTE):       # slurmstepd's, first: the directory is not there
        got = got[got.index(b"\n") + 1:]
    if case.kind in ("ok", "fail", "delete"):
        want = generate(case.seed, case.size)
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                      min(len(got), len(want)))
            said = [line for line in stderr.splitlines() if "lost" in line or "incomplete"
                    in line]
            case.reported_loss = bool(said) and case.returncode != 0
            case.problems.append(
                f"output differs: {len(got)} bytes, expected {len(want)}; first difference at "
                f"byte {at}; sbatch exited {case.returncode}"
                + (f" saying: {said[0]}" if said else " SAYING NOTHING OF A LOSS"))
    elif not got.startswith(generate(case.seed, case.size)):
        case.problems.append("output does not begin with what the job wrote")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--max-mb", type=float, default=50)
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--kinds", default="",
                        help="only these kinds of case, comma-separated (ok, fail, cancel, "
                             "timeout, delete, oom): a fault's cases again, in number")
    args = parser.parse_args(argv)
    for tool in ("sbatch", "kubectl"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not on PATH")
    env = dict(os.environ, SBATCHK8S_REQUEUE_DELAY="2")
    work = tempfile.mkdtemp(prefix="sbatch-k8s-soak-")
    cases = plan(args.jobs, args.seed, int(args.max_mb * 1_000_000))
    if args.kinds:
        wanted = args.kinds.split(",")
        cases = [c for c in plan(args.jobs * 40, args.seed, int(args.max_mb * 1_000_000))
                 if c.kind in wanted][:args.jobs]
    lock = threading.Lock()
    started = time.monotonic()
    done: List[Case] = []
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        for case in pool.map(lambda c: run_case(c, env, work), cases):
            with lock:
                done.append(case)
                for problem in case.problems:
                    print(f"job {case.job_id} ({case.kind}, {case.nodes} node(s), "
                          f"{case.size} B): {problem}", flush=True)
    elapsed = time.monotonic() - started
    bad = [c for c in done if c.problems]
    reported = [c for c in bad if c.reported_loss and len(c.problems) == 1]
    summary = {"jobs": len(done), "bytes_written": sum(c.size for c in done),
               "bytes_compared": sum(c.output_bytes for c in done),
               "mismatches": len(bad), "losses_reported": len(reported),
               "silent_mismatches": len(bad) - len(reported), "by_kind": {},
               "elapsed_s": round(elapsed, 1)}
    for case in done:
        entry = summary["by_kind"].setdefault(case.kind, [0, 0])   # type: ignore[union-attr]
        entry[0] += 1
        entry[1] += bool(case.problems)
    print(json.dumps(summary, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
