"""Pod addresses and hosts files (tests.kubelet.addresses): a pod's peers resolve by name
once they exist (after the DNS delay), names added later appear in every member's file,
blocks are exclusive between kubelets, and the reported pod IP is not a loopback one."""

from __future__ import annotations

import time

import pytest

from tests.kubelet.addresses import AddressPool, HOSTS_HEADER, HostsRegistry, hosts_line, \
    own_line, reported_ip


@pytest.fixture
def pool():
    pool = AddressPool()
    yield pool
    pool.close()


def entries(path):
    with open(path) as f:
        text = f.read()
    assert text.startswith(HOSTS_HEADER)
    return [line.split() for line in text[len(HOSTS_HEADER):].splitlines()]


def test_hosts_lines_as_a_kubelet_writes_them():
    assert hosts_line("127.10.0.1", "llm-0", "llm", "ns") == \
        "127.10.0.1\tllm-0.llm.ns.svc.cluster.local llm-0.llm llm-0\n"
    assert hosts_line("127.10.0.1", "solo", "", "ns") == "127.10.0.1\tsolo\n"
    # The pod's own line: the full name and the host name, not <host>.<subdomain>.
    assert own_line("127.10.0.1", "llm-0", "llm", "ns") == \
        "127.10.0.1\tllm-0.llm.ns.svc.cluster.local llm-0\n"


def test_reported_ip_is_not_loopback():
    assert reported_ip("127.10.3.7") == "10.10.3.7"


def test_names_resolve_once_their_pods_exist_and_later_names_are_appended(pool, tmp_path):
    hosts = HostsRegistry(pool)
    first = hosts.add_pod("ns", "llm", "uid-0", "llm-0", reserve=("llm-0", "llm-1"))
    hosts.write_hosts_file(str(tmp_path / "h0"), "ns", "llm", "uid-0")
    reserved = hosts.address_of("ns", "llm", "uid-0", "llm-1")
    # llm-1 has an address but no pod yet: no DNS record for it.
    assert [e[0] for e in entries(tmp_path / "h0")] == [first, first]
    second = hosts.add_pod("ns", "llm", "uid-1", "llm-1", reserve=("llm-0", "llm-1"))
    assert second == reserved != first
    hosts.write_hosts_file(str(tmp_path / "h1"), "ns", "llm", "uid-1")
    hosts.add_pod("ns", "llm", "uid-2", "llm-extra")
    extra = hosts.address_of("ns", "llm", "uid-2", "llm-extra")
    assert [e[0] for e in entries(tmp_path / "h0")] == [first, first, second, extra]
    assert [e[0] for e in entries(tmp_path / "h1")] == [second, first, second, extra]
    assert entries(tmp_path / "h0")[2][1:] == ["llm-1.llm.ns.svc.cluster.local",
                                               "llm-1.llm", "llm-1"]


def test_the_dns_lags_behind_the_pods_own_line(pool, tmp_path):
    """With a DNS delay, a pod sees its own kubelet-written line at once, but neither its
    own <host>.<subdomain> nor its peers until the delay has passed."""
    hosts = HostsRegistry(pool, dns_delay_s=0.5)
    own = hosts.add_pod("ns", "llm", "uid-0", "llm-0", reserve=("llm-0", "llm-1"))
    hosts.add_pod("ns", "llm", "uid-1", "llm-1")
    hosts.write_hosts_file(str(tmp_path / "h0"), "ns", "llm", "uid-0")
    assert entries(tmp_path / "h0") == [[own, "llm-0.llm.ns.svc.cluster.local", "llm-0"]]
    deadline = time.time() + 10
    while len(entries(tmp_path / "h0")) < 3 and time.time() < deadline:
        time.sleep(0.05)
    assert {tuple(e[1:]) for e in entries(tmp_path / "h0")[1:]} == {
        ("llm-0.llm.ns.svc.cluster.local", "llm-0.llm", "llm-0"),
        ("llm-1.llm.ns.svc.cluster.local", "llm-1.llm", "llm-1")}


def test_pods_without_subdomain_see_only_themselves(pool, tmp_path):
    hosts = HostsRegistry(pool)
    a = hosts.add_pod("ns", "", "uid-a", "a")
    b = hosts.add_pod("ns", "", "uid-b", "b")
    hosts.write_hosts_file(str(tmp_path / "a"), "ns", "", "uid-a")
    assert a != b and entries(tmp_path / "a") == [[a, "a"]]


def test_a_group_frees_its_addresses_with_its_last_pod(pool):
    hosts = HostsRegistry(pool)
    hosts.add_pod("ns", "g", "u0", "g-0", reserve=("g-0", "g-1"))
    hosts.add_pod("ns", "g", "u1", "g-1")
    hosts.remove_pod("ns", "g", "u0")
    assert hosts.address_of("ns", "g", "u1", "g-0") is not None
    hosts.remove_pod("ns", "g", "u1")
    assert hosts.address_of("ns", "g", "u1", "g-0") is None
    assert len(pool._free) == 254


def test_two_kubelets_never_share_a_block():
    one, two = AddressPool(), AddressPool()
    try:
        a, b = one.allocate(), two.allocate()
        assert a.rsplit(".", 1)[0] != b.rsplit(".", 1)[0]
        assert a.startswith("127.10.") and b.startswith("127.10.")
    finally:
        one.close()
        two.close()
