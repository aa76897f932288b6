"""The words both sides of a job agree on: every label, annotation, ConfigMap/Secret key, file
name and mount path that crosses between the commands (login side) and the runtime (pods).

The login side writes them (:mod:`translators.metadata`, :mod:`translators.storage`, the
Kubernetes backend's records) and the runtime reads or writes them back (node 0's release,
end report and step publisher, scancel's requests): one spelling here, imported by both, so
a rename cannot leave one side behind. Pod-side safe: plain strings, standard library only.
Which object carries each key, and what it says, is :data:`translators.metadata.METADATA_KEYS`.
"""

from __future__ import annotations

from typing import Tuple

#: Every key of ours starts with this (labels and annotations).
PREFIX = "sbatch-k8s.io/"
#: ``app.kubernetes.io/managed-by``'s value on everything sbatch-k8s creates.
MANAGER = "sbatch-k8s"
MANAGED_BY = "app.kubernetes.io/managed-by"

# Labels: how the login side and node 0 find a job's objects again.
JOB_ID = PREFIX + "job-id"
ARRAY_JOB_ID = PREFIX + "array-job-id"
ARRAY_TASK_ID = PREFIX + "array-task-id"
USER = PREFIX + "user"
PARTITION = PREFIX + "partition"
ACCOUNT = PREFIX + "account"
EXCLUSIVE = PREFIX + "exclusive"
#: What an object is when its kind alone does not say (values: the ``*_KIND`` below).
KIND = PREFIX + "kind"
#: A record's state: :data:`ACTIVE` until the job's end is written.
STATE = PREFIX + "state"
#: On a job's record while its workload waits for a dependency or begin time.
WAITING = PREFIX + "waiting"

# Values of :data:`KIND` and :data:`STATE`.
RECORD_KIND = "record"
FILES_KIND = "job-files"
SECRET_KIND = "job-secret"
COUNTER_KIND = "job-id-counter"
ACTIVE = "active"

# Annotations: what Slurm shows and Kubernetes has no field for.
JOB_NAME = PREFIX + "job-name"
SUBMIT_TIME = PREFIX + "submit-time"
OPTIONS = PREFIX + "options"
OPTION_SOURCES = PREFIX + "option-sources"
COMMENT = PREFIX + "comment"
HOLD = PREFIX + "hold"
DEPENDENCY = PREFIX + "dependency"
BEGIN = PREFIX + "begin"
#: The gates a workload waits behind (node 0 and the controller lift them).
GATES: Tuple[str, ...] = (DEPENDENCY, BEGIN)
#: The Kueue labels a held or gated workload gets only when it may start, as JSON.
RELEASE_LABELS = PREFIX + "release-labels"
#: scancel's signal and step-cancel requests, on node 0's pod.
SCANCEL_REQUESTS = PREFIX + "scancel-requests"
#: On a record: when the job ended (epoch seconds).
END_TIME = PREFIX + "end-time"
#: On a record while a requeue replaces its run: the epoch second the requeue began.
REQUEUEING = PREFIX + "requeueing"
#: On every object of one submission: its random mark (what a rollback deletes).
SUBMISSION = PREFIX + "submission"

# Ownership annotations (:mod:`translators.ownership`; the admission policies check them).
OWNER = PREFIX + "owner"
PODS = PREFIX + "pods"
RELEASED_BY = PREFIX + "released-by"
SUBMITTED_FROM = PREFIX + "submitted-from"
OWNER_PODS = PREFIX + "owner-pods"
PARENT_JOB = PREFIX + "parent-job"

# Keys of the job's ConfigMap and Secret: files in the pods' mounts.
RUNTIME_KEY = "runtime.pyz"
SCRIPT_KEY = "script"
DESCRIPTION_KEY = "job.json"
TOKEN_KEY = "token"
#: The description's private part (the exported environment): the Secret's key, and the
#: local backend's file beside the token.
ENVIRONMENT_KEY = "environment.json"
#: The downward-API file of :data:`SCANCEL_REQUESTS`.
CONTROL_KEY = "scancel-requests"

# Keys of a job's record ConfigMap (what sacct reads after the workload is gone).
RECORD_KEY = "record.json"
WORKLOAD_KEY = "workload.json"
#: Node 0's own report of the job's end.
REPORT_KEY = "report.json"
#: Node 0's running and last ended steps.
RUNNING_STEPS_KEY = "running-steps.json"
#: The name every record ConfigMap starts with (then the job id).
RECORD_PREFIX = "sbatch-k8s-job-"

# Where the pods see them.
RUNTIME_DIR = "/opt/sbatch-k8s"
JOB_DIR = "/etc/sbatch-k8s/job"
TOKEN_DIR = "/etc/sbatch-k8s/token"
CONTROL_DIR = "/etc/sbatch-k8s/control"

#: Selects every job record.
RECORD_SELECTOR = f"{KIND}={RECORD_KIND}"
#: Selects the records of jobs whose workload waits for a dependency or begin time.
WAITING_SELECTOR = f"{RECORD_SELECTOR},{STATE}={ACTIVE},{WAITING}=true"
