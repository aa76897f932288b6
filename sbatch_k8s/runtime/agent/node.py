"""``runtime node``: make this pod (or local process) a Slurm node of the job.

Every node starts its agent. Node 0 then becomes the batch host; the others wait for node 0's
control connection and serve until it says the job is over (or disappears). The process exit
code is the job's on node 0 and 0 elsewhere; node 0 also writes the job's result as JSON to
``<spool>/result.json`` and, in pods, to ``/dev/termination-log`` (Kubernetes keeps it in the
pod's status, where the login side reads it).
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import asyncio
import os
import signal
import socket
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from sbatch_k8s.runtime.cluster import job_end
from sbatch_k8s.runtime.file_access import AccessError, needed, prepare_spool
from sbatch_k8s.runtime.agent.service import Agent, log
from sbatch_k8s.runtime.agent.addresses import peer_ip, write_known
from sbatch_k8s.runtime.batch_host.batch_step import CANCELLED, FAILED, BatchHost, JobResult
from sbatch_k8s.runtime.cluster.cancel_requests import start_watch
from sbatch_k8s.runtime.contract import ANY_ADDRESS, ContractError, NodeIdentity, identify, \
    pod_bind_host
from sbatch_k8s.runtime.agent.node_file import record_node
from sbatch_k8s.runtime.agent.node_namespace import own_node
from sbatch_k8s.runtime.stepd.task_files import make_parents
from sbatch_k8s.runtime.batch_host.node_links import NodeLink, connect_all
from sbatch_k8s.runtime.stepd.oom import node_ledger
from sbatch_k8s.runtime.agent.node_setup import (
    NodeSettings,
    internal_environment,
    job_process_environment,
    load_description,
    settings_from,
    with_master_port,
    with_restarts,
)
from sbatch_k8s.runtime.agent.profile_files import files_directory, write_profile_files
from sbatch_k8s.runtime.protocol import fresh_loop, read_token
from sbatch_k8s.runtime.agent.shims import install_shims, runtime_invocation
from sbatch_k8s.runtime.log_stream.tee import OutputTee, start_tee, streamable
from sbatch_k8s.runtime.batch_host.batch_stdio import batch_paths, submit_side_paths
from sbatch_k8s.runtime.cluster.step_publisher import start_publisher
from sbatch_k8s.runtime.batch_host.step_server import ENVIRONMENT_VARIABLE as STEP_SERVER_VARIABLE
from sbatch_k8s.runtime.batch_host.step_server import start as start_step_server
from sbatch_k8s.runtime.batch_host.step_registry import StepRegistry
from sbatch_k8s.runtime.agent.worker import serve_until_done

TERMINATION_LOG = "/dev/termination-log"
#: The batch script's executable copy in the spool.
SCRIPT_COPY = "slurm_script"
__all__ = ["run_node", "write_result", "main"]


def write_result(settings: NodeSettings, result: JobResult, names: Sequence[str] = ()
                 ) -> None:
    """Leave the job's result where the backends look for it: state, exit code, signal,
    reason, start and end time, the job's nodes (``names``), and the steps of
    ``steps.jsonl`` (capped to what Kubernetes keeps of a termination message;
    :mod:`sbatch_k8s.runtime.batch_host.step_log`). The start is when node 0 staged the batch script
    (``slurm_script``'s mtime)."""
    from parsers.values.hostlist import compress_hostlist
    from sbatch_k8s.runtime.batch_host.step_log import result_message, step_entries

    end = int(time.time())
    try:
        start: Optional[int] = int(os.stat(os.path.join(settings.spool,
                                                        SCRIPT_COPY)).st_mtime)
    except OSError:
        start = None
    steps = step_entries(os.path.join(settings.spool, "steps.jsonl"), end)
    text = result_message(result.as_dict(), start, end, steps,
                          node_list=compress_hostlist(list(names)) if names else "")
    try:
        with open(os.path.join(settings.spool, "result.json"), "w") as f:
            f.write(text + "\n")
    except OSError:
        if settings.contract == "local":
            raise               # the local backend's only copy
    if settings.contract != "local" and os.path.exists(os.path.dirname(TERMINATION_LOG)):
        try:
            with open(TERMINATION_LOG, "w") as f:
                f.write(text)
        except OSError:
            pass


def _written_result(settings: NodeSettings) -> Dict[str, Any]:
    """The result :func:`write_result` left in the spool."""
    import json

    with open(os.path.join(settings.spool, "result.json")) as f:
        loaded: Dict[str, Any] = json.loads(f.read())
    return loaded


def array_element(desc: Dict[str, Any], settings: NodeSettings,
                  environ: Mapping[str, str]) -> Tuple[Dict[str, Any], NodeIdentity]:
    """This node's job and identity. A pod of a single-node array's Indexed Job is array
    task ``array_indices[i]`` (job id ``array_job_id + i``) for completion index ``i``, and
    the only node of that job."""
    indices = desc.get("array_indices")
    if settings.contract == "local" or not indices or desc.get("array_task_id") is not None:
        count = int(desc["node_count"])
        return desc, identify(settings.contract, environ, count, settings.index)
    position = int(environ.get("JOB_COMPLETION_INDEX", "0"))
    base = int(desc.get("array_job_id") or desc["job_id"])
    element = dict(desc, job_id=base + position, array_job_id=base,
                   array_task_id=indices[position])
    name = socket.gethostname()
    return element, NodeIdentity(0, 1, (name,), (name,), pod_bind_host(name))


async def run_node(settings: NodeSettings, environ: Mapping[str, str], desc: Dict[str, Any],
                   identity: NodeIdentity, step_server: Optional[str] = None,
                   tee: Optional[OutputTee] = None) -> int:
    """Serve as this node until the job ends; the process exit code. ``step_server`` is
    node 0's step server socket, when it runs; ``tee`` copies the output files into the pod
    log."""
    from parsers.slurm_env import batch_environment, master_port, node_gpu_ids, \
        profile_variables, rendezvous_defaults

    token = read_token(settings.token_file)
    is_host = identity.index == 0
    done = asyncio.get_event_loop().create_future()

    def shutdown(code: int) -> None:
        if not done.done():
            done.set_result(code)

    host: List[BatchHost] = []
    steps = StepRegistry(desc["cpus_per_node"], os.path.join(settings.spool, "steps.jsonl"),
                         [node_gpu_ids(desc, i) for i in range(len(identity.names))]) \
        if is_host else None
    agent = Agent(identity.name, token, steps, shutdown,
                  on_cancel=lambda request: host[0].handle_cancel(request) if host else None,
                  kill_wait_s=settings.kill_wait_s, oom=node_ledger(settings.contract))
    await agent.start(identity.bind_host, settings.port)
    notes = write_profile_files(desc, identity.names, identity.addresses, settings.spool,
                                settings.contract != "local")
    if not is_host:
        record_node(settings.spool, desc, identity.name,
                    internal_environment(settings, identity), environ, log)
        return await serve_until_done(agent, settings.wait_s, settings.kill_wait_s, done)
    shim_dir = install_shims(settings.spool, runtime_invocation())
    env = job_process_environment(desc, identity, settings, shim_dir, environ)
    if step_server:
        env[STEP_SERVER_VARIABLE] = step_server
    env.update(batch_environment(desc, identity.names, 0))
    env["SBATCHK8S_JOB_START"] = str(int(time.time()))
    env.update(rendezvous_defaults(desc.get("environment") or {}, identity.names,
                                   master_port(desc)))
    env.update(profile_variables(desc, identity.names, identity.addresses, 0, env,
                                 files_directory(settings.spool)))
    record_node(settings.spool, desc, identity.name, env, environ, log)
    batch = BatchHost(desc, identity.names, agent, settings.kill_wait_s,
                      settings.seconds_per_minute)
    batch.tee = tee
    batch.shown_as = submit_side_paths(desc, identity.names[0])
    host.append(batch)
    watch = start_watch(settings.contract, batch.handle_cancel, environ)
    job_end.job_started(environ, desc, log)
    publisher = start_publisher(environ, desc, log, steps.log_path if steps else None)
    if publisher is not None and steps is not None:
        steps.on_change = publisher.changed
        steps.on_usage = publisher.usage_changed
        publisher.batch_usage = lambda: steps.batch_usage if steps is not None else None
    loop = asyncio.get_event_loop()
    batch.judge.ask_cluster = job_end.cluster_question(environ, desc)
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: asyncio.ensure_future(batch.stopped()))
    result = await _run_batch(batch, desc, identity, settings, env, token, notes)
    if watch is not None:
        watch.cancel()
    write_result(settings, result, identity.names)
    if publisher is not None:
        publisher.close()
    job_end.job_ended(environ, desc, identity.names, _written_result(settings), log)
    code = result.exit_code if result.signal == 0 else 128 + result.signal
    await batch.shutdown_nodes(code if settings.workers_exit_as_job else 0)
    await agent.close()
    return code


async def _run_batch(batch: BatchHost, desc: Mapping[str, Any], identity: NodeIdentity,
                     settings: NodeSettings, env: Dict[str, str], token: bytes,
                     profile_notes: List[str]) -> JobResult:
    paths = batch_paths(desc, identity.names[0])
    missing = str(desc["workdir"]) if paths.chdir_error else None
    connecting = asyncio.ensure_future(connect_all(
        identity.names, identity.addresses, settings.port, token, settings.wait_s))
    ending = asyncio.ensure_future(batch.ending_set.wait())
    await asyncio.wait([connecting, ending], return_when=asyncio.FIRST_COMPLETED)
    ending.cancel()
    if not connecting.done():
        connecting.cancel()  # ended (SIGTERM) while the nodes were awaited
        return JobResult(batch.ending[0] if batch.ending else CANCELLED, 0)
    try:
        batch.links = connecting.result()
    except RuntimeError as e:
        message = f"sbatch-k8s: error: job {desc['job_id']}: {e}"
        log(message[len("sbatch-k8s: "):])
        if not _is_own_output(paths.stderr):  # else the log line above is already there
            _write_line(paths.stderr, message, paths.append, missing)
        return JobResult(FAILED, 1, 0, "NodeNotAvailable", system_comment=str(e))
    _record_agent_addresses(settings.spool, identity, batch.links)
    runnable = os.path.join(settings.spool, SCRIPT_COPY)
    for path in {paths.stdout, paths.stderr}:
        make_parents(path, missing)
    # slurmstepd's chdir message: once from the step, once from the task.
    notes = [paths.chdir_error] * 2 if paths.chdir_error else []
    notes += profile_notes
    try:
        return await batch.run([runnable] + list(desc.get("script_args") or []), env,
                               paths.cwd, paths.stdin, paths.stdout, paths.stderr,
                               paths.append, notes)
    except OSError as e:
        # As slurmstepd: the batch step cannot start without its files (JobLaunchFailure);
        # its words say which (io.c: "Could not open stdout file …").
        why = _open_failure(e, paths.stdin, paths.stdout, paths.stderr)
        log(f"error: job {desc['job_id']}: {why}")
        return JobResult(FAILED, 1, 0, "JobLaunchFailure", system_comment=why)


def _record_agent_addresses(spool: str, identity: NodeIdentity,
                            links: List[NodeLink]) -> None:
    """Leave every agent's IP where this node's sruns look first (:mod:`addresses`):
    this node's is the address its agent listens on, the others' the far end of their
    control connections, so no step launch waits for the cluster DNS."""
    own = identity.bind_host if identity.bind_host != ANY_ADDRESS else "127.0.0.1"
    known = {identity.names[0]: own}
    for link in links:
        address = peer_ip(link.writer)
        if address:
            known[link.name] = address
    try:
        write_known(spool, known)
    except OSError as e:
        log(f"warning: cannot record the nodes' addresses in {spool}: {e.strerror or e}")


def _open_failure(error: OSError, stdin: str, stdout: str, stderr: str) -> str:
    """slurmstepd's words for a batch file it cannot open: ``Could not open stdout file
    /usr/slurm-18.out: Permission denied``."""
    kind = {stdin: "stdin", stderr: "stderr", stdout: "stdout"}.get(str(error.filename), "")
    what = f"{kind} file" if kind else "file"
    return f"Could not open {what} {error.filename}: {os.strerror(error.errno or 0)}"


def _is_own_output(path: str) -> bool:
    """Whether ``path`` is this process's stdout or stderr (platform mode's default batch
    output, where the node's log is)."""
    try:
        seen = os.stat(path)
        return any(os.fstat(fd)[1:3] == seen[1:3] for fd in (1, 2))  # st_ino, st_dev
    except OSError:
        return False


def _write_line(path: str, line: str, append: bool, missing_workdir: Optional[str]) -> None:
    make_parents(path, missing_workdir)
    try:
        with open(path, "a" if append else "w") as f:
            f.write(line + "\n")
    except OSError:
        pass  # the line is in the node's log too


def stage_script(settings: NodeSettings) -> str:
    """Copy the batch script into the spool as an executable file; its path."""
    script = os.path.join(settings.job_dir, "script")
    runnable = os.path.join(settings.spool, SCRIPT_COPY)
    with needed("read the batch script", script):
        with open(script, "rb") as src:
            text = src.read()
    with needed("write the batch script into the spool", runnable):
        with open(runnable, "wb") as dst:
            dst.write(text)
        os.chmod(runnable, 0o700)
    return runnable


def main(argv: List[str], environ: Mapping[str, str]) -> int:
    """``runtime node --contract C [--index I]``."""
    contract, index = "indexed-job", None
    args = list(argv)
    while args:
        word = args.pop(0)
        if word == "--contract" and args:
            contract = args.pop(0)
        elif word == "--index" and args:
            index = int(args.pop(0))
        else:
            sys.stderr.write(f"sbatch-k8s: error: runtime node: unexpected argument {word}\n")
            return 2
    settings = settings_from(contract, environ, index)
    try:
        with needed("read the job description", os.path.join(settings.job_dir, DESCRIPTION_KEY)):
            loaded = load_description(settings.job_dir)
        desc, identity = array_element(with_master_port(with_restarts(loaded, environ),
                                                        environ), settings, environ)
        read_token(settings.token_file)
        prepare_spool(settings.spool)
        if contract == "local":
            own_node(identity.name, settings.spool, log)
        if identity.index == 0:
            stage_script(settings)
    except (ContractError, AccessError) as e:
        sys.stderr.write(f"sbatch-k8s: error: runtime node: {e}\n")
        try:      # the reason reaches the user through the pod's termination message
            write_result(settings, JobResult(FAILED, 1, 0, "JobLaunchFailure",
                                             system_comment=str(e)))
        except OSError:
            pass
        return 1
    # Before anything starts a process: the tee's stdout must have no other writer.
    tee = None
    if identity.index == 0 and desc.get("stream_output") and streamable(
            batch_paths(desc, identity.names[0]).stdout):
        tee = start_tee(settings.spool)
    server = None
    if identity.index == 0 and environ.get("SBATCHK8S_SERVER") != "0":
        server = start_step_server(settings.spool)
    try:
        return fresh_loop().run_until_complete(
            run_node(settings, environ, desc, identity, server.path if server else None, tee))
    finally:
        if server is not None:
            server.stop()
        if tee is not None:
            tee.finish()
