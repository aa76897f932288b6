"""What a requeue is on every backend, as slurmctld does it: how long a requeued job waits
before it may start, which ends requeue a job that allows it, and the reason a job requeued
held shows. The local scheduler (:mod:`sbatch_k8s.backends.local.requeue`) and the cluster's
requeue (:mod:`sbatch_k8s.backends.kubernetes.requeue.next_run`) both follow these."""

from __future__ import annotations

from typing import Mapping

from parsers.job_records import NODE_FAIL, PREEMPTED

#: slurmctld's wait before a requeued job may start: the credential lifetime (120 s) + 1;
#: the variable sets it in seconds (the submitter's, kept with the job where it matters).
DEFAULT_REQUEUE_DELAY_S = 121.0
REQUEUE_DELAY_VARIABLE = "SBATCHK8S_REQUEUE_DELAY"
#: How a run ends when the machine or the cluster ended it (a lost node; a node process, an
#: evicted or preempted pod stopped by a signal): a job that may be requeued, and is a batch
#: job, then runs again, that run kept as it ended — as slurmctld requeues on node failure.
REQUEUED_ENDS = (NODE_FAIL, PREEMPTED)


def requeue_delay_s(environ: Mapping[str, str]) -> float:
    """How long a job requeued by this command's user waits before it may start."""
    try:
        return max(0.0, float(environ.get(REQUEUE_DELAY_VARIABLE, "")))
    except ValueError:
        return DEFAULT_REQUEUE_DELAY_S
