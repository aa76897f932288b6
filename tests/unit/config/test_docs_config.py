"""docs/configuration.md is generated from the schema, and the shipped example is valid."""

from __future__ import annotations

import sys

from sbatch_k8s.docs_config import DOC, EXAMPLE, render_doc
from translators.config import cluster_config_from_dict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_configuration_doc_is_generated_from_the_schema():
    assert DOC.read_text() == render_doc(), (
        "docs/configuration.md is stale: run `python -m sbatch_k8s.docs_config`")


def test_the_example_configuration_is_valid_and_shows_the_new_users_keys():
    config = cluster_config_from_dict(tomllib.loads(EXAMPLE.read_text()))
    assert config.local.gpus > 0
    assert len(config.partitions) == 2
    assert config.alias_of("gpu") == "a100" and config.catch_all() == "debug"
    assert all(p.volumes for p in config.partitions)
