"""Offline checks of rendered manifests: Kubernetes' own schemas for built-in kinds
(``kubernetes-validate``), the pinned CRDs of ``tests/data/crds`` for custom resources
(``jsonschema``, made strict so unknown fields fail), and the operators' admission rules
re-implemented as small checks.
"""

from __future__ import annotations

import functools
import gzip
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Tuple

import yaml

from tests.data import CRDS_DIR

BUILT_IN_API_VERSIONS = ("v1", "batch/v1")
CRD_FILES = ("jobsets", "mpijobs", "pytorchjobs", "podgroups")
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_LABEL_MAX = 63


def strictify(schema: Any, under_metadata: bool = False) -> Any:
    """A copy of ``schema`` in which objects with ``properties`` reject other keys (not under
    ``metadata``, nor where unknown fields are preserved), as a pruning API server would
    silently drop them."""
    if isinstance(schema, list):
        return [strictify(item, under_metadata) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: strictify(sub, under_metadata or name == "metadata")
                        for name, sub in value.items()}
        else:
            out[key] = strictify(value, under_metadata)
    if ("properties" in out and not under_metadata and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@functools.lru_cache(maxsize=None)
def crd_validators() -> Dict[Tuple[str, str], Any]:
    """(apiVersion, kind) → a Draft7Validator of the pinned CRD's strict schema (cached)."""
    import jsonschema

    validators = {}
    for name in CRD_FILES:
        with gzip.open(CRDS_DIR / f"{name}.yaml.gz", "rt") as f:
            crd = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = strictify(version["schema"]["openAPIV3Schema"])
            validators[(f"{group}/{version['name']}", kind)] = jsonschema.Draft7Validator(schema)
    return validators


def _dns_1035(name: str, what: str) -> List[str]:
    if len(name) > DNS_LABEL_MAX or not DNS_1035.match(name):
        return [f"{what} {name!r} is not a DNS-1035 label of at most {DNS_LABEL_MAX} characters"]
    return []


def _containers(template: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    return list(template["spec"]["containers"])


def webhook_problems(obj: Mapping[str, Any]) -> List[str]:
    """What the operators' admission webhooks (and Kubernetes' name rules) would refuse."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    problems = _dns_1035(name, f"{kind} name")
    if kind == "Job":
        last = obj["spec"]["completions"] - 1
        problems += _dns_1035(f"{name}-{last}", "pod hostname")
    elif kind == "JobSet":
        for rjob in obj["spec"]["replicatedJobs"]:
            last_job = rjob.get("replicas", 1) - 1
            last_pod = rjob["template"]["spec"]["completions"] - 1
            problems += _dns_1035(f"{name}-{rjob['name']}-{last_job}", "child Job name")
            problems += _dns_1035(f"{name}-{rjob['name']}-{last_job}-{last_pod}-abcde",
                                  "pod name")
    elif kind == "PyTorchJob":
        replicas = obj["spec"]["pytorchReplicaSpecs"]
        if replicas.get("Master", {}).get("replicas") != 1:
            problems.append("PyTorchJob Master replicas must be 1")
        if "Worker" in replicas and replicas["Worker"]["replicas"] < 1:
            problems.append("PyTorchJob Worker replicas must be >= 1")
        for rtype, spec in replicas.items():
            containers = _containers(spec["template"])
            if not any(c["name"] == "pytorch" for c in containers):
                problems.append(f"PyTorchJob {rtype} has no container named pytorch")
            problems += [f"PyTorchJob {rtype} container {c['name']} has no image"
                         for c in containers if not c.get("image")]
            problems += _dns_1035(f"{name}-{rtype.lower()}-{spec['replicas'] - 1}",
                                  "per-pod Service name")
    elif kind == "MPIJob":
        replicas = obj["spec"]["mpiReplicaSpecs"]
        if replicas.get("Launcher", {}).get("replicas") != 1:
            problems.append("MPIJob Launcher replicas must be 1")
        problems += _dns_1035(f"{name}-launcher", "launcher Job name")
        if "Worker" in replicas:
            if replicas["Worker"]["replicas"] < 1:
                problems.append("MPIJob Worker replicas must be >= 1")
            problems += _dns_1035(f"{name}-worker-{replicas['Worker']['replicas'] - 1}",
                                  "worker pod name")
        for rtype, spec in replicas.items():
            if spec.get("restartPolicy") not in (None, "Never", "OnFailure"):
                problems.append(f"MPIJob {rtype} restartPolicy must be Never or OnFailure")
    return problems


@functools.lru_cache(maxsize=None)
def _cache_kubernetes_schemas() -> None:
    """kubernetes-validate reads its JSON schema files on every call; read each once."""
    from kubernetes_validate import utils

    utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)


def schema_problems(obj: Mapping[str, Any], minor: int) -> Iterator[str]:
    """Schema errors of ``obj`` against Kubernetes 1.``minor`` or its pinned CRD."""
    if obj["apiVersion"] in BUILT_IN_API_VERSIONS:
        import kubernetes_validate

        _cache_kubernetes_schemas()
        try:
            kubernetes_validate.validate(dict(obj), f"1.{minor}", strict=True)
        except kubernetes_validate.ValidationError as e:
            yield f"{obj['kind']} {'.'.join(map(str, e.path))}: {e.message}"
        return
    validator = crd_validators()[(obj["apiVersion"], obj["kind"])]
    for error in validator.iter_errors(dict(obj)):
        yield f"{obj['kind']} {'.'.join(map(str, error.path))}: {error.message}"


def manifest_problems(obj: Mapping[str, Any], minor: int) -> List[str]:
    """Every schema and admission problem of one manifest."""
    return list(schema_problems(obj, minor)) + webhook_problems(obj)


def load_yaml_documents(path: Path) -> List[Dict[str, Any]]:
    """The documents of a YAML file (tests read goldens back with it)."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
