"""Node 0 deciding how the job ends when the cluster stops its pods (the questions are
:mod:`sbatch_k8s.runtime.cluster.end_cause`'s): its own SIGTERM, or another node saying it was
terminated.

:class:`StopJudge` keeps what node 0 heard (its own SIGTERM, another node's) and, for each,
gives the job's end — ``(state, slurmstepd's DUE TO)`` — or None when the other event decides:

* its own SIGTERM: a requeue's or a cancel's end, a node failure when only its pod is taken
  (the workload lives on, no other node was stopped first), a preemption when another node
  was stopped first or the workload was suspended; without the API, a cancel when every node
  was stopped (one node: it cannot tell), else a node failure;
* another node's: a requeue's or a cancel's end, a preemption when the workload lives on;
  without the API, a preemption unless node 0's own SIGTERM follows within
  :data:`~sbatch_k8s.runtime.cluster.end_cause.OWN_STOP_WAIT_S` (a cancel reaching the nodes one
  after the other).
"""

from __future__ import annotations

import asyncio
from typing import Callable, Optional, Tuple

from sbatch_k8s.runtime.cluster import end_cause
from sbatch_k8s.runtime.agent.service import log

End = Tuple[str, str]
CANCELLED, NODE_FAIL, PREEMPTED = "CANCELLED", "NODE_FAIL", "PREEMPTED"
#: slurmstepd's ``DUE TO`` of each end the cluster causes.
NODE_FAILURE_WHY = "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"
PREEMPTION_WHY = "PREEMPTION"
REQUEUE_WHY = "JOB REQUEUE"
#: What the API server's answer makes of the job, whoever was stopped.
_SAID: dict = {end_cause.REQUEUE: (CANCELLED, REQUEUE_WHY), end_cause.CANCEL: (CANCELLED, "")}


async def within(event: asyncio.Event, timeout_s: float) -> bool:
    """Whether ``event`` is set within ``timeout_s``."""
    try:
        await asyncio.wait_for(event.wait(), timeout_s)
    except asyncio.TimeoutError:
        return False
    return True


class StopJudge:
    """What node 0 heard of its job's pods being stopped, and the end it makes of it."""

    def __init__(self, job_id: object,
                 ask_cluster: Optional[Callable[[], str]] = None) -> None:
        self.job_id = job_id
        #: Asks the API server (:func:`sbatch_k8s.runtime.cluster.end_cause.ask_cluster`); None
        #: without API access.
        self.ask_cluster = ask_cluster
        self.own_sigterm = asyncio.Event()
        self.peer_terminated = asyncio.Event()

    async def own_stop(self, has_peers: bool) -> End:
        """This pod got SIGTERM."""
        self.own_sigterm.set()
        said = await self._ask()
        if said in _SAID:
            return _SAID[said]
        if said == end_cause.WORKLOAD_LIVES and not self.peer_terminated.is_set():
            return NODE_FAIL, NODE_FAILURE_WHY
        if said in (end_cause.WORKLOAD_LIVES, end_cause.SUSPENDED):
            # Another node was stopped first (its eviction failed the workload, whose
            # controller now stops the rest), or a queue took the workload back.
            return PREEMPTED, PREEMPTION_WHY
        if not has_peers or await within(self.peer_terminated, end_cause.PEERS_WAIT_S):
            return CANCELLED, ""                # every node stopped: the job's deletion
        return NODE_FAIL, NODE_FAILURE_WHY

    async def peer_stop(self, name: str) -> Optional[End]:
        """Another node's pod got SIGTERM: the end, or None when node 0's own SIGTERM
        followed (then :meth:`own_stop` decides)."""
        self.peer_terminated.set()
        said = await self._ask()
        if said in _SAID:
            return _SAID[said]
        if said in (end_cause.WORKLOAD_LIVES, end_cause.SUSPENDED) or not await within(
                self.own_sigterm, end_cause.OWN_STOP_WAIT_S):
            log(f"node {name} is gone (terminated): ending job {self.job_id}")
            return PREEMPTED, PREEMPTION_WHY
        return None

    async def _ask(self) -> Optional[str]:
        """The API server's answer, None without one."""
        if self.ask_cluster is None:
            return None
        loop = asyncio.get_event_loop()
        deadline = loop.time() + end_cause.ASK_TIMEOUT_S
        while True:
            try:
                return await asyncio.wait_for(loop.run_in_executor(None, self.ask_cluster),
                                              max(0.1, deadline - loop.time()))
            except Exception as e:
                if loop.time() + end_cause.ASK_RETRY_S < deadline:
                    await asyncio.sleep(end_cause.ASK_RETRY_S)
                    continue
                log(f"warning: job {self.job_id}: cannot ask the API server why its pods "
                    f"are stopped ({e or 'no answer'}): deciding from what the nodes say")
                return None
