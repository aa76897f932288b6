"""Slurm's facts and the platform variables that carry them: one table, both directions.

A platform tells its containers some of what Slurm tells a job's nodes, under its own names:
``RANK`` or ``PET_NODE_RANK`` or ``VC_TASK_INDEX`` is the node index, ``PET_NNODES`` or
``NNODES`` the node count, and so on. Each such variable is one row here (a
:class:`Variable`): its name, the Slurm fact it carries (a :class:`Fact`), and how an error
names a bad value. The fact says how to spell its value from :class:`SlurmFacts` (what the
contract profiles of :mod:`parsers.platforms.contract_profiles` give our own jobs) and how to read
the value back (what the platform-mode adapters of :mod:`sbatch_k8s.runtime.platform` read, through
:func:`sbatch_k8s.runtime.platform.variables.facts_from_environment`), so the two directions cannot
disagree; ``tests/pod_side/test_contract_table.py`` checks that every row reads back the fact it was
made from.

A variable whose value is not one fact as is (``TF_CONFIG``, a rank table's directory,
hostfiles, ``WORLD_SIZE`` where a reader must guess what it counts) is made by its profile's
own function and read by its adapter's own code; its name is still spelled only here or in
the profile's file rows. :data:`READINGS` lists, per platform-mode contract, the rows its
adapter reads, in the order it prefers them. Pod-side: standard library only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, NamedTuple, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from parsers.platforms.contract_profiles import ProfileFile


class SlurmFacts(NamedTuple):
    """What Slurm knows about one node of a job."""

    node_index: int
    node_names: Tuple[str, ...]
    gpus_per_node: int
    master_port: int
    job_id: int
    #: How the nodes are reached (``<pod>.<service>`` in pods); the names when empty.
    node_addresses: Tuple[str, ...] = ()
    #: ``MASTER_ADDR`` as the job has it; node 0's name when empty.
    master: str = ""
    #: Where the runtime wrote the profile's files; the platform's own paths when empty.
    files_dir: str = ""
    #: Each node's GPU ids as its tasks see them (``SLURM_STEP_GPUS``); 0…n-1 when empty.
    node_gpus: Tuple[Tuple[int, ...], ...] = ()

    @property
    def node_count(self) -> int:
        """Nodes in the job (``SLURM_NNODES``)."""
        return len(self.node_names)

    @property
    def master_addr(self) -> str:
        """Where torch-style rendezvous meet (``MASTER_ADDR``): node 0 unless set."""
        return self.master or self.node_names[0]

    @property
    def addresses(self) -> Tuple[str, ...]:
        """How each node is reached."""
        return self.node_addresses or self.node_names

    @property
    def procs_per_node(self) -> int:
        """Processes a launcher starts per node: one per GPU, one without GPUs."""
        return max(self.gpus_per_node, 1)

    def gpu_ids(self, node_index: int) -> Tuple[int, ...]:
        """The GPU (card) ids of node ``node_index``: one per process a launcher starts."""
        if self.node_gpus and self.node_gpus[node_index]:
            return self.node_gpus[node_index]
        return tuple(range(self.procs_per_node))

    def path_of(self, file: "ProfileFile") -> str:
        """Where the node finds ``file``: the runtime's copy, else the platform's path."""
        if self.files_dir:
            return os.path.join(self.files_dir, file.name)
        return file.fixed_path or file.name


def node_facts(node_index: int, names: Sequence[str], gpus_per_node: int, master_port: int,
               job_id: int, addresses: Sequence[str] = (), master: str = "",
               files_dir: str = "", node_gpus: Sequence[Sequence[int]] = ()) -> SlurmFacts:
    """The facts of node ``node_index`` of a job on ``names``."""
    return SlurmFacts(node_index, tuple(names), gpus_per_node, master_port, job_id,
                      tuple(addresses), master, files_dir, tuple(tuple(g) for g in node_gpus))


Value = Callable[[SlurmFacts], str]


def read_number(text: str, low: int = 0) -> int:
    """``text`` as a decimal integer of at least ``low`` (blanks around it allowed);
    ValueError otherwise."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or int(digits) < low:
        raise ValueError(f"{text!r} is not a number of at least {low}")
    return int(digits)


def _number(low: int) -> Callable[[str], int]:
    return lambda text: read_number(text, low)


def _address_list(text: str) -> Tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


class Fact(NamedTuple):
    """One thing Slurm knows about a node, and how a platform variable spells it."""

    words: str
    #: The fact's value for a node.
    of: Callable[[SlurmFacts], Any]
    #: Its spelling in a variable, and the inverse (ValueError for text that is none).
    spell: Callable[[Any], str]
    parse: Callable[[str], Any]


NODE_INDEX = Fact("node index", lambda f: f.node_index, str, _number(0))
NODE_COUNT = Fact("node count", lambda f: f.node_count, str, _number(1))
PROCS_PER_NODE = Fact("processes per node", lambda f: f.procs_per_node, str, _number(1))
PROCESS_COUNT = Fact("processes in the job", lambda f: f.node_count * f.procs_per_node, str,
                     _number(1))
FIRST_PROCESS = Fact("rank of the node's first process",
                     lambda f: f.node_index * f.procs_per_node, str, _number(0))
FIRST_DEVICE = Fact("the node's first GPU (card) id", lambda f: f.gpu_ids(f.node_index)[0],
                    str, _number(0))
MASTER_HOST = Fact("master address", lambda f: f.master_addr, str, str)
PORT = Fact("rendezvous port", lambda f: f.master_port, str, _number(0))
NODE_ADDRESSES = Fact("node addresses", lambda f: f.addresses, ",".join, _address_list)
JOB_KEY = Fact("job identity", lambda f: str(f.job_id), str, str)


class Variable(NamedTuple):
    """A platform variable: how a profile makes it and, when it carries one fact as is,
    which (read back by the fact's parse)."""

    name: str
    make: Value
    fact: Optional[Fact] = None
    #: How an error names a bad value ("a node rank").
    what: str = ""
    #: Accepts torchrun's ``min:max`` when both are equal.
    elastic: bool = False
    #: A value that is not the fact says nothing (``PET_NPROC_PER_NODE=auto``).
    lenient: bool = False


def carries(name: str, fact: Fact, what: str, elastic: bool = False,
            lenient: bool = False) -> Variable:
    """The row of variable ``name`` carrying ``fact`` as is."""
    return Variable(name, lambda f: fact.spell(fact.of(f)), fact, what, elastic, lenient)


# The rendezvous variables of every torch-style platform.
MASTER_ADDR = carries("MASTER_ADDR", MASTER_HOST, "an address")
MASTER_PORT = carries("MASTER_PORT", PORT, "a port")
RANK = carries("RANK", NODE_INDEX, "a node rank")
#: WORLD_SIZE counts nodes on the task-training platform (and Kubeflow ≤ v1.6, one process
#: per pod), processes on Kubeflow ≥ v1.7 and AI Hub.
WORLD_SIZE_NODES = carries("WORLD_SIZE", NODE_COUNT, "a node count")
WORLD_SIZE_PROCESSES = carries(WORLD_SIZE_NODES.name, PROCESS_COUNT, "a process count")
# Kubeflow's PET_* (torchrun's own variables, as the training operator sets them).
PET_MASTER_ADDR = carries("PET_MASTER_ADDR", MASTER_HOST, "an address")
PET_MASTER_PORT = carries("PET_MASTER_PORT", PORT, "a port")
PET_NNODES = carries("PET_NNODES", NODE_COUNT, "a node count", elastic=True)
PET_NODE_RANK = carries("PET_NODE_RANK", NODE_INDEX, "a node rank")
PET_NPROC_PER_NODE = carries("PET_NPROC_PER_NODE", PROCS_PER_NODE, "a process count",
                             lenient=True)
# AIStation's form.
NNODES = carries("NNODES", NODE_COUNT, "a node count", elastic=True)
NPROC_PER_NODE = carries("NPROC_PER_NODE", PROCS_PER_NODE, "a process count")
RDZV_ID = carries("RDZV_ID", JOB_KEY, "a rendezvous id")
# The task-training platform's GPUs per node.
SLOTS = carries("SLOTS", PROCS_PER_NODE, "a slot count")
# Volcano's env and svc plugins: per task ``VC_<TASK>_HOSTS`` and ``VC_<TASK>_NUM``.
VOLCANO_PREFIX = "VC_"
VOLCANO_HOSTS_SUFFIX = "_HOSTS"
VOLCANO_NUM_SUFFIX = "_NUM"
#: The task a profile puts every node in.
VOLCANO_TASK = "WORKER"
VC_TASK_INDEX = carries(VOLCANO_PREFIX + "TASK_INDEX", NODE_INDEX, "a task index")
# ModelArts (Ascend), at node level (each task gets its own: parsers.platforms.contract_variables).
ASCEND_DEVICE_ID = carries("ASCEND_DEVICE_ID", FIRST_DEVICE, "a device number")
RANK_ID = carries("RANK_ID", FIRST_PROCESS, "a rank")
RANK_SIZE = carries("RANK_SIZE", PROCESS_COUNT, "a device count")
#: Not one fact: a JSON cluster description (:mod:`parsers.platforms.contract_profiles` makes it).
TF_CONFIG = "TF_CONFIG"


def volcano_hosts(task: str) -> str:
    """The variable listing task ``task``'s pods (``VC_WORKER_HOSTS``)."""
    return f"{VOLCANO_PREFIX}{task}{VOLCANO_HOSTS_SUFFIX}"


def volcano_num(task: str) -> str:
    """The variable counting task ``task``'s pods (``VC_WORKER_NUM``)."""
    return f"{VOLCANO_PREFIX}{task}{VOLCANO_NUM_SUFFIX}"


def volcano_task(name: str) -> Optional[str]:
    """The task whose pods variable ``name`` lists (``WORKER`` for ``VC_WORKER_HOSTS``), or
    None when it lists none."""
    head, tail = len(VOLCANO_PREFIX), len(VOLCANO_HOSTS_SUFFIX)
    if name.startswith(VOLCANO_PREFIX) and name.endswith(VOLCANO_HOSTS_SUFFIX) and \
            len(name) > head + tail:
        return name[head:-tail]
    return None


#: A profile's one task: its pods are the nodes, in order (the adapter reads every task's
#: variables, found by :func:`volcano_task`).
VC_WORKER_HOSTS = carries(volcano_hosts(VOLCANO_TASK), NODE_ADDRESSES, "a host list")
VC_WORKER_NUM = carries(volcano_num(VOLCANO_TASK), NODE_COUNT, "a pod count")

#: The plain rows each platform-mode contract's adapter reads, preferred first where two
#: carry one fact (``PET_NODE_RANK`` before ``RANK``).
READINGS: Dict[str, Tuple[Variable, ...]] = {
    "pytorchjob": (PET_NODE_RANK, RANK, PET_NNODES, WORLD_SIZE_NODES, PET_NPROC_PER_NODE,
                   WORLD_SIZE_PROCESSES, MASTER_ADDR, PET_MASTER_ADDR, MASTER_PORT,
                   PET_MASTER_PORT),
    "trainjob": (PET_NODE_RANK, PET_NNODES, WORLD_SIZE_NODES, PET_NPROC_PER_NODE,
                 PET_MASTER_ADDR, PET_MASTER_PORT),
    "aistation": (MASTER_ADDR, NNODES, MASTER_PORT, NPROC_PER_NODE, RDZV_ID),
    "task-training": (RANK, MASTER_ADDR, MASTER_PORT, WORLD_SIZE_NODES, SLOTS),
    "volcano": (VC_TASK_INDEX,),
    "modelarts": (ASCEND_DEVICE_ID, RANK_ID, RANK_SIZE),
}
