"""Node 0 checks who answers its control connection: an agent that is another node (a
stale address, a mixed-up peer list) is refused with a log line, serves no control, and the
job does not start with it (real agents on real sockets)."""

from __future__ import annotations

import asyncio
import socket
from typing import List, Tuple

import pytest

from sbatch_k8s.runtime.agent.service import Agent
from sbatch_k8s.runtime.batch_host.node_links import connect_all
from sbatch_k8s.runtime.protocol import fresh_loop

TOKEN = b"a-job-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def connect_to_agent_named(agent_name: str, port: int, capsys: pytest.CaptureFixture
                           ) -> Tuple[object, List[int], bool, str]:
    """Node 0 (``n0``) connects to node ``n1`` whose address serves ``agent_name``: the
    outcome (node names connected, or the error), the agent's shutdowns, whether it came
    under node 0's control, and the log lines of both."""
    loop = fresh_loop()
    shutdowns: List[int] = []
    agent = Agent(agent_name, TOKEN, None, shutdowns.append)

    async def scenario() -> object:
        await agent.start("127.0.0.1", port)
        try:
            links = await connect_all(["n0", "n1"], ["127.0.0.1", "127.0.0.1"], port, TOKEN,
                                      1.0)
            for link in links:
                link.writer.close()
            await asyncio.sleep(0.1)
            return [link.name for link in links]
        except RuntimeError as e:
            await asyncio.sleep(0.1)
            return e
        finally:
            await agent.close()

    try:
        outcome = loop.run_until_complete(scenario())
    finally:
        loop.close()
    return outcome, shutdowns, agent.controlled.is_set(), capsys.readouterr().err


def test_the_right_node_is_accepted(capsys: pytest.CaptureFixture) -> None:
    outcome, _shutdowns, controlled, log = connect_to_agent_named("n1", free_port(), capsys)
    assert outcome == ["n1"]
    assert controlled and log == ""


def test_an_agent_of_another_node_is_refused(capsys: pytest.CaptureFixture) -> None:
    port = free_port()
    outcome, shutdowns, controlled, log = connect_to_agent_named("n2", port, capsys)
    assert isinstance(outcome, RuntimeError)
    assert str(outcome) == "nodes did not answer within 1 s: n1 (the agent at 127.0.0.1 is n2)"
    # Logged once on each side, however often node 0 asked again.
    assert sorted(log.splitlines()) == [
        "sbatch-k8s: refused node 0's control connection for 'n1': this node is 'n2'",
        f"sbatch-k8s: refused node 1's agent at 127.0.0.1:{port}: it answered as 'n2', "
        "expected 'n1'"]
    # The refused agent was never put under node 0's control, nor shut down by it.
    assert not controlled and shutdowns == []
