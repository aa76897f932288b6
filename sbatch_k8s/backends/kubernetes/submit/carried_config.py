"""The configuration a job carries, so that the commands inside it see the same cluster.

``sbatch`` and ``squeue`` inside a job run as the job's ServiceAccount (partitions with
``service_account``), but the pod has neither the login machine's configuration file nor
its ``$SBATCHK8S_CONFIG`` (``--export`` leaves our variables behind). So the submitting
command copies the file it used into the job's ConfigMap (key :data:`CONFIG_KEY`, mounted
beside ``job.json``), and the runtime points the commands inside the job at it (the
runtime's ``sbatch_k8s.runtime.job_commands.CARRIED_CONFIG``). Built-in defaults (no file)
carry nothing: inside the job they are the defaults again.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping

from sbatch_k8s.config_file import find_config_file
from sbatch_k8s.operation_errors import ConfigurationError
from parsers.vocabulary import DESCRIPTION_KEY

#: Key of the job's ConfigMap holding the configuration file's text.
CONFIG_KEY = "config.toml"


def carry_configuration(units: Iterable[List[Dict[str, Any]]],
                        environ: Mapping[str, str]) -> None:
    """Add the configuration file in use to every unit's job ConfigMap (the one holding
    ``job.json``)."""
    path = find_config_file(environ)
    if path is None:
        return
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigurationError(f"{path}: {e}") from e
    for unit in units:
        for manifest in unit:
            data = manifest.get("data")
            if manifest.get("kind") == "ConfigMap" and data and DESCRIPTION_KEY in data:
                data[CONFIG_KEY] = text
