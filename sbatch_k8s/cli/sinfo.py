"""``sinfo``: the local machine as Slurm would list it — one node per concurrent job slot is
not meaningful here, so each configured partition shows one node, ``localhost``, whose state
follows the CPUs running jobs hold (idle, mixed, allocated)."""

from __future__ import annotations

import os
import sys
import time
from typing import List, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command

COMMAND = "sinfo"


def _main(argv: List[str]) -> int:
    from parsers.formats.sinfo import format_sinfo
    from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo
    from parsers.report_options.sinfo import format_error_lines, parse_sinfo_args
    from sbatch_k8s import jobdb
    from sbatch_k8s.backends.local.capacity import local_cpus
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.config import load_config

    environ = os.environ
    query = parse_sinfo_args(argv, environ)
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    for line in format_error_lines(query):
        sys.stderr.write(f"{COMMAND}: error: {line}\n")
    config, _ = load_config(environ)
    total = local_cpus(config.local)
    used = jobdb.connect(environ).execute(
        "SELECT COALESCE(SUM(cpus), 0) FROM jobs WHERE state='RUNNING'").fetchone()[0]
    state = "idle" if used == 0 else ("allocated" if used >= total else "mixed")
    gres = f"gpu:{config.local.gpus}" if config.local.gpus else ""
    node = NodeInfo("localhost", state, total, min(used, total),
                    config.local.memory_mb or 1, gres=gres)
    partitions = [PartitionInfo(p.name, (node,), p.name == config.default_partition,
                                max_time_min=p.max_time_min)
                  for p in config.partitions
                  if query.partitions is None or p.name in query.partitions]
    sys.stdout.write(format_sinfo(partitions, query.format, query.format_is_long,
                                  query.summarize, query.node_oriented, query.long,
                                  not query.noheader, int(time.time())))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
