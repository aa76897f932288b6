"""Contract profiles: the variables a platform would give a node, made from Slurm's facts.

One row per profile; each row maps a platform variable to the Slurm fact it carries
(``reference/platforms.md``). Platform mode reads the same variables back
(:mod:`sbatch_k8s.runtime.platform`); ``tests/platform/test_profiles.py`` proves that
every profile read back through its adapter gives the Slurm view it was made from.
Pod-side: standard library only.
"""

from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Sequence, Tuple


class SlurmFacts(NamedTuple):
    """What Slurm knows about one node of a job."""

    node_index: int
    node_names: Tuple[str, ...]
    gpus_per_node: int
    master_port: int
    job_id: int

    @property
    def node_count(self) -> int:
        """Nodes in the job (``SLURM_NNODES``)."""
        return len(self.node_names)

    @property
    def master_addr(self) -> str:
        """Node 0, where torch-style rendezvous meet (``MASTER_ADDR``)."""
        return self.node_names[0]

    @property
    def procs_per_node(self) -> int:
        """Processes a launcher starts per node: one per GPU, one without GPUs."""
        return max(self.gpus_per_node, 1)


Value = Callable[[SlurmFacts], str]

#: The rendezvous variables every torch-style profile carries.
_MASTER: Tuple[Tuple[str, Value], ...] = (
    ("MASTER_ADDR", lambda f: f.master_addr),
    ("MASTER_PORT", lambda f: str(f.master_port)),
)

#: Kubeflow's ``PET_*`` (torchrun's own variables, as the training operator sets them).
_PET: Tuple[Tuple[str, Value], ...] = (
    ("PET_MASTER_ADDR", lambda f: f.master_addr),
    ("PET_MASTER_PORT", lambda f: str(f.master_port)),
    ("PET_NNODES", lambda f: str(f.node_count)),
    ("PET_NODE_RANK", lambda f: str(f.node_index)),
    ("PET_NPROC_PER_NODE", lambda f: str(f.procs_per_node)),
)

#: profile → (variable, the Slurm fact it carries), in the order the platform sets them.
PROFILE_VARIABLES: Dict[str, Tuple[Tuple[str, Value], ...]] = {
    # Kubeflow PyTorchJob v1.7+: RANK is the pod's index, WORLD_SIZE pods × processes.
    "pytorchjob": _MASTER + (
        ("WORLD_SIZE", lambda f: str(f.node_count * f.procs_per_node)),
        ("RANK", lambda f: str(f.node_index)),
    ) + _PET,
    # AI Hub's PyTorchJob: RANK is the node's index, WORLD_SIZE the job's GPUs (its
    # processes, one per node without GPUs).
    "aihub": _MASTER + (
        ("WORLD_SIZE", lambda f: str(f.node_count * f.procs_per_node)),
        ("RANK", lambda f: str(f.node_index)),
    ) + _PET,
    # AIStation Master/Worker: the platform sets MASTER_*, the form the rest.
    "aistation": _MASTER + (
        ("NNODES", lambda f: str(f.node_count)),
        ("NPROC_PER_NODE", lambda f: str(f.procs_per_node)),
        ("RDZV_ID", lambda f: str(f.job_id)),
    ),
    # The task-training platform's PyTorch mode: WORLD_SIZE counts nodes, SLOTS GPUs.
    "task-training": _MASTER + (
        ("WORLD_SIZE", lambda f: str(f.node_count)),
        ("RANK", lambda f: str(f.node_index)),
        ("SLOTS", lambda f: str(f.procs_per_node)),
    ),
    # Volcano's svc and env plugins, every node in one task named "worker".
    "volcano": (
        ("VC_WORKER_HOSTS", lambda f: ",".join(f.node_names)),
        ("VC_WORKER_NUM", lambda f: str(f.node_count)),
        ("VC_TASK_INDEX", lambda f: str(f.node_index)),
    ),
}

#: Every profile with variables (``slurm``, the default, adds none).
PROFILE_NAMES: Tuple[str, ...] = tuple(PROFILE_VARIABLES)


def profile_environment(profile: str, facts: SlurmFacts) -> Dict[str, str]:
    """The variables ``profile``'s platform would give the node of ``facts`` (none for
    ``slurm``); KeyError for a profile this table does not know."""
    if profile == "slurm":
        return {}
    return {name: value(facts) for name, value in PROFILE_VARIABLES[profile]}


def node_facts(node_index: int, names: Sequence[str], gpus_per_node: int, master_port: int,
               job_id: int) -> SlurmFacts:
    """The facts of node ``node_index`` of a job on ``names``."""
    return SlurmFacts(node_index, tuple(names), gpus_per_node, master_port, job_id)
