"""What the Job controller puts on its pods, and how it judges a failed pod.

Pod construction follows ``pkg/controller/job`` (v1.29): Indexed pods are named
``<job>-<index>-<random5>`` with ``spec.hostname: <job>-<index>``, the completion index as a
label and an annotation, ``JOB_COMPLETION_INDEX`` from a fieldRef on the annotation in every
container, the ``batch.kubernetes.io/job-tracking`` finalizer, and a controller owner
reference to the Job. Index sets use the API's interval text (``0-2,5``).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from tests.apiserver import metadata

Obj = Dict[str, Any]

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_FAILURES_KEY = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURES_KEY = "batch.kubernetes.io/job-index-ignored-failure-count"
INDEX_ENV = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
    "apiVersion": "v1", "fieldPath": f"metadata.annotations['{INDEX_KEY}']"}}}


def parse_indexes(text: Optional[str]) -> Set[int]:
    """``"0-2,5"`` → {0, 1, 2, 5}."""
    found: Set[int] = set()
    for part in (text or "").split(","):
        if not part.strip():
            continue
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


def format_indexes(indexes: Iterable[int]) -> str:
    """{0, 1, 2, 5} → ``"0-2,5"``."""
    ordered = sorted(set(indexes))
    runs: List[Tuple[int, int]] = []
    for index in ordered:
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def pod_index(pod: Obj) -> Optional[int]:
    """A pod's completion index from its annotation (or label), None when absent/invalid."""
    meta = pod["metadata"]
    text = (meta.get("annotations") or {}).get(INDEX_KEY) or (meta.get("labels") or {}).get(
        INDEX_KEY)
    return int(text) if text is not None and str(text).isdigit() else None


def new_pod(job: Obj, index: Optional[int], failures: Optional[Sequence[int]] = None) -> Obj:
    """The pod the controller creates for ``index`` (None for NonIndexed Jobs); with
    ``backoffLimitPerIndex``, ``failures`` (counted, ignored) are the index's earlier ones."""
    meta, template = job["metadata"], job["spec"].get("template") or {}
    name = meta["name"]
    pod_meta = copy.deepcopy(template.get("metadata") or {})
    spec = copy.deepcopy(template.get("spec") or {})
    labels = pod_meta.setdefault("labels", {})
    annotations = pod_meta.setdefault("annotations", {})
    if index is not None:
        labels[INDEX_KEY] = str(index)
        annotations[INDEX_KEY] = str(index)
        if (job["spec"].get("backoffLimitPerIndex")) is not None:
            counted, ignored = failures or (0, 0)
            annotations[INDEX_FAILURES_KEY] = str(counted)
            if ignored:
                annotations[INDEX_IGNORED_FAILURES_KEY] = str(ignored)
        spec.setdefault("hostname", f"{name}-{index}")
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            env = container.setdefault("env", [])
            if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in env):
                env.append(copy.deepcopy(INDEX_ENV))
    if not annotations:
        pod_meta.pop("annotations")
    pod_meta.pop("name", None)
    pod_meta["generateName"] = f"{name}-{index}-" if index is not None else f"{name}-"
    pod_meta["namespace"] = meta["namespace"]
    pod_meta["finalizers"] = [TRACKING_FINALIZER]
    pod_meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": name,
                                    "uid": meta["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


def _exit_codes(pod: Obj, container_name: Optional[str]) -> List[Tuple[str, int]]:
    status = pod.get("status") or {}
    codes = []
    for entry in (status.get("initContainerStatuses") or []) + (
            status.get("containerStatuses") or []):
        terminated = (entry.get("state") or {}).get("terminated")
        if terminated is None or (container_name and entry.get("name") != container_name):
            continue
        codes.append((entry.get("name", ""), int(terminated.get("exitCode", 0))))
    return codes


def match_failure_policy(job: Obj, pod: Obj) -> Optional[Tuple[str, str]]:
    """(action, message) of the first podFailurePolicy rule a failed pod matches, else None."""
    rules = ((job.get("spec") or {}).get("podFailurePolicy") or {}).get("rules") or []
    meta = pod["metadata"]
    where = f"{meta.get('namespace')}/{meta.get('name')}"
    for number, rule in enumerate(rules):
        action = rule.get("action", "Count")
        on_codes = rule.get("onExitCodes")
        if on_codes:
            wanted = set(on_codes.get("values") or [])
            for container, code in _exit_codes(pod, on_codes.get("containerName")):
                if code == 0:
                    continue
                if (code in wanted) == (on_codes.get("operator", "In") == "In"):
                    return action, (f"Container {container} for pod {where} failed with exit "
                                    f"code {code} matching {action} rule at index {number}")
        for wanted_cond in rule.get("onPodConditions") or []:
            for condition in (pod.get("status") or {}).get("conditions") or []:
                if condition.get("type") == wanted_cond.get("type") and \
                        condition.get("status") == wanted_cond.get("status", "True"):
                    return action, (f"Pod {where} has condition {condition['type']} matching "
                                    f"{action} rule at index {number}")
    return None


def success_policy_met(job: Obj, completed: Set[int]) -> Optional[int]:
    """Index of the first successPolicy rule the completed indexes satisfy, else None."""
    rules = ((job.get("spec") or {}).get("successPolicy") or {}).get("rules") or []
    for number, rule in enumerate(rules):
        scope = parse_indexes(rule["succeededIndexes"]) if rule.get("succeededIndexes") \
            else None
        done = completed if scope is None else completed & scope
        count = rule.get("succeededCount")
        if scope is not None and count is None and scope <= completed:
            return number
        if count is not None and len(done) >= int(count):
            return number
    return None


def is_ready(pod: Obj) -> bool:
    """True when the pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def now() -> str:
    """The current timestamp (indirection for readability at call sites)."""
    return metadata.rfc3339()
