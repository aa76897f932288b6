"""AIStation (Inspur) Master/Worker jobs: the platform sets only ``MASTER_ADDR`` and
``MASTER_PORT``; the user sets ``NNODES`` (master + workers), ``NPROC_PER_NODE`` (GPUs per
container) and ``RDZV_ID`` (unique per run). No variable says which container is which, so
the containers agree on ranks through a rendezvous at the master address
(:mod:`.rendezvous`): the master (the container ``MASTER_ADDR`` resolves to) is node 0.
"""

from __future__ import annotations

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, number, \
    parse_number


def _count(container: Container) -> int:
    text = container.environ.get("NNODES")
    if text is None:
        raise ContractError("NNODES is not set (AIStation jobs set it to master + workers)")
    if ":" in text:
        low, _, high = text.partition(":")
        if low.strip() != high.strip():
            raise ContractError(f"NNODES={text!r} is an elastic range; platform mode runs a "
                                "fixed number of nodes (set min = max)")
        text = low
    return parse_number("NNODES", text, "a node count", 1)


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
    master = container.environ.get("MASTER_ADDR", "").strip()
    if not master:
        raise ContractError("MASTER_ADDR is not set")
    count = _count(container)
    port = number(container, "MASTER_PORT", "a port") if "MASTER_PORT" in container.environ \
        else None
    gpus = number(container, "NPROC_PER_NODE", "a process count", 1) \
        if "NPROC_PER_NODE" in container.environ else None
    rdzv_id = container.environ.get("RDZV_ID", "").strip()
    key = f"aistation/{rdzv_id}" if rdzv_id else f"aistation/{master}:{port}"
    evidence = ["MASTER_ADDR", "NNODES"] + (["NPROC_PER_NODE"] if gpus else []) + \
        (["RDZV_ID"] if rdzv_id else [])

    def peers(n: int) -> Peers:
        raise ContractError("AIStation peers are known only after the rendezvous")

    return PlatformFacts("aistation", None, count, peers, gpus, master, port, key,
                         tuple(evidence), rendezvous=True)
