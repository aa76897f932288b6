"""ModelArts (Ascend NPUs, seed 004) and Ascend rank tables in general.

ModelArts starts the command once per card of every node, each instance with
``ASCEND_DEVICE_ID`` (its logical card, 0 … cards-1), ``RANK_ID`` (its card's index in the
job), ``RANK_SIZE`` (cards in the job) and ``RANK_TABLE_FILE``: the directory holding
``jobstart_hccl.json`` (or, as Ascend's operators mount it, the ``hccl.json`` file itself).
The instance with ``ASCEND_DEVICE_ID=0`` acts for its node (:mod:`.instances`).

The rank table is read once its ``status`` is ``completed`` (the platform writes it while
the job starts; :class:`NotReady` until then). Both templates:

- template 2 (ModelArts'): ``{"group_list": [{"group_name", "instance_list": [{"pod_name",
  "server_id", "devices": [{"device_id", "device_ip"}]}]}], "status"}``, ranks in list order;
- template 1: ``{"server_list": [{"server_id", "container_ip"?, "device": [{"device_id",
  "device_ip", "rank_id"}]}], "status", "version"}``.

A server is a node, in table order; this container is the server holding its ``RANK_ID``
(else the one whose ``pod_name`` is its hostname). Its cards are its GPUs. The nodes learn
each other's names and addresses through a rendezvous (:mod:`.rendezvous`) at the first
server's ``container_ip``, else its ``server_id``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import FIRST_DEVICE, FIRST_PROCESS, PROCESS_COUNT, RANK_ID
from parsers.platforms.contract_profiles import RANK_TABLE, RANK_TABLE_COMPLETED as COMPLETED, \
    RANK_TABLE_NAME
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, NotReady, Peers, PlatformFacts
from sbatch_k8s.runtime.platform.variables import facts_from_environment


class Server(NamedTuple):
    """One server (node) of a rank table."""

    pod_name: Optional[str]
    address: str
    devices: Tuple[str, ...]
    ranks: Tuple[int, ...]


def rank_table_path(value: str) -> str:
    """The rank table file ``RANK_TABLE_FILE`` names (a directory or the file)."""
    return value if value.endswith(".json") else os.path.join(value, RANK_TABLE_NAME)


def _int(value: Any, what: str) -> int:
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()):
        raise ContractError(f"the rank table's {what} {value!r} is not a number")
    return int(text)


def _devices(entries: Any, where: str) -> List[Dict[str, Any]]:
    if not isinstance(entries, list) or not all(isinstance(d, dict) for d in entries):
        raise ContractError(f"the rank table lists no devices for {where}")
    return entries


def _template_2(groups: Any) -> List[Server]:
    servers: List[Server] = []
    rank = 0
    for group in groups if isinstance(groups, list) else []:
        for instance in group.get("instance_list") or [] if isinstance(group, dict) else []:
            address = str(instance.get("container_ip") or instance.get("server_id") or "")
            devices = _devices(instance.get("devices"), address or "a server")
            ids = tuple(str(d.get("device_id", "")) for d in devices)
            servers.append(Server(instance.get("pod_name") or None, address, ids,
                                  tuple(range(rank, rank + len(ids)))))
            rank += len(ids)
    return servers


def _template_1(entries: Any) -> List[Server]:
    servers: List[Server] = []
    for entry in entries if isinstance(entries, list) else []:
        address = str(entry.get("container_ip") or entry.get("server_id") or "")
        devices = _devices(entry.get("device"), address or "a server")
        servers.append(Server(entry.get("pod_name") or None, address,
                              tuple(str(d.get("device_id", "")) for d in devices),
                              tuple(_int(d.get("rank_id"), "rank_id") for d in devices)))
    return servers


def read_rank_table(text: Optional[str], path: str) -> Tuple[List[Server], str]:
    """The servers of a completed rank table and a name of the job; NotReady while the
    file is missing, partly written or not ``completed``."""
    if text is None:
        raise NotReady(f"the rank table {path} does not exist")
    try:
        table = json.loads(text)
    except ValueError:
        raise NotReady(f"the rank table {path} is not complete JSON") from None
    if not isinstance(table, dict):
        raise ContractError(f"the rank table {path} is not a JSON object")
    status = table.get("status")
    if status != COMPLETED:
        raise NotReady(f"the rank table {path} has status {status!r}, not {COMPLETED!r}")
    if "group_list" in table:
        servers = _template_2(table["group_list"])
        groups = table["group_list"] if isinstance(table["group_list"], list) else []
        name = ",".join(str(g.get("group_name", "")) for g in groups if isinstance(g, dict))
    else:
        servers = _template_1(table.get("server_list"))
        name = ""
    if not servers or not all(s.address for s in servers):
        raise ContractError(f"the rank table {path} lists no server (or one without "
                            "server_id)")
    return servers, name


def _own_server(container: Container, servers: List[Server], rank_id: Optional[int]) -> int:
    if rank_id is not None:
        for index, server in enumerate(servers):
            if rank_id in server.ranks:
                return index
        raise ContractError(f"{RANK_ID.name}={rank_id} is on no server of the rank table")
    short = container.hostname.split(".")[0]
    for index, server in enumerate(servers):
        if server.pod_name == short:
            return index
    raise ContractError(f"{RANK_ID.name} is not set and no server of the rank table is named "
                        f"{short}")


def modelarts(container: Container) -> PlatformFacts:
    """One instance of a ModelArts (or Ascend rank-table) job."""
    seen = facts_from_environment("modelarts", container.environ)
    device = seen.require(FIRST_DEVICE)
    value = container.environ.get(RANK_TABLE.named_by, "").strip()
    if not value:
        raise ContractError(f"{RANK_TABLE.named_by} is not set")
    path = rank_table_path(value)
    servers, name = read_rank_table(container.read_file(path), path)
    rank_id = seen.get(FIRST_PROCESS)
    total = sum(len(s.devices) for s in servers)
    size = seen.get(PROCESS_COUNT)
    if size is not None and size != total:
        raise ContractError(f"{seen.name_of(PROCESS_COUNT)}={size} but the rank table {path} "
                            f"lists {total} devices")
    index = _own_server(container, servers, rank_id)
    counts = sorted({len(s.devices) for s in servers})
    if len(counts) > 1:
        raise ContractError(f"the servers of the rank table {path} have {counts[0]} to "
                            f"{counts[-1]} devices; platform mode needs the same count on "
                            "every node")
    cards = counts[0]
    if device >= cards:
        raise ContractError(f"{seen.name_of(FIRST_DEVICE)}={device} but this server has {cards} "
                            "devices")
    addresses = tuple(s.address for s in servers)
    evidence = [RANK_TABLE.named_by, seen.name_of(FIRST_DEVICE)] + \
        [str(seen.variable(f)) for f in (FIRST_PROCESS, PROCESS_COUNT) if seen.variable(f)]

    def peers(n: int) -> Peers:
        raise ContractError("the nodes' names are known only after the rendezvous")

    return PlatformFacts("modelarts", index, len(servers), peers, cards, addresses[0], None,
                         f"modelarts/{name}/{','.join(addresses)}", tuple(evidence),
                         rendezvous=True, instance=(seen.name_of(FIRST_DEVICE), device),
                         task_variables="modelarts")
