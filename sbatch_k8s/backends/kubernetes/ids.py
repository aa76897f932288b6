"""Slurm-style job ids, allocated cluster-wide.

The counter is one ConfigMap (``sbatch-k8s-job-ids``, key ``next``) in the state namespace.
Allocation reads it and writes it back with the resourceVersion it read: the API server
refuses a stale write (409), so two submitters never get the same id; the loser reads again.
"""

from __future__ import annotations

import random
import time

from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import CONFIG_MAP
from sbatch_k8s.errors import BackendError

COUNTER_NAME = "sbatch-k8s-job-ids"
#: Slurm's first job id (FirstJobId's default).
FIRST_JOB_ID = 1
MAX_ATTEMPTS = 200


def allocate_job_ids(client: KubeClient, namespace: str, count: int = 1) -> int:
    """Reserve ``count`` consecutive ids; the first of them."""
    for attempt in range(MAX_ATTEMPTS):
        counter = client.get(CONFIG_MAP, COUNTER_NAME, namespace)
        try:
            if counter is None:
                client.create(_counter(FIRST_JOB_ID + count), namespace)
                return FIRST_JOB_ID
            first = int((counter.get("data") or {}).get("next", FIRST_JOB_ID))
            counter.setdefault("data", {})["next"] = str(first + count)
            client.replace(CONFIG_MAP, counter, namespace)
            return first
        except KubeError as e:
            if e.status != 409:
                raise
        time.sleep(min(0.002 * (attempt + 1), 0.05) * random.random())
    raise BackendError(f"could not allocate a job id: the counter {namespace}/{COUNTER_NAME} "
                       f"changed under every one of {MAX_ATTEMPTS} attempts")


def _counter(next_id: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": COUNTER_NAME,
                         "labels": {"app.kubernetes.io/managed-by": "sbatch-k8s"}},
            "data": {"next": str(next_id)}}
