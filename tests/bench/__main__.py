"""``python -m tests.bench``: every benchmark, side by side in one run; a table on stdout and
a JSON file (``tests/bench/results/bench-results.json``, git-ignored). ``--quick`` for fewer
repeats, ``--only a,b`` to pick modules, ``--no-real-slurm`` to skip starting real Slurm for
the comparisons, ``--doc docs/performance.md`` to record the table there, ``--kubeconfig
PATH`` to take the Kubernetes figures on the real API server PATH names (in a namespace of
their own, deleted at the end) instead of the emulated one.

Adding a backend's figures is one module here with a ``figures(ctx)`` function, listed in
:data:`MODULES`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from typing import List

from tests.bench.context import Context
from tests.bench.core import Figure, machine, render_table, update_doc, write_json

MODULES = ("parse_render", "commands", "database", "wait", "steps", "streaming", "arrays",
           "pending", "kubernetes", "kube_nodes", "platform_mode", "dependencies",
           "runtime_start", "real_nodes", "console", "accounting")
#: Results are per machine and run: they go to a git-ignored directory beside the benchmarks.
DEFAULT_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                            "bench-results.json")
DEFAULT_JSON_SHOWN = "tests/bench/results/bench-results.json"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=",".join(MODULES))
    parser.add_argument("--json", default=DEFAULT_JSON,
                        help=f"where every sample goes (default {DEFAULT_JSON_SHOWN})")
    parser.add_argument("--no-real-slurm", action="store_true")
    parser.add_argument("--doc", metavar="PATH",
                        help="also write the table into PATH (docs/performance.md)")
    parser.add_argument("--kubeconfig", metavar="PATH",
                        help="take the kubernetes figures on the real API server of PATH "
                             "(a namespace of their own, deleted at the end) instead of "
                             "the emulated one")
    args = parser.parse_args(argv)
    if args.kubeconfig and not os.path.exists(args.kubeconfig):
        parser.error(f"--kubeconfig {args.kubeconfig}: no such file")
    # Commands compile their modules once (as on any installed system), not on every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    ctx = Context(args.quick, not args.no_real_slurm,
                  os.path.abspath(args.kubeconfig) if args.kubeconfig else None)
    figures: List[Figure] = []
    begun = time.time()
    try:
        for name in args.only.split(","):
            started = time.time()
            module = importlib.import_module(f"tests.bench.{name}")
            try:
                figures += list(module.figures(ctx))
            except Exception as e:  # a benchmark that breaks reports, never aborts the run
                figures.append(Figure(name, "", skipped=f"{type(e).__name__}: {e}"))
            sys.stderr.write(f"[bench] {name}: {time.time() - started:.0f} s\n")
    finally:
        ctx.close()
    meta = machine()
    meta.update(seconds=round(time.time() - begun), real_slurm=ctx.real_reason or "running",
                kubernetes_api_server=args.kubeconfig or "emulated")
    table = render_table(figures)
    sys.stdout.write(table)
    write_json(figures, args.json, meta)
    if args.doc:
        update_doc(args.doc, table, meta)
    sys.stdout.write(f"\n{len(figures)} figures in {meta['seconds']} s; JSON: {args.json}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
