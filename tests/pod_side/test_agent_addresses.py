"""Reaching the node agents without waiting on the cluster DNS
(:mod:`sbatch_k8s.runtime.agent.addresses`): node 0's recorded IPs first, a name looked up
again while the DNS says "not yet", and the resolver's own error at the deadline."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import List

import pytest

from sbatch_k8s.runtime.agent.addresses import agent_ips, is_ip, read_known, \
    resolve_patiently, write_known


def test_node0s_recorded_ips_come_first(tmp_path: Path) -> None:
    write_known(str(tmp_path), {"llm-1-0": "10.88.0.5", "llm-1-1": "10.88.1.7"})
    assert read_known(str(tmp_path)) == {"llm-1-0": "10.88.0.5", "llm-1-1": "10.88.1.7"}
    names = ["llm-1-0", "llm-1-1", "llm-1-2"]
    addresses = ["llm-1-0.llm-1", "llm-1-1.llm-1", "llm-1-2.llm-1"]
    assert agent_ips(names, addresses, {"SBATCHK8S_SPOOL": str(tmp_path)}) == {
        "llm-1-0": "10.88.0.5", "llm-1-1": "10.88.1.7", "llm-1-2": "llm-1-2.llm-1"}
    assert agent_ips(names, addresses, {}) == dict(zip(names, addresses))


def test_a_name_is_looked_up_again_until_the_dns_knows_it() -> None:
    answers: List[object] = [socket.gaierror(socket.EAI_AGAIN, "Temporary failure"),
                             socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
                             "10.88.0.9"]
    slept: List[float] = []

    def lookup(name: str) -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return str(answer)

    assert resolve_patiently("llm-1-0.llm-1", 30, lookup, slept.append) == "10.88.0.9"
    assert len(slept) == 2 and slept[1] > slept[0]


def test_the_resolvers_error_at_the_deadline() -> None:
    def lookup(name: str) -> str:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    with pytest.raises(socket.gaierror) as raised:
        resolve_patiently("late.example", 0.2, lookup)
    assert "Temporary failure" in str(raised.value)


def test_ips_are_not_looked_up() -> None:
    assert is_ip("10.88.0.1") and is_ip("::1") and not is_ip("llm-1-0")
    assert resolve_patiently("127.0.0.2", 0, lambda name: pytest.fail("looked up")) == \
        "127.0.0.2"
