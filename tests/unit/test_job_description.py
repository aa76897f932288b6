"""The job description, typed (:class:`parsers.job_description.JobDescription`): what the
login side writes and what the runtime reads are the same fields, and a description comes
back whole from its two stored parts (``job.json`` and ``environment.json``), through a
rendered ConfigMap and Secret as through plain JSON."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest

from parsers import vocabulary
from parsers.allocation import allocate
from parsers.job_description import (
    PRIVATE_FIELDS,
    JobDescription,
    describe_job,
    description_fields,
    description_to_json,
    read_description,
    split_description,
)
from tests.pod_side.support import SHAPE, job_for
from tests.unit.translators.support import CONTEXT, render_script, script

REPO = Path(__file__).resolve().parents[2]
#: Where the description is read: the runtime and the variables it derives from it.
READERS = ("sbatch_k8s/runtime", "parsers", "sbatch_k8s/backends/local")
READ = re.compile(r'\b(?:desc|description)(?:\.get\(|\[)"([a-z_]+)"')
ARGS = ["-N2 --ntasks-per-node=2 --time=5", "--array=1-5%2 -o out.%A_%a",
        "--gpus-per-node=2 --signal=B:USR1@30 --export=ALL,HF_TOKEN=secret",
        "--exclusive --requeue --container-image=python:3.12 --container-mounts=/a:/b"]


def _described(args: str) -> Dict[str, Any]:
    job = job_for(args)
    environment = {"HOME": "/home/alice", "HF_TOKEN": "secret"}
    return dict(describe_job(job, allocate(job, SHAPE), CONTEXT, 7, "k8s",
                             "/home/alice/project", environment))


@pytest.mark.parametrize("args", ARGS)
def test_describe_job_writes_exactly_the_typed_fields(args: str) -> None:
    assert set(_described(args)) == set(JobDescription.__annotations__)


@pytest.mark.parametrize("args", ARGS)
def test_a_description_comes_back_whole_from_its_two_stored_parts(args: str) -> None:
    description = _described(args)
    public, private = split_description(description)
    assert set(private) == set(PRIVATE_FIELDS) and not set(public) & set(PRIVATE_FIELDS)
    again = read_description(json.loads(description_to_json(public)),
                             json.loads(description_to_json(private)))
    assert again == json.loads(json.dumps(description))


def _stored_parts(args: str) -> Iterator[Tuple[Dict[str, Any], Dict[str, Any]]]:
    manifests = render_script(script(*args.split())).manifests
    files = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "ConfigMap"}
    secrets = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "Secret"}
    for name, config_map in files.items():
        if vocabulary.DESCRIPTION_KEY not in config_map.get("data", {}):
            continue
        data = secrets[name]["data"]
        yield (json.loads(config_map["data"][vocabulary.DESCRIPTION_KEY]),
               json.loads(base64.b64decode(data[vocabulary.ENVIRONMENT_KEY])))


@pytest.mark.parametrize("args", ["-N2 --time=5", "--export=ALL,HF_TOKEN=secret -N1"])
def test_the_rendered_configmap_and_secret_hold_one_typed_description(args: str) -> None:
    parts = list(_stored_parts(args))
    assert parts
    for public, private in parts:
        description = read_description(public, private)
        assert set(JobDescription.__annotations__) <= set(description)
        assert set(description) <= set(description_fields())
        assert set(private) == set(PRIVATE_FIELDS)
        assert "secret" not in json.dumps(public)


def test_the_runtime_reads_only_described_fields() -> None:
    read = set()
    for top in READERS:
        for path in (REPO / top).rglob("*.py"):
            read |= set(READ.findall(path.read_text()))
    assert read, "no reader found: the pattern no longer matches how descriptions are read"
    assert read <= set(description_fields()), sorted(read - set(description_fields()))


def test_every_word_in_the_vocabulary_is_spelled_once() -> None:
    """No label, annotation or key of ours is spelled anywhere else in the product."""
    words = {v for k, v in vars(vocabulary).items()
             if k.isupper() and isinstance(v, str) and v.startswith(vocabulary.PREFIX)}
    spelled = []
    for top in ("parsers", "translators", "sbatch_k8s"):
        for path in (REPO / top).rglob("*.py"):
            if path.name == "vocabulary.py":
                continue
            text = path.read_text()
            spelled += [f"{path.relative_to(REPO)}: {w}" for w in words if f'"{w}"' in text]
    assert spelled == []
