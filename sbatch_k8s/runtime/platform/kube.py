"""Adapters of plain Kubernetes workloads: Indexed Job, JobSet and Volcano Job.

- Indexed Job: index ``JOB_COMPLETION_INDEX``; names ``<job>-<i>``;
- JobSet: index ``JOB_COMPLETION_INDEX``; names ``<jobset>-<job>-<j>-<i>``;
- both: the node count is the script's ``--nodes`` (a pod cannot see ``completions``);
  addresses ``<name>.<subdomain>``, the subdomain read from the pod's FQDN;
- Volcano Job: index = the own task's offset + ``VC_TASK_INDEX``; the count, names and
  addresses from every ``VC_<TASK>_HOSTS`` (checked against ``VC_<TASK>_NUM``).

Volcano tasks are ordered ``master`` (or ``chief``, ``launcher``) first, then by name, so a
master/worker job has its master as node 0.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, name_prefix, \
    number, subdomain_of

#: Volcano task names that come first (node 0 is their first pod).
LEADING_TASKS = ("master", "chief", "launcher")


def _own_index(container: Container) -> int:
    index = number(container, "JOB_COMPLETION_INDEX", "a completion index")
    tail = container.hostname.rsplit("-", 1)[-1]
    if tail != str(index):
        raise ContractError(f"hostname {container.hostname!r} does not end with the "
                            f"completion index {index}")
    return index


def indexed_job(container: Container) -> PlatformFacts:
    """A pod of a ``completionMode: Indexed`` Job with a headless Service (subdomain)."""
    index = _own_index(container)
    job = name_prefix(container.hostname, 1, "<job>-<index>")
    service = subdomain_of(container, job)

    def peers(n: int) -> Peers:
        names = tuple(f"{job}-{i}" for i in range(n))
        return names, tuple(f"{name}.{service}" for name in names)

    return PlatformFacts("indexed-job", index, None, peers, None, None, None,
                         f"indexed-job/{job}", ("JOB_COMPLETION_INDEX", "hostname"))


def jobset(container: Container) -> PlatformFacts:
    """A pod of a JobSet's replicated job (one child Job of N completions)."""
    index = _own_index(container)
    prefix = name_prefix(container.hostname, 1, "<jobset>-<job>-<j>-<i>")
    service = subdomain_of(container, name_prefix(prefix, 2, "<jobset>-<job>-<j>-<i>"))

    def peers(n: int) -> Peers:
        names = tuple(f"{prefix}-{i}" for i in range(n))
        return names, tuple(f"{name}.{service}" for name in names)

    return PlatformFacts("jobset", index, None, peers, None, None, None, f"jobset/{prefix}",
                         ("JOB_COMPLETION_INDEX", "hostname"))


def _volcano_tasks(container: Container) -> Dict[str, List[str]]:
    """Task variable stem (``WORKER``) → its hosts, from ``VC_<TASK>_HOSTS``."""
    tasks: Dict[str, List[str]] = {}
    for name, value in container.environ.items():
        if name.startswith("VC_") and name.endswith("_HOSTS") and len(name) > 9:
            tasks[name[3:-6]] = [h.strip() for h in value.split(",") if h.strip()]
    return tasks


def _task_order(stem: str) -> Tuple[int, str]:
    return (0 if stem.lower() in LEADING_TASKS else 1, stem)


def volcano(container: Container) -> PlatformFacts:
    """A pod of a Volcano Job with the ``svc`` and ``env`` plugins."""
    tasks = _volcano_tasks(container)
    if not tasks:
        raise ContractError("no VC_<TASK>_HOSTS variable is set (Volcano's svc plugin)")
    task_index = number(container, "VC_TASK_INDEX", "a task index")
    hosts: List[str] = []
    own = None
    for stem in sorted(tasks, key=_task_order):
        listed = tasks[stem]
        if f"VC_{stem}_NUM" in container.environ:
            expected = number(container, f"VC_{stem}_NUM", "a pod count")
            if expected != len(listed):
                raise ContractError(f"VC_{stem}_HOSTS lists {len(listed)} hosts but "
                                    f"VC_{stem}_NUM is {expected}")
        if any(h.split(".")[0] == container.hostname for h in listed):
            own = len(hosts)
        hosts += listed
    if own is None:
        raise ContractError(f"hostname {container.hostname!r} is in no VC_<TASK>_HOSTS list")
    names = tuple(h.split(".")[0] for h in hosts)
    if len(set(names)) != len(names):
        raise ContractError("VC_<TASK>_HOSTS name one host twice")
    index = own + task_index
    if names[index] != container.hostname:
        raise ContractError(f"VC_TASK_INDEX={task_index} does not point at this pod "
                            f"({container.hostname}) in its task's hosts")
    job = hosts[0].split(".")[1] if "." in hosts[0] else name_prefix(names[0], 2,
                                                                      "<job>-<task>-<i>")

    def peers(n: int) -> Peers:
        if n != len(hosts):
            raise ContractError(f"the Volcano job has {len(hosts)} pods, not {n}")
        return names, tuple(hosts)

    evidence = ("VC_TASK_INDEX",) + tuple(f"VC_{s}_HOSTS" for s in sorted(tasks))
    return PlatformFacts("volcano", index, len(hosts), peers, None, None, None,
                         f"volcano/{job}", evidence)
