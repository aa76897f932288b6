"""``sbatch-k8s config check [PATH]``: the configuration, checked as the commands load it.

Each section (every partition, ``[local]``) is checked on its own, then the file as a whole
with the faulty sections left empty (unknown top-level keys, ``default_partition``,
``partition_aliases``), so one run lists every problem: one line each, in the words the
commands use (``PATH: partitions.gpu.node_cpus must be an integer, not a string ("96")``).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import click

from sbatch_k8s.operation_errors import SbatchK8sError
from translators.config import ClusterConfig, ConfigError


def _problem(data: Dict[str, Any]) -> Optional[str]:
    """The first problem of ``data`` as the loader words it, or None."""
    from translators.config import cluster_config_from_dict

    try:
        cluster_config_from_dict(data)
    except ConfigError as e:
        return str(e)
    return None


def config_problems(data: Dict[str, Any]) -> List[str]:
    """Every problem of a parsed configuration file, section by section."""
    problems: List[str] = []
    whole = dict(data)
    partitions = data.get("partitions")
    if isinstance(partitions, dict):
        kept = dict(partitions)
        for name, table in partitions.items():
            found = _problem({"partitions": {name: table}})
            if found:
                problems.append(found)
                kept[name] = {}
        whole["partitions"] = kept
    if "local" in data:
        found = _problem({"local": data["local"]})
        if found:
            problems.append(found)
            whole["local"] = {}
    found = _problem(whole)
    if found and found not in problems:
        problems.append(found)
    return problems


def _summary(config: ClusterConfig) -> str:
    names = ", ".join(p.name + (" (default)" if p.name == config.default_partition else "")
                      for p in config.partitions)
    backend = config.backend or "chosen at run time (kubernetes with a kubeconfig, else local)"
    return f"partitions {names}; backend {backend}"


@click.group(name="config")
def command() -> None:
    """The configuration file."""


@command.command(name="check")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path: Optional[str]) -> None:
    """Check PATH (default: the configuration the commands would load)."""
    from sbatch_k8s.config_file import _read_toml, find_config_file
    from translators.config import BUILT_IN, cluster_config_from_dict

    if path is None:
        path = find_config_file(os.environ)
        if path is None:
            click.echo(f"no configuration file: built-in defaults ({_summary(BUILT_IN)})")
            return
    if not os.path.exists(path):
        raise SbatchK8sError(f"{path}: no such file")
    data = _read_toml(path)
    problems = config_problems(data)
    for problem in problems:
        click.echo(f"{path}: {problem}")
    if problems:
        raise click.exceptions.Exit(1)
    click.echo(f"{path}: fine: {_summary(cluster_config_from_dict(data))}")
