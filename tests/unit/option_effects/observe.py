"""What each backend makes of ``sbatch <args> job.sh``, as comparable data.

Kubernetes: the objects ``sbatch`` would create (rendered by the translators as the backend
renders them, with the target and Kubernetes version it would use) and the job's record (what
sacct reads). Local: what :func:`create_job` writes — the database row and the job's files —
with its supervisor not started.

Options only echoed back are left out, so that echoing an option is not taken for applying
it: the workload's annotations listing the options as given, and the description fields no
pod-side module reads (found by scanning the runtime's sources, see :func:`runtime_keys`).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Tuple

from parsers.jobspec import JobSpec, SubmitContext, SubmitOptions
from parsers.sbatch_input import build_job, load_script, split_command_line
from tests.unit.option_effects.probes import PROBE_FILES, SCRIPT
from translators.config import ClusterConfig, LocalConfig, PartitionConfig, VolumeConfig

REPO = Path(__file__).resolve().parents[3]
CONTEXT = SubmitContext(cwd="/shared/work", host="login", user="probe", uid=1000, gid=1000,
                        group="probe", environment=(("HOME", "/home/probe"),
                                                    ("PROBE_SUBMIT", "1")))
_SHARED = VolumeConfig(name="shared", mount_path="/shared", pvc="shared")
CONFIG = ClusterConfig(
    cluster_name="probe", default_partition="debug",
    partitions=(
        PartitionConfig(name="debug", image="python:3.12-slim", node_cpus=8, node_gpus=4,
                        node_memory_mb=64000, qos_priority_classes=(("high", "high-pc"),),
                        volumes=(_SHARED,)),
        PartitionConfig(name="other", namespace="other", image="python:3.11-slim",
                        node_cpus=8, node_gpus=4, node_memory_mb=64000, volumes=(_SHARED,)),
    ),
    local=LocalConfig(cpus=32, gpus=8, memory_mb=64000))


def write_probe_files(directory: Path) -> None:
    """The files probes name (``{files}``)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in PROBE_FILES.items():
        (directory / name).write_text(text)


def command_words(args: str, files: Path) -> List[str]:
    """``sbatch``'s arguments for a probe: the options, then the script (none with --wrap)."""
    words = shlex.split(args.format(files=files))
    return words if any(w.startswith("--wrap") for w in words) else words + ["job.sh"]


def submitted(args: str, files: Path, environ: Mapping[str, str]
              ) -> Tuple[JobSpec, SubmitOptions]:
    """The job and sbatch's settings of ``sbatch <args> job.sh`` (:data:`SCRIPT`)."""
    command_line = split_command_line(command_words(args, files))
    script = load_script(command_line, SCRIPT, command_line.script_path)
    return build_job(command_line, dict(environ), script)


@functools.lru_cache(maxsize=1)
def runtime_keys() -> FrozenSet[str]:
    """Description keys the pod side reads: named as a string in the runtime's modules or
    in :mod:`parsers.slurm_env` (the platform mode's own description builder, which writes
    every key, does not count)."""
    files = [p for p in (REPO / "sbatch_k8s" / "runtime").rglob("*.py")
             if p.name != "description.py"] + [REPO / "parsers" / "slurm_env.py"]
    text = "\n".join(p.read_text() for p in files)
    return frozenset(re.findall(r"[\"']([a-z_]+)[\"']", text))


def acted_on(description: Mapping[str, Any]) -> Dict[str, Any]:
    """The description without the fields nothing on the pod side reads."""
    return {k: v for k, v in description.items() if k in runtime_keys()}


def kubernetes_view(args: str, files: Path) -> Dict[str, Any]:
    """What the Kubernetes backend makes of the job: its objects and its record."""
    from parsers.option_values import kubernetes_minor
    from sbatch_k8s.backends.kubernetes.submit.create_objects import submitted_record
    from sbatch_k8s.submission_plan import plan_submission
    from translators import RenderInputs, render
    from parsers.vocabulary import OPTION_SOURCES, OPTIONS

    job, submit = submitted(args, files, dict(CONTEXT.environment))
    plan = plan_submission(job, submit, CONFIG, dict(CONTEXT.environment), context=CONTEXT)
    job, partition, allocation = plan.job, plan.partition, plan.allocation
    version = submit.k8s_kubernetes_version
    result = render(RenderInputs(
        job=job, allocation=allocation, context=CONTEXT, partition=partition,
        cluster_name=CONFIG.cluster_name, job_id=7, token="probe", runtime_hash="probe",
        submit_time="2026-01-01T00:00:00", target=submit.k8s_target or partition.target,
        kubernetes_minor=kubernetes_minor(version) if version else 29))
    objects = []
    for manifest in json.loads(json.dumps(result.manifests)):
        annotations = manifest["metadata"].get("annotations", {})
        for key in (OPTIONS, OPTION_SOURCES):
            annotations.pop(key, None)
        data = manifest.get("data") or {}
        if manifest["kind"] == "ConfigMap" and "job.json" in data:
            data["job.json"] = acted_on(json.loads(data["job.json"]))
        if manifest["kind"] == "Secret":
            manifest["data"] = {k: base64.b64decode(v).decode() for k, v in data.items()}
        objects.append(manifest)
    record = submitted_record(job, allocation, CONTEXT, partition, CONFIG.cluster_name, 7,
                              None, None, 0)
    return {"objects": objects, "record": dataclasses.asdict(record)}


#: Row columns that hold the submission's clock: compared as set or not.
_CLOCK_COLUMNS = ("submit_time", "eligible_time", "begin_time")
#: Row columns the scheduler derives from the others (a pending job's reason): an option
#: that changes only these is shown, not applied.
_DERIVED_COLUMNS = ("reason",)


#: What starts a submitted local job: ``(module, function)`` wherever the backend's
#: submission may call it. A probe only looks at what submission records.
_STARTERS = (("sbatch_k8s.backends.local.supervisor", "spawn_supervisor"),
             ("sbatch_k8s.backends.local.wakeup", "ensure_scheduler"),
             ("sbatch_k8s.backends.local.submit", "spawn_supervisor"),
             ("sbatch_k8s.backends.local.submit", "ensure_scheduler"))


def _keep_jobs_from_starting(monkeypatch: Any) -> None:
    import importlib

    found = 0
    for module_name, name in _STARTERS:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            monkeypatch.setattr(module, name, lambda *_, **__: None)
            found += 1
    assert found, "the local backend starts jobs some new way: update _STARTERS"


def local_view(args: str, files: Path, state: Path, monkeypatch: Any) -> Dict[str, Any]:
    """What the local backend makes of the job: its database row and its files (job 1 of a
    fresh state directory; the supervisor that would run it is not started)."""
    from sbatch_k8s import jobdb
    from sbatch_k8s.backends.local.layout import job_dir_of
    from sbatch_k8s.backends.local.submit import create_job
    from parsers.jobspec import SubmitOptions
    from sbatch_k8s.backends.local.capacity import local_shape
    from sbatch_k8s.submission_plan import plan_submission

    shutil.rmtree(state, ignore_errors=True)
    environ = {"SBATCHK8S_STATE_DIR": str(state), "HOME": "/home/probe", "PROBE_SUBMIT": "1"}
    _keep_jobs_from_starting(monkeypatch)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    job, _ = submitted(args, files, environ)
    job_id = create_job(plan_submission(job, SubmitOptions(quiet=True), CONFIG, environ,
                                        local_shape(CONFIG.local)), environ).job_ids[0]
    conn = jobdb.connect(environ)
    rows = [dict(r) for r in jobdb.select_jobs(conn)]
    conn.close()
    for row in rows:
        for column in _DERIVED_COLUMNS:
            row.pop(column, None)
        for column in _CLOCK_COLUMNS:
            if column in row:
                row[column] = row[column] is not None
    job_dir = Path(job_dir_of(environ, job_id))
    found = {p.name: p.read_text(errors="surrogateescape") for p in sorted(job_dir.iterdir())
             if p.name != "token"}
    found["job.json"] = acted_on(json.loads(found["job.json"]))
    return {"rows": rows, "files": found}
