"""The pod template every target shares: one container running the sbatch-k8s runtime.

The container's command checks for ``python3`` (the runtime's only need from the image) and
execs ``python3 /opt/sbatch-k8s/runtime.pyz node --contract <target>``; the runtime reads the
job from ``/etc/sbatch-k8s/job`` and makes the pod a Slurm node. The pod learns who it is from
the downward API (:func:`runtime_env`). ``terminationGracePeriodSeconds`` is Slurm's KillWait
(30 s) plus a margin, so tasks get SIGTERM, then SIGKILL, as under Slurm. The pod's and the
container's ``securityContext`` come from :mod:`translators.security` (the partition's
``pod_security`` and ``run_as``).

The time limit's backstop is the *pod's* ``activeDeadlineSeconds``, on every target: the kubelet
counts it from the moment it accepts the pod, so time spent Pending (queued in Kueue, waiting
for a gang, unschedulable) never counts — a Job's (or runPolicy's) ``activeDeadlineSeconds``
runs from the workload's start and could kill a job that only waited. Each array task's pod
gets its own. The margin is :data:`translators.plan.DEADLINE_MARGIN_S`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from translators import metadata
from translators.batch_job import per_index_failures
from translators.placement import exclusive_label, pod_anti_affinity
from translators.security import container_security_context, pod_security_context
from parsers.vocabulary import RUNTIME_DIR, RUNTIME_KEY
from translators.storage import pod_volumes

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit

TERMINATION_GRACE_S = 60
RUNTIME_PORT_NAME = "slurmd"
MIN_PYTHON = "3.8"


def _double_quoted(text: str) -> str:
    """``text`` inside double quotes for ``/bin/sh`` (``\\ " $ ` `` escaped)."""
    escaped = "".join("\\" + c if c in '\\"$`' else c for c in text)
    return f'"{escaped}"'


#: Exit status of a pod whose runtime is not the one its job was submitted with.
RUNTIME_MISMATCH_EXIT = 126
#: What checks the runtime before it runs: Python code carried in the pod's own command
#: (never in the shared ConfigMap it checks), parsed by any python3 (2.7 syntax too; one older
#: than 3.8 gets the runtime's own "needs Python >= 3.8" line). A mismatch writes one line on
#: stderr and the runtime's termination message (state FAILED, reason JobLaunchFailure, the
#: line as ``system_comment``: scontrol's SystemComment=, sbatch --wait's error), exit 126.
VERIFY_RUNTIME = """\
import hashlib, json, sys
if sys.version_info < (3, 8):
    sys.stderr.write("sbatch-k8s: error: python3 in this image is %d.%d; the sbatch-k8s "
                     "runtime needs Python >= 3.8\\n" % sys.version_info[:2])
    sys.exit(127)
from pathlib import Path
path, want = sys.argv[1], sys.argv[2]
got = hashlib.sha256(Path(path).read_bytes()).hexdigest()
if got != want:
    why = ("the runtime in %s is not the one this job was submitted with "
           "(SHA-256 %s, expected %s): it was not run" % (path, got[:16], want[:16]))
    sys.stderr.write("sbatch-k8s: error: " + why + "\\n")
    try:
        Path("/dev/termination-log").write_text(json.dumps({
            "state": "FAILED", "reason": "JobLaunchFailure", "exit_code": 126,
            "system_comment": why}))
    except OSError:
        pass
    sys.exit(126)
"""


def _single_quoted(text: str) -> str:
    """``text`` inside single quotes for ``/bin/sh``."""
    return "'" + text.replace("'", "'\\''") + "'"


def runtime_command(target: str, image: str, runtime_digest: str = "") -> List[str]:
    """The container command: fail with one clear line when the image has no python3,
    else, with ``runtime_digest`` (the runtime zipapp's full SHA-256), check the mounted
    runtime against it (:data:`VERIFY_RUNTIME`), then exec the runtime as a node of
    ``target``'s contract."""
    message = (f"sbatch-k8s: error: image {image} has no python3; the sbatch-k8s runtime "
               f"needs Python >= {MIN_PYTHON}")
    runtime = f"{RUNTIME_DIR}/{RUNTIME_KEY}"
    check = ""
    if runtime_digest:
        check = (f"python3 -c {_single_quoted(VERIFY_RUNTIME)} {runtime} {runtime_digest} || "
                 "exit $?; ")
    script = (f"command -v python3 >/dev/null 2>&1 || {{ echo {_double_quoted(message)} >&2; "
              f"exit 127; }}; {check}exec python3 {runtime} node --contract {target}")
    return ["/bin/sh", "-c", script]


#: Set in pods with a ServiceAccount of the partition's: node 0's runtime may use the API
#: (:mod:`sbatch_k8s.runtime.cluster.job_end`).
JOB_API_VARIABLE = "SBATCHK8S_JOB_API"


def _field_env(name: str, path: str) -> Dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


#: How often this pod's run restarted inside its workload, from the downward API
#: (:func:`restarts_field`); the runtime adds it to the description's restart count.
RESTARTED_VARIABLE = "SBATCHK8S_RESTARTED"


def restarts_field(plan: "JobPlan", unit: "Unit", jobset: bool) -> Optional[str]:
    """Where a pod reads the restarts Kubernetes made inside the workload, which a requeue
    of ours (a new workload with a higher restart count) does not see: the JobSet's restart
    attempt of a ``--requeue`` gang (:mod:`translators.targets.jobset`), or the disruptions
    of an array element's earlier pods, counted by the Job controller per index
    (``backoffLimitPerIndex``) when it replaces them (:mod:`translators.batch_job`). None
    where the workload never restarts a run itself."""
    if unit.indexed_array:
        if per_index_failures(plan, unit) and plan.job.requeue is not False:
            return f"metadata.annotations['{metadata.INDEX_IGNORED_FAILURES}']"
        return None
    if jobset and plan.job.requeue is True:
        return f"metadata.labels['{metadata.JOBSET_RESTART_ATTEMPT}']"
    return None


def runtime_env(job_id: int, port: int, node_index_env: bool,
                restarts: Optional[str] = None) -> List[Dict[str, Any]]:
    """What the runtime learns from the pod spec: namespace, pod name and IP, job id, port;
    ``SBATCHK8S_NODE_INDEX`` from the completion index where the target hides it;
    :data:`RESTARTED_VARIABLE` from the field ``restarts`` (:func:`restarts_field`)."""
    env = [
        _field_env("SBATCHK8S_NAMESPACE", "metadata.namespace"),
        _field_env("SBATCHK8S_POD_NAME", "metadata.name"),
        _field_env("SBATCHK8S_POD_IP", "status.podIP"),
        {"name": "SBATCHK8S_JOB_ID", "value": str(job_id)},
        {"name": "SBATCHK8S_RUNTIME_PORT", "value": str(port)},
    ]
    if node_index_env:
        env.append(_field_env("SBATCHK8S_NODE_INDEX",
                              f"metadata.annotations['{metadata.COMPLETION_INDEX}']"))
    if restarts:
        env.append(_field_env(RESTARTED_VARIABLE, restarts))
    return env


def main_container(plan: "JobPlan", unit: "Unit", name: str,
                   node_index_env: bool = False, restarts: Optional[str] = None) -> Dict[str, Any]:
    """The one container of every pod."""
    partition = plan.partition
    container: Dict[str, Any] = {"name": name, "image": plan.image}
    if partition.image_pull_policy:
        container["imagePullPolicy"] = partition.image_pull_policy
    container["command"] = runtime_command(plan.traits.name, plan.image,
                                           plan.inputs.runtime_digest)
    if plan.working_dir:
        container["workingDir"] = plan.working_dir
    container["env"] = runtime_env(unit.job_id, partition.runtime_port, node_index_env,
                                   restarts)
    if partition.service_account:  # node 0 records its job's end and releases dependents
        container["env"].append({"name": JOB_API_VARIABLE, "value": "1"})
    container["ports"] = [{"name": RUNTIME_PORT_NAME, "containerPort": partition.runtime_port}]
    container["resources"] = plan.resources.to_manifest()
    security = container_security_context(partition, plan.job.container_writable is False)
    if security:
        container["securityContext"] = security
    container["volumeMounts"] = copy.deepcopy(list(plan.mounts))
    return container


def _affinity(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    affinity: Dict[str, Any] = {}
    if plan.node_affinity:
        affinity["nodeAffinity"] = copy.deepcopy(dict(plan.node_affinity))
    own_id = None if unit.indexed_array else unit.job_id
    affinity["podAntiAffinity"] = pod_anti_affinity(plan.job, own_id, plan.inputs.context.user)
    return affinity


def pod_template(
    plan: "JobPlan",
    unit: "Unit",
    container: str,
    restart_policy: Optional[str] = "Never",
    subdomain: Optional[str] = None,
    pod_group: Optional[str] = None,
    node_index_env: bool = False,
    jobset: bool = False,
) -> Dict[str, Any]:
    """The pod template of ``unit``: labels, the runtime container, volumes, placement.

    ``pod_group`` names the Volcano PodGroup the pods join (targets whose operator does not
    make one); ``restart_policy`` None leaves it to the operator's replica spec; ``jobset``:
    the pods are a JobSet's (:func:`restarts_field`).
    """
    labels = plan.labels(unit)
    mode = exclusive_label(plan.job)
    if mode:
        labels[metadata.EXCLUSIVE] = mode
    meta: Dict[str, Any] = {"labels": labels}
    annotations = plan.annotations(unit)
    if pod_group:
        annotations[metadata.VOLCANO_GROUP] = pod_group
    if annotations:
        meta["annotations"] = annotations
    spec: Dict[str, Any] = {}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if subdomain:
        spec["subdomain"] = subdomain
    spec["enableServiceLinks"] = False
    security = pod_security_context(plan.partition, plan.inputs.context)
    if security:
        spec["securityContext"] = security
    spec["terminationGracePeriodSeconds"] = TERMINATION_GRACE_S
    if plan.active_deadline_s:
        spec["activeDeadlineSeconds"] = plan.active_deadline_s
    spec.update(plan.scheduling)
    if plan.node_selector:
        spec["nodeSelector"] = dict(plan.node_selector)
    spec["affinity"] = _affinity(plan, unit)
    if plan.tolerations:
        spec["tolerations"] = copy.deepcopy(list(plan.tolerations))
    spec["containers"] = [main_container(plan, unit, container, node_index_env,
                                         restarts_field(plan, unit, jobset))]
    spec["volumes"] = pod_volumes(unit.name, plan.inputs.runtime_hash, plan.partition, plan.job)
    return {"metadata": meta, "spec": spec}
