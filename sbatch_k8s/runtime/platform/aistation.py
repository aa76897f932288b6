"""AIStation (Inspur) Master/Worker jobs: the platform sets only ``MASTER_ADDR`` and
``MASTER_PORT``; the user sets ``NNODES`` (master + workers), ``NPROC_PER_NODE`` (GPUs per
container) and ``RDZV_ID`` (unique per run). No variable says which container is which, so
the containers agree on ranks through a rendezvous at the master address
(:mod:`.rendezvous`): the master (the container ``MASTER_ADDR`` resolves to) is node 0.
"""

from __future__ import annotations

from parsers.platforms.contract_facts import JOB_KEY, MASTER_HOST, NODE_COUNT, PORT, PROCS_PER_NODE
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts
from sbatch_k8s.runtime.platform.variables import facts_from_environment


def is_master(container: Container, master: str) -> bool:
    """Whether this container is the one ``MASTER_ADDR`` names (by name or address)."""
    if master in (container.hostname, container.fqdn):
        return True
    try:
        return container.resolve(master) == container.resolve(container.hostname)
    except OSError:
        return False


def aistation(container: Container) -> PlatformFacts:
    """A container of an AIStation Master/Worker job (index: None until the rendezvous)."""
    seen = facts_from_environment("aistation", container.environ)
    master = (seen.get(MASTER_HOST) or "").strip()
    if not master:
        raise ContractError(f"{seen.name_of(MASTER_HOST)} is not set")
    count = seen.require(NODE_COUNT, f"{seen.name_of(NODE_COUNT)} is not set (AIStation jobs "
                                     "set it to master + workers)")
    port = seen.get(PORT)
    gpus = seen.get(PROCS_PER_NODE)
    rdzv_id = (seen.get(JOB_KEY) or "").strip()
    key = f"aistation/{rdzv_id}" if rdzv_id else f"aistation/{master}:{port}"
    evidence = [seen.name_of(MASTER_HOST), seen.name_of(NODE_COUNT)] + \
        ([seen.name_of(PROCS_PER_NODE)] if gpus else []) + \
        ([seen.name_of(JOB_KEY)] if rdzv_id else [])

    def peers(n: int) -> Peers:
        raise ContractError("AIStation peers are known only after the rendezvous")

    return PlatformFacts("aistation", None, count, peers, gpus, master, port, key,
                         tuple(evidence), rendezvous=True)
