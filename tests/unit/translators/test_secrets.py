"""No secrets in ConfigMaps, labels or annotations: the environment ``--export`` carries (and
the ``--export`` text itself) goes into the job's Secret only, on every target and for arrays.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from parsers.jobspec import SubmitContext
from translators import render
from tests.unit.translators.support import CONTEXT, TARGET_NAMES, inputs_for, script

SECRETS = {"HF_TOKEN": "hf_secretvalue123", "AWS_SECRET_ACCESS_KEY": "aws/Secret+Key987",
           "WANDB_API_KEY": "wandb0secret0key"}
#: Given on the command line, as ``--export=…,NAME=value``.
CLI_SECRET = ("OPENAI_API_KEY", "sk-cli-secret-4242")
SECRET_CONTEXT = dataclasses.replace(
    CONTEXT, environment=tuple(sorted(dict(CONTEXT.environment, **SECRETS).items())))

SHAPES = {
    "gang": ("-N 2", "-t 10"),
    "single-node array": ("--array=0-3%2",),
    "multi-node array": ("--array=1,5", "-N 2"),
}


def _render(target: str, directives: Tuple[str, ...], context: SubmitContext) -> List[Dict]:
    args = [f"--export=ALL,{CLI_SECRET[0]}={CLI_SECRET[1]}"]
    inputs = dataclasses.replace(inputs_for(script(*directives), args, target=target),
                                 context=context)
    return list(render(inputs).manifests)


def _metadata_texts(obj: Any) -> Iterator[str]:
    """Every label and annotation key and value anywhere in ``obj`` (pod templates too)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("labels", "annotations") and isinstance(value, dict):
                for k, v in value.items():
                    yield k
                    yield str(v)
            else:
                yield from _metadata_texts(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _metadata_texts(item)


def _private_parts(manifests: List[Dict]) -> List[Dict[str, Any]]:
    return [json.loads(base64.b64decode(m["data"]["environment.json"]))
            for m in manifests if m["kind"] == "Secret"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("target", TARGET_NAMES)
def test_exported_values_only_in_the_secret(target: str, shape: str) -> None:
    manifests = _render(target, SHAPES[shape], SECRET_CONTEXT)
    values = list(SECRETS.values()) + [CLI_SECRET[1]]
    for obj in manifests:
        if obj["kind"] == "Secret":
            continue
        text = json.dumps(obj)
        leaked = [v for v in values if v in text]
        assert not leaked, f"{obj['kind']} {obj['metadata']['name']} holds {leaked}"
    for obj in manifests:
        texts = " ".join(_metadata_texts(obj))
        assert not [v for v in values if v in texts]
    parts = _private_parts(manifests)
    assert parts and all(p["environment"][k] == v for p in parts for k, v in SECRETS.items())
    assert all(p["environment"][CLI_SECRET[0]] == CLI_SECRET[1] for p in parts)
    assert all(p["export"] == f"ALL,{CLI_SECRET[0]}={CLI_SECRET[1]}" for p in parts)


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_options_annotation_keeps_the_names(target: str) -> None:
    manifests = _render(target, ("-N 2",), SECRET_CONTEXT)
    workload = manifests[-1]
    options = workload["metadata"]["annotations"]["sbatch-k8s.io/options"]
    assert f"--export=ALL,{CLI_SECRET[0]}" in options.split()


def test_every_config_map_description_has_no_private_fields() -> None:
    for target in TARGET_NAMES:
        for directives in SHAPES.values():
            for obj in _render(target, directives, SECRET_CONTEXT):
                if obj["kind"] == "ConfigMap":
                    description = json.loads(obj["data"]["job.json"])
                    assert "environment" not in description and "export" not in description


def test_the_runtime_reads_the_secrets_key() -> None:
    from sbatch_k8s.runtime.agent.node_setup import ENVIRONMENT_FILE
    from parsers.vocabulary import ENVIRONMENT_KEY

    assert ENVIRONMENT_FILE == ENVIRONMENT_KEY
