"""``sbatch --wait`` on a cluster: look until every job of the submission has ended.

Each look costs the same few LISTs as ``squeue`` (:mod:`.cluster_jobs`); the interval grows
from 0.2 s to 2 s, so short jobs return quickly and long ones cost little.
"""

from __future__ import annotations

import time
from typing import Dict, List, Sequence

from parsers.records import COMPLETED, JobRecord
from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError

FIRST_INTERVAL_S = 0.2
LONGEST_INTERVAL_S = 2.0


def exit_code_of(records: Sequence[JobRecord]) -> int:
    """sbatch --wait's exit code: the job's (1 when it ended by a signal or without
    completing); for an array, the highest."""
    codes = []
    for record in records:
        code = record.exit_code
        if record.exit_signal or (record.state != COMPLETED and code == 0):
            code = 1
        codes.append(code)
    return max(codes) if codes else 0


def wait_for_jobs(client: KubeClient, namespace: str, job_ids: Sequence[int]) -> int:
    """Block until all ``job_ids`` are final; their exit code as sbatch --wait returns it."""
    from sbatch_k8s.backends.kubernetes.cluster_jobs import joined_records, look
    from sbatch_k8s.backends.kubernetes.cluster_reads import LiveReads
    from sbatch_k8s.backends.kubernetes.dependencies import release_waiting
    from sbatch_k8s.backends.kubernetes.records import is_final

    wanted = set(job_ids)
    seen: Dict[int, JobRecord] = {}
    interval = FIRST_INTERVAL_S
    while True:
        try:
            view = look(client, namespace, active_only=False, job_ids=job_ids)
            now = int(time.time())
            records: List[JobRecord] = release_waiting(
                client, namespace, view.stored, joined_records(client, view, now),
                LiveReads(client), now, complete=False)
        except KubeError:
            records = []  # a passing failure: the retries inside ran out; look again
        for record in records:
            if record.job_id in wanted:
                seen[record.job_id] = record
        if len(seen) == len(wanted) and all(is_final(r) for r in seen.values()):
            return exit_code_of(list(seen.values()))
        time.sleep(interval)
        interval = min(interval * 1.5, LONGEST_INTERVAL_S)
