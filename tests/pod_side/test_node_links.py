"""Node 0's control link to another node: what the node said before its connection dropped
decides how the job ends (:data:`sbatch_k8s.runtime.batch_host.batch_step.LEFT_BECAUSE`)."""

from __future__ import annotations

import asyncio
import socket
from typing import List, Optional

import pytest

from sbatch_k8s.runtime.batch_host.batch_step import LEFT_BECAUSE
from sbatch_k8s.runtime.batch_host.node_links import NodeLink
from sbatch_k8s.runtime.protocol import encode_frame, encode_json


def _why_after(frames: List[bytes]) -> Optional[str]:
    """What ``wait_closed`` returns when the other node writes ``frames`` and goes."""

    async def scenario() -> Optional[str]:
        ours, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=ours)
        link = NodeLink(1, "n1", reader, writer)
        theirs.sendall(b"".join(frames))
        theirs.close()
        why = await asyncio.wait_for(link.wait_closed(), 10)
        writer.close()
        return why

    return asyncio.new_event_loop().run_until_complete(scenario())


def test_a_node_that_says_nothing_was_lost() -> None:
    assert _why_after([]) is None
    assert LEFT_BECAUSE[None] == ("NODE_FAIL", "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS")


def test_a_node_stopped_by_the_cluster_preempts_the_job() -> None:
    why = _why_after([encode_json({"type": "leaving", "why": "terminated"})])
    assert why == "terminated"
    assert LEFT_BECAUSE[why] == ("PREEMPTED", "PREEMPTION")


@pytest.mark.parametrize("noise", [encode_frame(b"O", 0, b"not json"),
                                   encode_json({"type": "pong", "node": "n1"})])
def test_other_frames_are_passed_over(noise: bytes) -> None:
    assert _why_after([noise, encode_json({"type": "leaving", "why": "terminated"}),
                       noise]) == "terminated"
    assert _why_after([noise]) is None
