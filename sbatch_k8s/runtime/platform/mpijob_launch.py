"""The MpiJob launcher's relay: start the runtime on every host as mpirun would, and wait.

Every host of the hostfile gets ``<rsh agent> <host> '<command>'``, the agent being
``$OMPI_MCA_plm_rsh_agent`` when set (a command with arguments; OpenMPI's ``a : b``
alternatives, the first found on ``PATH``; an older operator's ``kubexec.sh``), else ``ssh``,
with ``$OMPI_MCA_plm_rsh_args`` after it and, for ssh, options that never prompt. The command
is one shell line: ``cd`` to the launcher's working directory, then ``python3 <runtime> run
--contract mpijob-worker …`` with the launcher's environment and what the hostfile says
(:func:`.mpijob_hostfile.worker_variables`). Its output is the agent's, so it lands in the
launcher's log.

Bounded start: each host's agent must answer an authenticated ``ping`` within the wait bound
(``--wait``, ``SBATCHK8S_NODE_WAIT``); a host whose run ends first, or never answers, ends
the job with one line naming it and the agent, every other run stopped. Node 0 answers and
may finish the whole job between two pings, so its early end counts as a failed start only
with the exit codes of a command that could not start (the agent's 255, the shell's 126/127,
Python's 2 for a missing file). Then the launcher waits for node 0 (the job's exit code) and
gives the other hosts a bounded time to follow it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import subprocess
from typing import Any, List, Mapping, Optional, Sequence

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.agent.node_setup import settings_from
from sbatch_k8s.runtime.platform.facts import Container, PlatformFacts
from sbatch_k8s.runtime.platform.mpijob_hostfile import WORKER_CONTRACT, forwarded_environment, \
    worker_variables
from sbatch_k8s.runtime.protocol import ProtocolError, authenticate, decode_json, encode_json, \
    fresh_loop, read_frame
from sbatch_k8s.runtime.agent.shims import runtime_invocation

AGENT_VARIABLE = "OMPI_MCA_plm_rsh_agent"
AGENT_ARGS_VARIABLE = "OMPI_MCA_plm_rsh_args"
#: ssh never asks for a password or passphrase; it gives up on a silent host.
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=30")
#: Exit codes of a command that could not start: ssh's own error, the shell's "cannot
#: execute" and "not found", Python's "can't open file".
START_FAILURE_CODES = (255, 126, 127, 2)
PING_TIMEOUT_S = 5.0
RETRY_S = 0.05
#: How long the other hosts may take to end after node 0 ended.
FOLLOW_S = 60.0
STOP_GRACE_S = 5.0


def rsh_agent(environ: Mapping[str, str]) -> List[str]:
    """The command that runs a command on a host: the agent, its arguments, and
    ``$OMPI_MCA_plm_rsh_args``."""
    value = environ.get(AGENT_VARIABLE, "").strip() or "ssh"
    choices = [shlex.split(part) for part in value.split(":") if part.strip()]
    agent = next((words for words in choices if shutil.which(words[0])), choices[0])
    if os.path.basename(agent[0]) == "ssh":
        agent = agent[:1] + list(SSH_OPTIONS) + agent[1:]
    return agent + shlex.split(environ.get(AGENT_ARGS_VARIABLE, ""))


def remote_command(facts: PlatformFacts, environ: Mapping[str, str], cwd: str,
                   run_args: Sequence[str]) -> str:
    """The shell line every host runs: this runtime's ``run`` as a worker of the job."""
    invocation = ["python3"] + runtime_invocation()[1:]
    variables = dict(forwarded_environment(environ), **worker_variables(facts))
    words = ["env"] + [f"{k}={v}" for k, v in sorted(variables.items())] + invocation + \
        ["run", "--contract", WORKER_CONTRACT] + list(run_args)
    return f"cd {shlex.quote(cwd)} && exec " + " ".join(shlex.quote(w) for w in words)


def describe_start(agent: Sequence[str]) -> str:
    """How the runs were started, for the error lines."""
    runtime = " ".join(shlex.quote(w) for w in ["python3"] + runtime_invocation()[1:2])
    return (f"started through {' '.join(shlex.quote(w) for w in agent)} as {runtime} run "
            f"--contract {WORKER_CONTRACT}; the launcher's runtime path must be valid on "
            "every host")


async def _answers(address: str, port: int, token: bytes, name: str) -> bool:
    """Whether the agent at ``address`` is up and serving node ``name``."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port),
                                                PING_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return False
    try:
        await authenticate(reader, writer, token)
        writer.write(encode_json({"type": "ping"}))
        await writer.drain()
        frame = await asyncio.wait_for(read_frame(reader), PING_TIMEOUT_S)
        reply = decode_json(frame[2]) if frame is not None else {}
        return reply.get("type") == "pong" and reply.get("node") == name
    except (OSError, ProtocolError, asyncio.TimeoutError):
        return False
    finally:
        writer.close()


async def await_agents(runs: Sequence["subprocess.Popen[bytes]"], names: Sequence[str],
                       addresses: Sequence[str], port: int, token: bytes, wait_s: float,
                       how: str) -> None:
    """Return once every host's agent answered (or its run ended as a started one would);
    ContractError naming the first host that failed or those that never answered."""
    loop = asyncio.get_event_loop()
    deadline = loop.time() + wait_s
    pending = list(range(len(runs)))
    while True:
        for i in list(pending):
            code = runs[i].poll()
            if code is None:
                continue
            code = 128 - code if code < 0 else code  # killed by a signal
            pending.remove(i)
            if code != 0 and (i > 0 or code in START_FAILURE_CODES):
                raise ContractError(f"mpijob: the run on {addresses[i]} (node {i}) ended with "
                                    f"exit code {code} before its agent answered ({how})")
        answers = await asyncio.gather(*(_answers(addresses[i], port, token, names[i])
                                         for i in pending))
        pending = [i for i, ok in zip(pending, answers) if not ok]
        if not pending:
            return
        if loop.time() >= deadline:
            missing = ", ".join(addresses[i] for i in pending)
            raise ContractError(f"mpijob: no node agent answered on {missing} within "
                                f"{wait_s:g} s ({how})")
        await asyncio.sleep(RETRY_S)


def _stop(runs: Sequence["subprocess.Popen[bytes]"], graceful: bool) -> None:
    """SIGTERM every run still going, SIGKILL what is left after a grace period; at once
    SIGKILL (``graceful`` False) when the job never started: nothing to end, nothing to
    say."""
    for run in runs:
        if run.poll() is None:
            run.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
    for run in runs:
        try:
            run.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()


def launch(facts: PlatformFacts, container: Container, run_args: List[str], wait_s: float,
           token: bytes) -> int:
    """Start the job's nodes from the launcher and wait for them; node 0's exit code."""
    count = int(facts.count or 0)
    names, addresses = facts.peers(count)
    environ = container.environ
    agent = rsh_agent(environ)
    how = describe_start(agent)
    line = remote_command(facts, environ, os.getcwd(), run_args)
    port = settings_from("platform", environ).port
    runs: List["subprocess.Popen[bytes]"] = []
    previous = {}
    started = False

    def forward(signum: int, frame: Optional[Any]) -> None:
        for run in runs:
            if run.poll() is None:
                run.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, forward)
    try:
        for address in addresses:
            try:
                runs.append(subprocess.Popen(agent + [address, line], stdin=subprocess.DEVNULL))
            except OSError as e:
                raise ContractError(f"mpijob: cannot start the rsh agent {agent[0]}: "
                                    f"{e.strerror or e} ({how})") from e
        fresh_loop().run_until_complete(
            await_agents(runs, names, addresses, port, token, wait_s, how))
        started = True
        code = runs[0].wait()
        code = 128 - code if code < 0 else code
        for run in runs[1:]:
            try:
                run.wait(FOLLOW_S)
            except subprocess.TimeoutExpired:
                pass
        return code
    finally:
        _stop(runs, started)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
