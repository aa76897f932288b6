"""Labels and annotations: the one table of metadata keys sbatch-k8s writes, and their values.

Labels are how the login side finds a job's objects again (one LIST by label selector), how the
headless Service selects a job's pods, and how ``--exclusive`` keeps other jobs off a node.
Annotations carry what Slurm shows but Kubernetes has no field for (the original job name,
the options as given). Values are made valid label values here, in one place.
"""

from __future__ import annotations

from parsers.vocabulary import (
    OWNER, OWNER_PODS, PARENT_JOB, PODS, RELEASED_BY, SUBMITTED_FROM,
    MANAGER,
    JOB_ID,
    ARRAY_JOB_ID,
    ARRAY_TASK_ID,
    USER,
    PARTITION,
    ACCOUNT,
    MANAGED_BY,
    EXCLUSIVE,
    JOB_NAME,
    SUBMIT_TIME,
    OPTIONS,
    OPTION_SOURCES,
    COMMENT,
    HOLD,
    DEPENDENCY,
    BEGIN,
    RELEASE_LABELS,
    SCANCEL_REQUESTS,
    KIND,
)
import re
import shlex
from typing import Dict, Optional, Sequence, Tuple

from parsers.jobspec import OptionRecord

KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: Set by Kubernetes, read by the runtime: how often the run restarted inside its workload
#: (``translators.pod.restarts_field``).
JOBSET_RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
INDEX_IGNORED_FAILURES = "batch.kubernetes.io/job-index-ignored-failure-count"

LABEL = "label"
ANNOTATION = "annotation"

#: Every metadata key: (key, kind, where it goes, what it says).
METADATA_KEYS: Tuple[Tuple[str, str, str, str], ...] = (
    (JOB_ID, LABEL, "every object and pod", "the Slurm job id (an array element's own id)"),
    (ARRAY_JOB_ID, LABEL, "every object and pod of an array", "SLURM_ARRAY_JOB_ID"),
    (ARRAY_TASK_ID, LABEL, "objects and pods of one array element", "SLURM_ARRAY_TASK_ID"),
    (USER, LABEL, "every object and pod", "the submitting user"),
    (PARTITION, LABEL, "every object and pod", "the Slurm partition"),
    (ACCOUNT, LABEL, "every object and pod, with --account", "the Slurm account"),
    (MANAGED_BY, LABEL, "every object and pod", "always sbatch-k8s"),
    (EXCLUSIVE, LABEL, "pods of --exclusive jobs", "true (whole node) or user"),
    (KUEUE_QUEUE, LABEL, "the workload, once it may start", "the partition's Kueue LocalQueue"),
    (KUEUE_PRIORITY, LABEL, "the workload, with a queue", "the --qos WorkloadPriorityClass"),
    (JOB_NAME, ANNOTATION, "the workload", "the job name as given (object names are slugs)"),
    (SUBMIT_TIME, ANNOTATION, "the workload", "Slurm's SubmitTime"),
    (OPTIONS, ANNOTATION, "the workload",
     "the options as given, as shell words (--export without values)"),
    (OPTION_SOURCES, ANNOTATION, "the workload", "where each option came from, same order"),
    (COMMENT, ANNOTATION, "the workload, with --comment", "Slurm's Comment"),
    (HOLD, ANNOTATION, "the workload, while held", "user (--hold, scontrol hold) or admin"),
    (DEPENDENCY, ANNOTATION, "the workload, until its --dependency is satisfied",
     "the dependency expression (translators.gates)"),
    (BEGIN, ANNOTATION, "the workload, until its --begin time",
     "the begin time, local time like submit-time (translators.gates)"),
    (RELEASE_LABELS, ANNOTATION, "the workload, with a queue, while held or gated",
     "the Kueue labels it gets when released, as JSON (translators.gates)"),
    (VOLCANO_GROUP, ANNOTATION, "pods, with gang = volcano", "the Volcano PodGroup"),
    (COMPLETION_INDEX, ANNOTATION, "(read) pods of Indexed Jobs", "the node index"),
    (JOBSET_RESTART_ATTEMPT, LABEL, "(read) pods of a --requeue JobSet",
     "the gang restarts so far: added to SLURM_RESTART_COUNT"),
    (INDEX_IGNORED_FAILURES, ANNOTATION, "(read) pods of an array run as one Indexed Job",
     "the disruptions of this element's earlier pods: added to SLURM_RESTART_COUNT"),
    (SCANCEL_REQUESTS, ANNOTATION, "node 0's pod, after scancel -s/-b/-f or of a step",
     "scancel's requests, oldest first, as JSON"),
    (KIND, LABEL, "records, job ConfigMaps and Secrets, the id counter",
     "record, job-files, job-secret, job-id-counter"),
    (OWNER, ANNOTATION, "every object and pod of a job submitted to a cluster",
     "the owner's cluster user name (translators.ownership)"),
    (PODS, ANNOTATION, "every object and pod, with an owner",
     "the pattern of the job's pod names (translators.ownership)"),
    (RELEASED_BY, ANNOTATION, "every object of a job with --dependency",
     "the pattern of the pod names of the jobs it waits for"),
    (SUBMITTED_FROM, ANNOTATION, "objects of a job submitted inside a job",
     "the submitting pod's name"),
    (OWNER_PODS, ANNOTATION, "objects of a job submitted inside a job",
     "the submitting job's pod name pattern"),
    (PARENT_JOB, ANNOTATION, "objects of a job submitted inside a job",
     "the submitting job's id"),
)

_LABEL_VALUE_MAX = 63
_NOT_LABEL_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_EDGE = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")


def text_to_label_value(text: str) -> str:
    """``text`` as a valid label value: other characters become ``-``, at most 63 characters,
    starting and ending with a letter or digit (empty when nothing is left)."""
    value = _EDGE.sub("", _NOT_LABEL_CHARS.sub("-", text))
    return _EDGE.sub("", value[:_LABEL_VALUE_MAX])


def common_labels(
    job_id: int,
    user: str,
    partition: str,
    account: Optional[str] = None,
    array_job_id: Optional[int] = None,
    array_task_id: Optional[int] = None,
) -> Dict[str, str]:
    """The labels of every object and pod template of one job (or one array element)."""
    labels = {JOB_ID: str(job_id)}
    if array_job_id is not None:
        labels[ARRAY_JOB_ID] = str(array_job_id)
    if array_task_id is not None:
        labels[ARRAY_TASK_ID] = str(array_task_id)
    labels[USER] = text_to_label_value(user)
    labels[PARTITION] = text_to_label_value(partition)
    if account:
        labels[ACCOUNT] = text_to_label_value(account)
    labels[MANAGED_BY] = MANAGER
    return labels


def _source_to_word(source: str) -> str:
    """``command line`` → ``cli``; ``job.sh:3: #SBATCH …`` → ``script:3``; env names stay."""
    if source == "command line":
        return "cli"
    found = re.match(r"^.*?:(\d+):", source)
    if found:
        return f"script:{found.group(1)}"
    return source.replace(" ", "_")


def export_names_only(raw: str) -> str:
    """``--export``'s text without the values it sets (``ALL,HF_TOKEN=abc`` →
    ``ALL,HF_TOKEN``): annotations are readable by anyone who can list the workload, while
    exported values are often secrets. Unparsable text is dropped whole."""
    from parsers.input_errors import ValueSyntaxError
    from parsers.values.export import parse_export

    try:
        items = parse_export(raw).items
    except ValueSyntaxError:
        return ""
    return ",".join(item.split("=", 1)[0] for item in items)


def given_to_words(given: Sequence[OptionRecord]) -> Tuple[str, str]:
    """The options as given, as shell words (``--nodes=2 --exclusive``), and their sources in
    the same order (``script:3 cli SBATCH_ACCOUNT``). Options an environment variable reset
    (a flag variable set to ``no``) are left out; ``--export`` keeps only the variables'
    names (:func:`export_names_only`)."""
    words = []
    sources = []
    for record in given:
        if record.raw is not None and "\0" in record.raw:
            continue
        raw = export_names_only(record.raw) if (
            record.name == "export" and record.raw is not None) else record.raw
        word = f"--{record.name}" if raw is None else f"--{record.name}={raw}"
        words.append(shlex.quote(word))
        sources.append(_source_to_word(record.source))
    return " ".join(words), " ".join(sources)


def workload_annotations(
    job_name: str, submit_time: str, given: Sequence[OptionRecord], comment: Optional[str],
    held: bool = False, gates: Optional[Dict[str, str]] = None
) -> Dict[str, str]:
    """The annotations of the workload object: what Slurm reports that has no field (and,
    for ``--hold``, who holds the suspended workload; ``gates``: what else keeps it
    suspended, :mod:`translators.gates`)."""
    options, sources = given_to_words(given)
    annotations = {JOB_NAME: job_name, SUBMIT_TIME: submit_time, OPTIONS: options,
                   OPTION_SOURCES: sources}
    if comment:
        annotations[COMMENT] = comment
    if held:
        annotations[HOLD] = "user"
    annotations.update(gates or {})
    return annotations
