"""Contract adapters (sbatch_k8s.runtime.contract.identify): from a pod's environment and
hostname to its node index, the node count, the node names Slurm's variables show and the
addresses the agents connect to — for every workload kind sbatch-k8s renders."""

from __future__ import annotations

import pytest

from sbatch_k8s.runtime.contract import (
    ANY_ADDRESS,
    CONTRACTS,
    ContractError,
    identify,
    local_address,
    node_address_map,
)

INDEXED = tuple(f"llm-1234-{i}" for i in range(4))
JOBSET = tuple(f"llm-1234-node-0-{i}" for i in range(4))
PYTORCH = ("llm-1234-master-0", "llm-1234-worker-0", "llm-1234-worker-1")
MPI = ("llm-1234-launcher", "llm-1234-worker-0", "llm-1234-worker-1")

CASES = [
    # contract, environ, count, hostname, index, names, addresses, bind host
    ("indexed-job", {"JOB_COMPLETION_INDEX": "2"}, 4, "llm-1234-2", 2, INDEXED,
     tuple(f"{n}.llm-1234" for n in INDEXED), ANY_ADDRESS),
    ("indexed-job", {"JOB_COMPLETION_INDEX": "0"}, 1, "a-b-c-77-0", 0, ("a-b-c-77-0",),
     ("a-b-c-77-0.a-b-c-77",), ANY_ADDRESS),
    ("jobset", {"JOB_COMPLETION_INDEX": "3"}, 4, "llm-1234-node-0-3", 3, JOBSET,
     tuple(f"{n}.llm-1234" for n in JOBSET), ANY_ADDRESS),
    # SBATCHK8S_NODE_INDEX wins over the completion index.
    ("jobset", {"SBATCHK8S_NODE_INDEX": "1", "JOB_COMPLETION_INDEX": "3"}, 4,
     "llm-1234-node-0-3", 1, JOBSET, tuple(f"{n}.llm-1234" for n in JOBSET), ANY_ADDRESS),
    # PyTorchJob: Master 0, Worker i is node i+1 (RANK), reached by the operator's services.
    ("pytorchjob", {"RANK": "2"}, 3, "llm-1234-worker-1", 2, PYTORCH, PYTORCH, ANY_ADDRESS),
    ("pytorchjob", {"RANK": "0"}, 3, "llm-1234-master-0", 0, PYTORCH, PYTORCH, ANY_ADDRESS),
    ("pytorchjob", {"PET_NODE_RANK": "1", "RANK": "7"}, 3, "llm-1234-worker-0", 1, PYTORCH,
     PYTORCH, ANY_ADDRESS),
    # MPIJob: the launcher is node 0, worker i is node i+1, from the hostname alone.
    ("mpijob", {}, 3, "llm-1234-launcher", 0, MPI, tuple(f"{n}.llm-1234" for n in MPI),
     ANY_ADDRESS),
    ("mpijob", {}, 3, "llm-1234-worker-1", 2, MPI, tuple(f"{n}.llm-1234" for n in MPI),
     ANY_ADDRESS),
    ("mpijob", {}, 1, "solo-9-launcher", 0, ("solo-9-launcher",), ("solo-9-launcher.solo-9",),
     ANY_ADDRESS),
    # local: loopback addresses 127.0.0.<i+2>, bound to its own.
    ("local", {"SBATCHK8S_NODE_INDEX": "1"}, 3, "laptop", 1,
     ("127.0.0.2", "127.0.0.3", "127.0.0.4"), ("127.0.0.2", "127.0.0.3", "127.0.0.4"),
     "127.0.0.3"),
]


@pytest.mark.parametrize("contract, environ, count, hostname, index, names, addresses, bind",
                         CASES, ids=[f"{c[0]}:{c[3]}" for c in CASES])
def test_identity(contract, environ, count, hostname, index, names, addresses, bind):
    identity = identify(contract, environ, count, hostname=hostname)
    assert (identity.index, identity.count) == (index, count)
    assert identity.names == names
    assert identity.addresses == addresses
    assert identity.bind_host == bind
    assert identity.name == names[index]
    assert node_address_map(identity) == list(zip(names, addresses))


@pytest.mark.parametrize("contract, hostname", [
    ("local", "x"), ("indexed-job", "llm-1234-0"), ("jobset", "llm-1234-node-0-0"),
    ("pytorchjob", "llm-1234-master-0"), ("mpijob", "llm-1234-launcher"),
])
def test_an_explicit_index_wins_over_the_environment(contract, hostname):
    environ = {"JOB_COMPLETION_INDEX": "0", "SBATCHK8S_NODE_INDEX": "0", "RANK": "0"}
    identity = identify(contract, environ, 3, index=2, hostname=hostname)
    assert identity.index == 2
    assert identity.name == identity.names[2]


def test_every_contract_has_an_adapter():
    assert CONTRACTS == ("local", "indexed-job", "jobset", "pytorchjob", "mpijob")
    for contract in CONTRACTS:
        identity = identify(contract, {"JOB_COMPLETION_INDEX": "0", "SBATCHK8S_NODE_INDEX": "0",
                                       "RANK": "0"}, 2, hostname={
            "local": "h", "indexed-job": "j-1-0", "jobset": "j-1-node-0-0",
            "pytorchjob": "j-1-master-0", "mpijob": "j-1-launcher"}[contract])
        assert (identity.index, identity.count, len(identity.names)) == (0, 2, 2)


def test_local_addresses():
    assert [local_address(i) for i in (0, 1, 252)] == ["127.0.0.2", "127.0.0.3", "127.0.0.254"]
    with pytest.raises(ContractError, match="at most 253 nodes"):
        local_address(253)


@pytest.mark.parametrize("contract, environ, count, hostname, message", [
    ("indexed-job", {}, 2, "llm-1234-0",
     "JOB_COMPLETION_INDEX is not set to a node index in this pod"),
    ("indexed-job", {"JOB_COMPLETION_INDEX": "x"}, 2, "llm-1234-0",
     "JOB_COMPLETION_INDEX is not set to a node index in this pod"),
    ("indexed-job", {"JOB_COMPLETION_INDEX": "-1"}, 2, "llm-1234-0",
     "JOB_COMPLETION_INDEX is not set to a node index in this pod"),
    ("jobset", {}, 2, "llm-1234-node-0-0",
     "JOB_COMPLETION_INDEX is not set to a node index in this pod"),
    ("pytorchjob", {}, 2, "llm-1234-worker-0", "RANK is not set to a node index in this pod"),
    ("local", {}, 2, "x", "SBATCHK8S_NODE_INDEX is not set to a node index in this pod"),
    # Index out of range.
    ("indexed-job", {"JOB_COMPLETION_INDEX": "5"}, 2, "llm-1234-5",
     "node index 5 is outside 0..1"),
    ("jobset", {"JOB_COMPLETION_INDEX": "2"}, 2, "llm-1234-node-0-2",
     "node index 2 is outside 0..1"),
    ("pytorchjob", {"RANK": "3"}, 3, "llm-1234-worker-2", "node index 3 is outside 0..2"),
    ("mpijob", {}, 2, "llm-1234-worker-1", "node index 2 is outside 0..1"),
    # Hostnames that do not follow the workload's naming.
    ("indexed-job", {"JOB_COMPLETION_INDEX": "0"}, 1, "llm",
     "hostname 'llm' does not follow the workload's naming"),
    ("jobset", {"JOB_COMPLETION_INDEX": "0"}, 1, "llm-node-0",
     "hostname 'llm-node-0' does not follow the workload's naming"),
    ("mpijob", {}, 2, "llm-1234-worker-x", "hostname 'llm-1234-worker-x' is neither launcher "
                                          "nor worker"),
    # Unknown contract.
    ("deployment", {}, 1, "x", "unknown contract 'deployment' (one of local, indexed-job, "
                               "jobset, pytorchjob, mpijob)"),
])
def test_errors(contract, environ, count, hostname, message):
    with pytest.raises(ContractError) as caught:
        identify(contract, environ, count, hostname=hostname)
    assert str(caught.value) == message


def test_index_out_of_range_given_explicitly():
    with pytest.raises(ContractError, match=r"node index 3 is outside 0\.\.2"):
        identify("indexed-job", {}, 3, index=3, hostname="llm-1234-0")
    with pytest.raises(ContractError, match=r"node index -1 is outside 0\.\.2"):
        identify("jobset", {}, 3, index=-1, hostname="llm-1234-node-0-0")


@pytest.mark.parametrize("environ, index, message", [
    ({}, 3, r"node index 3 is outside 0\.\.2"),
    ({"SBATCHK8S_NODE_INDEX": "4"}, None, r"node index 4 is outside 0\.\.2"),
])
def test_local_index_out_of_range_is_a_contract_error(environ, index, message):
    with pytest.raises(ContractError, match=message):
        identify("local", environ, 3, index=index, hostname="x")
