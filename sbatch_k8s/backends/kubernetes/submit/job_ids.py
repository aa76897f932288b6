"""Slurm-style job ids, allocated cluster-wide from one counter.

The counter is one ConfigMap (``sbatch-k8s-job-ids``, key ``next``) in the cluster's state
namespace (:func:`state_namespace`: the configuration's ``state_namespace``, else
:data:`DEFAULT_STATE_NAMESPACE`, never the namespace of whoever submits: every context of a
cluster draws from the same counter). Allocation reads it and writes it back with the
resourceVersion it read: the API server refuses a stale write (409), so two submitters never
get the same id; the loser reads again.

Ids never go backwards. A counter that is missing (deleted, or lost with an etcd restore) is
created again above the highest job record in the namespaces the caller knows
(:func:`highest_recorded_id`), and a submission whose objects meet another job's (409 on a
create that is not its own earlier attempt, :mod:`.schedule`) raises the counter past that
job's records the same way (:func:`raise_above`) and takes a new id: an id is never taken
over. The ValidatingAdmissionPolicy in ``deploy/`` lets users only raise the counter.
"""

from __future__ import annotations

from parsers.vocabulary import COUNTER_KIND, KIND
import random
import time
from typing import Iterable, Optional

from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP
from sbatch_k8s.operation_errors import BackendError

COUNTER_NAME = "sbatch-k8s-job-ids"
COUNTER_KEY = "next"
#: Where the counter lives when the configuration names no ``state_namespace``: a namespace
#: every cluster has, the same whatever the kubeconfig context's namespace is.
DEFAULT_STATE_NAMESPACE = "default"
#: Slurm's first job id (FirstJobId's default).
FIRST_JOB_ID = 1
MAX_ATTEMPTS = 200


def state_namespace(configured: Optional[str]) -> str:
    """The namespace of the cluster's id counter (see the module docstring)."""
    return configured or DEFAULT_STATE_NAMESPACE


def highest_recorded_id(client: KubeClient, namespaces: Iterable[str]) -> int:
    """The highest job id (array elements included) of the records in ``namespaces`` that
    the caller may list (0 when none); a namespace it may not list counts as empty."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import JOB_ID_LABEL
    from parsers.vocabulary import RECORD_SELECTOR

    highest = 0
    for namespace in sorted(set(namespaces)):
        try:
            items, _ = client.list(CONFIG_MAP, namespace, RECORD_SELECTOR)
        except KubeError as e:
            if e.status in (403, 404):
                continue
            raise
        for item in items:
            value = ((item.get("metadata") or {}).get("labels") or {}).get(JOB_ID_LABEL, "")
            if value.isdigit():
                highest = max(highest, int(value))
    return highest


def _next_of(counter: dict) -> int:
    text = str((counter.get("data") or {}).get(COUNTER_KEY, FIRST_JOB_ID))
    return int(text) if text.isdigit() else FIRST_JOB_ID


def allocate_job_ids(client: KubeClient, namespace: str, count: int = 1,
                     known_namespaces: Iterable[str] = ()) -> int:
    """Reserve ``count`` consecutive ids; the first of them. A missing counter is created
    above the highest record of ``known_namespaces`` (and of ``namespace``)."""
    for attempt in range(MAX_ATTEMPTS):
        counter = client.get(CONFIG_MAP, COUNTER_NAME, namespace)
        try:
            if counter is None:
                first = max(FIRST_JOB_ID, highest_recorded_id(
                    client, list(known_namespaces) + [namespace]) + 1)
                client.create(_counter(first + count), namespace)
                return first
            first = _next_of(counter)
            counter.setdefault("data", {})[COUNTER_KEY] = str(first + count)
            client.replace(CONFIG_MAP, counter, namespace)
            return first
        except KubeError as e:
            if e.status != 409:
                raise
        time.sleep(min(0.002 * (attempt + 1), 0.05) * random.random())
    raise BackendError(f"could not allocate a job id: the counter {namespace}/{COUNTER_NAME} "
                       f"changed under every one of {MAX_ATTEMPTS} attempts")


def raise_above(client: KubeClient, namespace: str, taken: int,
                known_namespaces: Iterable[str] = ()) -> None:
    """Make the counter hand out ids above ``taken`` and above every record of
    ``known_namespaces`` (after a submission met an existing job's objects)."""
    floor = max(taken, highest_recorded_id(client, known_namespaces)) + 1
    for attempt in range(MAX_ATTEMPTS):
        counter = client.get(CONFIG_MAP, COUNTER_NAME, namespace)
        try:
            if counter is None:
                client.create(_counter(floor), namespace)
                return
            if _next_of(counter) >= floor:
                return
            counter.setdefault("data", {})[COUNTER_KEY] = str(floor)
            client.replace(CONFIG_MAP, counter, namespace)
            return
        except KubeError as e:
            if e.status != 409:
                raise
        time.sleep(min(0.002 * (attempt + 1), 0.05) * random.random())
    raise BackendError(f"could not raise the job id counter {namespace}/{COUNTER_NAME}")


def peek_next_id(client: KubeClient, namespace: str) -> int:
    """The id the counter would hand out next (``--test-only``), reserving nothing."""
    counter = client.get(CONFIG_MAP, COUNTER_NAME, namespace)
    return _next_of(counter) if counter is not None else FIRST_JOB_ID


def _counter(next_id: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": COUNTER_NAME,
                         "labels": {"app.kubernetes.io/managed-by": "sbatch-k8s",
                                    KIND: COUNTER_KIND}},
            "data": {COUNTER_KEY: str(next_id)}}
