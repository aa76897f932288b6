"""Where a pod's agent listens (sbatch_k8s.runtime.contract.pod_bind_host): on the address its
own hostname resolves to — its pod IP — so that pods sharing one machine's network stack (the
test kubelet's pods) do not collide on the agent port; on every address when the name does not
resolve to something peers can reach. The local contract keeps its per-node loopback address."""

from __future__ import annotations

from typing import Dict

import pytest

from sbatch_k8s.runtime.contract import ANY_ADDRESS, identify, pod_bind_host

POD_HOSTNAMES = {
    "indexed-job": "llm-1234-1",
    "jobset": "llm-1234-node-0-1",
    "pytorchjob": "llm-1234-worker-0",
    "mpijob": "llm-1234-worker-0",
}
ENVIRON = {"JOB_COMPLETION_INDEX": "1", "RANK": "1"}


def hosts_file(entries: Dict[str, str]):
    """A resolver that knows only ``entries`` (name → address), as an /etc/hosts would."""
    def resolve(name: str) -> str:
        if name not in entries:
            raise OSError(-2, "Name or service not known")
        return entries[name]
    return resolve


@pytest.mark.parametrize("contract", sorted(POD_HOSTNAMES))
def test_a_pod_agent_binds_the_address_its_hostname_resolves_to(contract):
    hostname = POD_HOSTNAMES[contract]
    identity = identify(contract, ENVIRON, 3, hostname=hostname,
                        resolve=hosts_file({hostname: "127.10.3.7"}))
    assert identity.bind_host == "127.10.3.7"


@pytest.mark.parametrize("contract", sorted(POD_HOSTNAMES))
def test_an_unresolvable_hostname_binds_every_address(contract):
    identity = identify(contract, ENVIRON, 3, hostname=POD_HOSTNAMES[contract],
                        resolve=hosts_file({}))
    assert identity.bind_host == ANY_ADDRESS


@pytest.mark.parametrize("address, bind", [
    ("10.244.1.17", "10.244.1.17"),    # a real pod IP
    ("127.10.0.5", "127.10.0.5"),      # the test kubelet's pod addresses are loopback ones
    ("127.0.0.1", ANY_ADDRESS),        # the host's own name: peers could not connect there
    ("127.0.1.1", ANY_ADDRESS),        # Debian's alias for the host's own name
    ("::1", "::1"),
])
def test_pod_bind_host(address, bind):
    assert pod_bind_host("pod", hosts_file({"pod": address})) == bind


def test_a_resolver_error_of_any_kind_binds_every_address():
    def broken(name: str) -> str:
        raise UnicodeError("label too long")
    assert pod_bind_host("x" * 300, broken) == ANY_ADDRESS


def test_the_local_contract_never_resolves_and_keeps_its_loopback_address():
    def unexpected(name: str) -> str:
        raise AssertionError(f"resolved {name!r}")
    identity = identify("local", {"SBATCHK8S_NODE_INDEX": "2"}, 3, hostname="laptop",
                        resolve=unexpected)
    assert identity.bind_host == "127.0.0.4"
