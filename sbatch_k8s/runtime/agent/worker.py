"""A node other than node 0: serve the agent until the job is over for this node.

The job is over here when node 0 says so (or its control connection drops), or when this
node is told to stop: SIGTERM (Kubernetes deletes the pod, the Job is suspended or deleted)
or SIGINT. Either way, as slurmstepd does on every node of a job being killed, the node's
tasks get SIGCONT and SIGTERM, KillWait to end (running their handlers), then SIGKILL; their
ends still reach the sruns that launched them before the node exits.
"""

from __future__ import annotations

import asyncio
import signal

from sbatch_k8s.runtime.agent.service import Agent, log

#: Signals that end this node (the pod's termination, a Ctrl-C on a local node process).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: Why a node stopped by one of them leaves (node 0 then ends the job PREEMPTED: the cluster
#: took the node's pod away, :mod:`sbatch_k8s.runtime.batch_host.batch_step`).
TERMINATED = "terminated"
#: How long the tasks' last output and exits get to reach their sruns.
REPORT_S = 5.0


async def serve_until_done(agent: Agent, wait_s: float, kill_wait_s: float,
                           done: "asyncio.Future[int]") -> int:
    """Serve until the job is over for this node; the process exit code (node 0's code,
    128 + the signal when stopped by one, 1 when node 0 never made contact)."""
    loop = asyncio.get_event_loop()

    def stop(signum: int) -> None:
        if not done.done():
            log(f"got {signal.Signals(signum).name}: ending this node's tasks")
            done.set_result(128 + signum)

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    contacted = asyncio.ensure_future(agent.controlled.wait())
    await asyncio.wait([contacted, done], timeout=wait_s,
                       return_when=asyncio.FIRST_COMPLETED)
    if not contacted.done():
        contacted.cancel()
    if not done.done() and not agent.controlled.is_set():
        log(f"node 0 did not contact this node within {int(wait_s)} s")
        await agent.close()
        return 1
    code = await done
    if code - 128 in STOP_SIGNALS:
        await agent.say_leaving(TERMINATED)
    await agent.end_all_tasks(kill_wait_s)
    await agent.finish_launches(REPORT_S)
    await agent.close()
    return code
