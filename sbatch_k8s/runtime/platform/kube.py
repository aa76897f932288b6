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

from parsers.platforms.contract_facts import NODE_ADDRESSES, NODE_INDEX, volcano_hosts, \
    volcano_num, volcano_task
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, name_prefix, \
    number, subdomain_of
from sbatch_k8s.runtime.platform.variables import facts_from_environment

#: How the messages name every task's pods variable.
ANY_TASK_HOSTS = volcano_hosts("<TASK>")
#: Volcano task names that come first (node 0 is their first pod).
LEADING_TASKS = ("master", "chief", "launcher")
#: An Indexed Job's (and JobSet's) pod index: no profile sets it, so not in the table.
COMPLETION_INDEX = "JOB_COMPLETION_INDEX"


def _own_index(container: Container) -> int:
    index = number(container, COMPLETION_INDEX, "a completion index")
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
                         f"indexed-job/{job}", (COMPLETION_INDEX, "hostname"))


def jobset(container: Container) -> PlatformFacts:
    """A pod of a JobSet's replicated job (one child Job of N completions)."""
    index = _own_index(container)
    prefix = name_prefix(container.hostname, 1, "<jobset>-<job>-<j>-<i>")
    service = subdomain_of(container, name_prefix(prefix, 2, "<jobset>-<job>-<j>-<i>"))

    def peers(n: int) -> Peers:
        names = tuple(f"{prefix}-{i}" for i in range(n))
        return names, tuple(f"{name}.{service}" for name in names)

    return PlatformFacts("jobset", index, None, peers, None, None, None, f"jobset/{prefix}",
                         (COMPLETION_INDEX, "hostname"))


def _volcano_tasks(container: Container) -> Dict[str, List[str]]:
    """Task variable stem (``WORKER``) → its hosts, from ``VC_<TASK>_HOSTS``."""
    tasks: Dict[str, List[str]] = {}
    for name, value in container.environ.items():
        stem = volcano_task(name)
        if stem is not None:
            tasks[stem] = list(NODE_ADDRESSES.parse(value))
    return tasks


def _task_order(stem: str) -> Tuple[int, str]:
    return (0 if stem.lower() in LEADING_TASKS else 1, stem)


def volcano(container: Container) -> PlatformFacts:
    """A pod of a Volcano Job with the ``svc`` and ``env`` plugins."""
    tasks = _volcano_tasks(container)
    if not tasks:
        raise ContractError(f"no {ANY_TASK_HOSTS} variable is set (Volcano's svc plugin)")
    seen = facts_from_environment("volcano", container.environ)
    task_index = seen.require(NODE_INDEX)
    hosts: List[str] = []
    own = None
    for stem in sorted(tasks, key=_task_order):
        listed = tasks[stem]
        if volcano_num(stem) in container.environ:
            expected = number(container, volcano_num(stem), "a pod count")
            if expected != len(listed):
                raise ContractError(f"{volcano_hosts(stem)} lists {len(listed)} hosts but "
                                    f"{volcano_num(stem)} is {expected}")
        if any(h.split(".")[0] == container.hostname for h in listed):
            own = len(hosts)
        hosts += listed
    if own is None:
        raise ContractError(f"hostname {container.hostname!r} is in no {ANY_TASK_HOSTS} list")
    names = tuple(h.split(".")[0] for h in hosts)
    if len(set(names)) != len(names):
        raise ContractError(f"{ANY_TASK_HOSTS} name one host twice")
    index = own + task_index
    if index >= len(names) or names[index] != container.hostname:
        raise ContractError(f"{seen.name_of(NODE_INDEX)}={task_index} does not point at this pod "
                            f"({container.hostname}) in its task's hosts")
    job = hosts[0].split(".")[1] if "." in hosts[0] else name_prefix(names[0], 2,
                                                                      "<job>-<task>-<i>")

    def peers(n: int) -> Peers:
        if n != len(hosts):
            raise ContractError(f"the Volcano job has {len(hosts)} pods, not {n}")
        return names, tuple(hosts)

    evidence = (seen.name_of(NODE_INDEX),) + tuple(volcano_hosts(s) for s in sorted(tasks))
    return PlatformFacts("volcano", index, len(hosts), peers, None, None, None,
                         f"volcano/{job}", evidence)
