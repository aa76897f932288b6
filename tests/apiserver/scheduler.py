"""The scheduler loop: bind pending pods to nodes that fit, or say why none does.

Filters, in the default scheduler's terms: node unschedulable (cordoned), untolerated
``NoSchedule``/``NoExecute`` taints (a node whose Ready condition is not True counts as tainted
``node.kubernetes.io/not-ready``, as the node lifecycle controller would taint it),
``nodeSelector`` and required node affinity (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``,
``Gt``, ``Lt``; ``matchFields`` on ``metadata.name``), and resources: allocatable cpu, memory,
``nvidia.com/gpu`` (any extended resource) and the pod count minus the requests of pods
already bound and not finished. Among fitting nodes the least allocated wins (ties by name),
which spreads a job's pods as the default scoring does.

A pod with ``schedulingGates`` stays unbound with ``PodScheduled=False/SchedulingGated``; one
that fits nowhere gets ``PodScheduled=False/Unschedulable`` and the real message shape
(``0/2 nodes are available: 2 Insufficient nvidia.com/gpu.``). Only pods whose
``schedulerName`` this scheduler serves are considered (others wait for their own scheduler).

Not emulated: pod (anti-)affinity, topology spread constraints, preferred affinity, preemption,
volume and port checks, PodGroup/gang scheduling.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

from tests.apiserver import errors
from tests.apiserver.events import record_event
from tests.apiserver.loops import Loop
from tests.apiserver.quantities import parse_quantity, pod_requests
from tests.apiserver.store import Obj
from tests.apiserver.verbs import bind_pod, set_condition

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
SUPPORTED_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _tolerates(tolerations: List[Obj], taint: Obj) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists" and not tol.get("key"):
            return True
        if tol.get("key") != taint.get("key"):
            continue
        if tol.get("operator") == "Exists" or tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def _expression_matches(expr: Obj, values: Dict[str, str]) -> bool:
    key, op, wanted = expr.get("key", ""), expr.get("operator"), expr.get("values") or []
    present, value = key in values, values.get(key)
    if op == "In":
        return present and value in wanted
    if op == "NotIn":
        return not present or value not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and wanted:
        try:
            left, right = int(value or ""), int(wanted[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def _affinity_matches(spec: Obj, node: Obj) -> bool:
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    labels = node["metadata"].get("labels") or {}
    fields = {"metadata.name": node["metadata"]["name"]}
    return any(
        all(_expression_matches(e, labels) for e in term.get("matchExpressions") or [])
        and all(_expression_matches(e, fields) for e in term.get("matchFields") or [])
        and (term.get("matchExpressions") or term.get("matchFields"))
        for term in terms)


def _selector_matches(spec: Obj, node: Obj) -> bool:
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in (spec.get("nodeSelector") or {}).items())


def _taints(node: Obj) -> List[Obj]:
    taints = [t for t in (node.get("spec") or {}).get("taints") or []
              if t.get("effect") in ("NoSchedule", "NoExecute")]
    if not _ready(node) and not any(t.get("key") == NOT_READY["key"] for t in taints):
        taints.append(NOT_READY)
    return taints


def _allocatable(node: Obj) -> Dict[str, float]:
    status = node.get("status") or {}
    source = status.get("allocatable") or status.get("capacity") or {}
    found = {}
    for name, value in source.items():
        try:
            found[name] = parse_quantity(value)
        except ValueError:
            continue
    found.setdefault("pods", 110.0)
    return found


def explain(reasons: Dict[str, int], nodes: int) -> str:
    """The scheduler's FitError message."""
    if nodes == 0:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{nodes} nodes are available: {', '.join(parts)}."


class Scheduler(Loop):
    """See the module docstring."""

    keys = ("/pods", "/nodes")

    def __init__(self, api: Any, scheduler_names: Iterable[str] = ("default-scheduler",)
                 ) -> None:
        super().__init__(api)
        self.scheduler_names = tuple(scheduler_names)

    def reconcile(self) -> None:
        pods_res = self.resource("", "v1", "pods")
        nodes = self.api.store.peek("/nodes")
        pods = self.api.store.peek("/pods")
        used: Dict[str, Dict[str, float]] = {n["metadata"]["name"]: {} for n in nodes}
        pending: List[Obj] = []
        for pod in pods:
            spec, phase = pod.get("spec") or {}, (pod.get("status") or {}).get("phase")
            node_name = spec.get("nodeName")
            if node_name:
                if phase not in ("Succeeded", "Failed") and node_name in used:
                    self._add(used[node_name], pod_requests(spec))
            elif not pod["metadata"].get("deletionTimestamp") and \
                    spec.get("schedulerName", "default-scheduler") in self.scheduler_names:
                pending.append(pod)
        pending.sort(key=lambda p: (-int((p.get("spec") or {}).get("priority") or 0),
                                    int(p["metadata"]["resourceVersion"])))
        for pod in pending:
            self._schedule(pods_res, pod, nodes, used)

    @staticmethod
    def _add(usage: Dict[str, float], requests: Dict[str, float]) -> None:
        for name, amount in requests.items():
            usage[name] = usage.get(name, 0.0) + amount
        usage["pods"] = usage.get("pods", 0.0) + 1

    def _schedule(self, pods_res: Any, pod: Obj, nodes: List[Obj],
                  used: Dict[str, Dict[str, float]]) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if spec.get("schedulingGates"):
            self._condition(pods_res, pod, "SchedulingGated",
                            "Scheduling is blocked due to non-empty scheduling gates")
            return
        requests = pod_requests(spec)
        reasons: Dict[str, int] = {}
        fitting: List[Tuple[float, str]] = []
        for node in nodes:
            name = node["metadata"]["name"]
            reason = self._filter(spec, node, requests, used[name])
            if reason:
                for one in reason:
                    reasons[one] = reasons.get(one, 0) + 1
                continue
            fitting.append((self._score(node, requests, used[name]), name))
        if not fitting:
            self._condition(pods_res, pod, "Unschedulable", explain(reasons, len(nodes)))
            return
        best = sorted(fitting, key=lambda f: (-f[0], f[1]))[0][1]
        try:
            bind_pod(self.api, meta["namespace"], meta["name"], best)
        except errors.ApiError:
            return
        record_event(self.api, pod, "v1", "Pod", "Scheduled",
                     f"Successfully assigned {meta['namespace']}/{meta['name']} to {best}",
                     "default-scheduler")
        self._add(used[best], requests)

    def _filter(self, spec: Obj, node: Obj, requests: Dict[str, float],
                usage: Dict[str, float]) -> List[str]:
        if (node.get("spec") or {}).get("unschedulable"):
            return ["node(s) were unschedulable"]
        if not _selector_matches(spec, node) or not _affinity_matches(spec, node):
            return ["node(s) didn't match Pod's node affinity/selector"]
        tolerations = spec.get("tolerations") or []
        for taint in _taints(node):
            if not _tolerates(tolerations, taint):
                return [f"node(s) had untolerated taint {{{taint.get('key')}: "
                        f"{taint.get('value', '')}}}"]
        allocatable = _allocatable(node)
        short = []
        if usage.get("pods", 0.0) + 1 > allocatable["pods"]:
            short.append("Too many pods")
        for name, amount in sorted(requests.items()):
            if amount and usage.get(name, 0.0) + amount > allocatable.get(name, 0.0) + 1e-9:
                short.append(f"Insufficient {name}")
        return short

    @staticmethod
    def _score(node: Obj, requests: Dict[str, float], usage: Dict[str, float]) -> float:
        allocatable = _allocatable(node)
        free = []
        for name in ("cpu", "memory"):
            total = allocatable.get(name, 0.0)
            if total > 0:
                free.append((total - usage.get(name, 0.0) - requests.get(name, 0.0)) / total)
        return sum(free) / len(free) if free else 0.0

    def _condition(self, pods_res: Any, pod: Obj, reason: str, message: str) -> None:
        meta = pod["metadata"]

        def mark(current: Obj) -> Optional[Obj]:
            if (current.get("spec") or {}).get("nodeName"):
                return None
            changed = set_condition(current, "PodScheduled", "False", reason, message)
            return current if changed else None
        self.api.update_with(pods_res, meta["namespace"], meta["name"], mark, "status")
