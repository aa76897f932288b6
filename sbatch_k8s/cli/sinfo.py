"""``sinfo``: the configured partitions and the nodes the backend gives each (on the local
backend one node, ``localhost``; on a cluster the nodes each partition selects), as Slurm
lists them. There are no reservations."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Callable, List, Mapping, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command, say_backend

if TYPE_CHECKING:
    from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo
    from parsers.report_options.sinfo_options import SinfoQuery
    from translators.config import ClusterConfig

COMMAND = "sinfo"


def node_listed(node: "NodeInfo", query: "SinfoQuery") -> bool:
    """The node filters: ``-n`` names, ``-t`` states, ``-d`` (only non-responding nodes),
    ``-r`` (only responding ones)."""
    from parsers.formats.sinfo_reasons import node_state_matches

    responding = "*" not in node.state_suffix
    if (query.dead and responding) or (query.responding and not responding):
        return False
    if query.nodes is not None and node.name not in query.nodes:
        return False
    return query.states is None or any(node_state_matches(node, s) for s in query.states)


def partition_infos(config: "ClusterConfig", by_partition: Mapping[str, Sequence["NodeInfo"]],
                    wanted: Optional[Sequence[str]] = None,
                    listed: Callable[["NodeInfo"], bool] = lambda node: True
                    ) -> List["PartitionInfo"]:
    """The configured partitions (those ``wanted``, all when None) in configuration order,
    each with its nodes that pass ``listed``, as sinfo and scontrol show them."""
    from parsers.formats.sinfo_fields import PartitionInfo

    return [PartitionInfo(p.name, tuple(n for n in by_partition.get(p.name, ()) if listed(n)),
                          p.name == config.default_partition, max_time_min=p.max_time_min,
                          default_time_min=p.default_time_min,
                          def_mem_per_cpu_mb=p.def_mem_per_cpu_mb)
            for p in config.partitions if wanted is None or p.name in wanted]


def _listing(query: "SinfoQuery", environ: Mapping[str, str]) -> str:
    """One listing (``-i`` prints one per period)."""
    from parsers.formats.sinfo_format import format_sinfo
    from parsers.formats.sinfo_reasons import NO_RESERVATIONS, format_reasons
    from sbatch_k8s.backends import open_backend

    if query.reservation:
        return NO_RESERVATIONS
    backend = open_backend(environ)
    partitions = partition_infos(backend.config, backend.cluster.partition_nodes(),
                                 query.partitions, lambda node: node_listed(node, query))
    now = int(time.time())
    if query.list_reasons:
        return format_reasons(partitions, query.long, not query.noheader, now)
    named = query.clusters is not None or "SLURM_CLUSTERS" in environ
    return format_sinfo(partitions, query.format, query.format_is_long, query.summarize,
                        query.node_oriented, query.long, not query.noheader, now,
                        backend.config.cluster_name if named else "")


def _main(argv: List[str]) -> int:
    from parsers.report_options.sinfo_options import format_error_lines, parse_sinfo_args
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.cli.listing import print_listings

    environ = os.environ
    query = parse_sinfo_args(argv, environ)
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    for line in format_error_lines(query):
        sys.stderr.write(f"{line}\n")
    say_backend(COMMAND, environ, query.verbose)
    return print_listings(COMMAND, query.clusters, query.iterate_s,
                          lambda: _listing(query, environ), environ, query.noheader)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
