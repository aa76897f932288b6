"""Rendering a batch script as ``sbatch`` would, with the fixed inputs of the golden cases."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from parsers.allocation import NodeShape, allocate
from parsers.jobspec import SubmitContext
from parsers.sbatch_input import build_job, load_script, split_command_line
from parsers.platforms.target_names import TARGET_NAMES as TARGET_NAMES  # the tests' target list
from translators import RenderInputs, RenderResult, render
from translators.config import ClusterConfig, cluster_config_from_dict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES_DIR = Path(__file__).resolve().parents[2] / "cases"
GOLDEN_MINOR = 33

CONTEXT = SubmitContext(
    cwd="/home/alice/project", host="login1", user="alice", uid=1000, gid=1000, group="alice",
    environment=(("HOME", "/home/alice"), ("LANG", "C.UTF-8"), ("PATH", "/usr/bin:/bin"),
                 ("PROJECT", "demo")))
TOKEN = "test-token-0123456789abcdef"
RUNTIME_HASH = "0123456789ab"
SUBMIT_TIME = "2026-11-22T09:04:34"
JOB_ID = 1234
CLUSTER = "k8s"


def load_config() -> ClusterConfig:
    """The golden cases' cluster configuration (``tests/cases/config.toml``)."""
    with open(CASES_DIR / "config.toml", "rb") as f:
        return cluster_config_from_dict(tomllib.load(f))


CONFIG = load_config()


def inputs_for(
    text: str,
    args: Sequence[str] = (),
    script_path: str = "job.sh",
    target: str = "indexed-job",
    minor: int = GOLDEN_MINOR,
    config: Optional[ClusterConfig] = None,
    job_id: int = JOB_ID,
    array_job_id: Optional[int] = None,
) -> RenderInputs:
    """The render inputs of ``sbatch <args> <script_path>`` (the script after its path when
    ``args`` names it) with the fixed context."""
    config = config or CONFIG
    words = list(args) if script_path in args else list(args) + [script_path]
    command_line = split_command_line(words)
    script = load_script(command_line, text, command_line.script_path)
    job, _ = build_job(command_line, dict(CONTEXT.environment), script)
    partition = config.partition(job.partition)
    assert partition is not None, f"no partition {job.partition!r} in the test config"
    shape = NodeShape(partition.node_cpus, partition.node_gpus, partition.node_memory_mb)
    allocation = allocate(job, shape)
    return RenderInputs(job, allocation, CONTEXT, partition, CLUSTER, job_id, TOKEN,
                        RUNTIME_HASH, SUBMIT_TIME, target, minor, array_job_id)


def render_script(text: str, args: Sequence[str] = (), **kwargs: object) -> RenderResult:
    """Render ``text`` submitted with ``args`` (see :func:`inputs_for`)."""
    return render(inputs_for(text, args, **kwargs))  # type: ignore[arg-type]


def script(*directives: str, body: str = "srun hostname") -> str:
    """A batch script with ``#SBATCH`` lines for ``directives``."""
    lines = ["#!/bin/bash"] + [f"#SBATCH {d}" for d in directives] + [body]
    return "\n".join(lines) + "\n"


def manifest(result: RenderResult, kind: str, index: int = 0) -> dict:
    """The ``index``-th manifest of ``kind``."""
    found = [m for m in result.manifests if m["kind"] == kind]
    assert len(found) > index, f"no {kind} #{index} in {[m['kind'] for m in result.manifests]}"
    return found[index]


def workload(result: RenderResult) -> dict:
    """The first workload (Job, JobSet, PyTorchJob or MPIJob)."""
    kinds = ("Job", "JobSet", "PyTorchJob", "MPIJob")
    return next(m for m in result.manifests if m["kind"] in kinds)


def job_spec_of(result: RenderResult) -> dict:
    """The batch/v1 Job spec (of the Job, or of the JobSet's child)."""
    obj = workload(result)
    if obj["kind"] == "JobSet":
        return obj["spec"]["replicatedJobs"][0]["template"]["spec"]
    return obj["spec"]


def pod_templates(result: RenderResult) -> list:
    """Every pod template of the first workload (one per replica type)."""
    obj = workload(result)
    if obj["kind"] == "PyTorchJob":
        return [r["template"] for r in obj["spec"]["pytorchReplicaSpecs"].values()]
    if obj["kind"] == "MPIJob":
        return [r["template"] for r in obj["spec"]["mpiReplicaSpecs"].values()]
    return [job_spec_of(result)["template"]]


def pod_spec(result: RenderResult) -> dict:
    """The first pod template's spec."""
    return pod_templates(result)[0]["spec"]


def container(result: RenderResult) -> dict:
    """The main container of the first pod template."""
    return pod_spec(result)["containers"][0]
