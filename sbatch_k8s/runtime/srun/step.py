"""``srun`` (runtime side): from the command line to a finished step.

Parses the request, checks the pyxis image, lays the tasks out, registers the step with node 0
(step ids in order, the step log sacct reads), builds every task's environment, works out
where output goes, then hands over to :mod:`launch` to launch and stream.
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import asyncio
import os
import socket
import sys
import time
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from parsers.input_errors import SlurmInputError
from parsers.step_usage import StepUsage
from parsers.values.acctg_freq import checked_interval
from sbatch_k8s.runtime.file_access import AccessError, needed
from sbatch_k8s.runtime.agent.addresses import agent_ips, resolve_patiently, wait_budget
from sbatch_k8s.runtime.agent.node_setup import load_description
from sbatch_k8s.runtime.srun.task_output import OutputRouter
from sbatch_k8s.runtime.agent.profile_files import files_directory
from sbatch_k8s.runtime.protocol import fresh_loop, read_token
from sbatch_k8s.runtime.srun.registration import Registration, register_step, step_holds
from sbatch_k8s.runtime.srun.launch import launch_step, node_addresses
from sbatch_k8s.runtime.srun.signals import cancel_step, job_ending
from sbatch_k8s.runtime.srun.sessions import COMMAND, StepRun, error, warn
from sbatch_k8s.runtime.stepd.oom import OOM_EXIT_SIGNAL, OUT_OF_MEMORY
from sbatch_k8s.runtime.stepd.task_files import make_parents, output_flags, resolve, \
    working_directory
from sbatch_k8s.runtime.batch_host.batch_stdio import filename_context, render_name

DEFAULT_PORT = 6818


def _task_environment(environ: Mapping[str, str], request: Any) -> Dict[str, str]:
    """What tasks inherit from srun: its environment, filtered by ``--export``."""
    if request.export is None:
        return dict(environ)
    from parsers.values.export import apply_export

    return apply_export(request.export, environ)


def _image_matches(wanted: str, have: Optional[str]) -> bool:
    """pyxis on srun: a step may only ask for the image the job already runs in."""

    def norm(image: str) -> str:
        image = image.split("://", 1)[-1]
        if "@" in image.split("/")[0]:
            image = image.split("@", 1)[1]
        return image.replace("#", "/", 1)

    return have is not None and norm(wanted) == norm(have)


def _check_container(request: Any, desc: Mapping[str, Any]) -> None:
    """pyxis options on srun: the job's image runs the step in place; its mounts are the
    job's mounts. Anything the job's container does not have fails with one line."""
    have = desc.get("container_image")
    if request.container_image and not _image_matches(request.container_image, have):
        raise SlurmInputError(
            f"--container-image={request.container_image}: this job runs in "
            f"{have or 'its partition image'}; sbatch-k8s runs every step in the job's image",
            exit_code=1)
    mounted = {m[1] for m in desc.get("container_mounts") or ()}
    for _src, dst, _flags in request.container_mounts:
        if dst not in mounted:
            raise SlurmInputError(
                f"--container-mounts: {dst} is not mounted in this job; mounts are made when "
                "the job starts (give them to sbatch's --container-mounts)", exit_code=1)


def _io_plan(request: Any, desc: Mapping[str, Any], names: List[str], layout: Any,
             step_id: int, cwd: str) -> Tuple[Dict[int, Dict[str, Optional[str]]], Any, Any]:
    """Per-task files opened on the nodes, and srun's own stdout/stderr targets.

    Without ``-e``, stderr follows ``-o`` (Slurm's ``efname = ofname``); when both name the
    same thing they share one descriptor, here and on the nodes."""
    from parsers.values.filename import parse_step_io

    files: Dict[int, Dict[str, Optional[str]]] = {r: {} for rs in layout.ranks for r in rs}
    targets: List[Any] = []
    opened: Dict[str, Any] = {}
    here = working_directory(cwd)[0]
    error = request.error or request.output
    shared = bool(request.output) and error == request.output and \
        parse_step_io(request.output).kind != "all"
    for key, value, default in (("stdout_file", request.output, sys.stdout.buffer),
                                ("stderr_file", error, sys.stderr.buffer)):
        if key == "stderr_file" and shared:
            for each in files.values():
                if "stdout_file" in each:
                    each[key] = each["stdout_file"]
            targets.append(targets[0])
            break
        spec = parse_step_io(value) if value else None
        target = default
        if spec is not None and spec.kind == "none":
            for each in files.values():
                each[key] = os.devnull
        elif spec is not None and spec.kind == "task" and spec.task_id is not None and \
                spec.task_id < layout.ntasks:
            for rank, each in files.items():
                if rank != spec.task_id:
                    each[key] = os.devnull
        elif spec is not None and spec.pattern is not None:
            if spec.pattern.opened_per_task:
                # Opened on each task's node, relative to where its tasks run there.
                for position, ranks in enumerate(layout.ranks):
                    node = names[layout.node_indices[position]]
                    for rank in ranks:
                        ctx = filename_context(desc, node, step_id, position, rank)
                        files[rank][key] = render_name(value, ctx)
            else:
                ctx = filename_context(desc, names[layout.node_indices[0]], step_id)
                path = os.path.normpath(resolve(render_name(value, ctx), here))
                target = opened.get(path)
                if target is None:
                    make_parents(path)
                    fd = os.open(path, output_flags(request.open_mode == "append"), 0o644)
                    target = opened[path] = os.fdopen(fd, "wb")
        targets.append(target)
    return files, targets[0], targets[1]


def _stdin_plan(request: Any, desc: Mapping[str, Any], names: List[str], layout: Any,
                step_id: int, cwd: str, files: Dict[int, Dict[str, Optional[str]]]
                ) -> Tuple[Set[int], int]:
    """Which tasks read what srun forwards, and the descriptor srun reads it from: its
    stdin, or the ``-i`` file srun opens itself (a name without per-task patterns, as
    Slurm). A per-task pattern is opened on each task's node instead (``files``)."""
    from parsers.values.filename import parse_step_io

    every = {r for rs in layout.ranks for r in rs}
    if not request.input:
        return every, 0
    spec = parse_step_io(request.input)
    if spec.kind == "none":
        return set(), 0
    if spec.kind == "task" and spec.task_id is not None:
        return {spec.task_id} & every, 0
    if spec.kind != "pattern" or spec.pattern is None:
        return every, 0
    if spec.pattern.opened_per_task:
        for position, ranks in enumerate(layout.ranks):
            node = names[layout.node_indices[position]]
            for rank in ranks:
                ctx = filename_context(desc, node, step_id, position, rank)
                files[rank]["stdin_file"] = render_name(request.input, ctx)
        return set(), 0
    ctx = filename_context(desc, names[layout.node_indices[0]], step_id)
    try:
        return every, os.open(resolve(render_name(request.input, ctx),
                                      working_directory(cwd)[0]), os.O_RDONLY)
    except OSError as e:
        raise SlurmInputError(f"Could not open stdin file: {os.strerror(e.errno or 0)}",
                              exit_code=1) from None


def run(argv: List[str], environ: Mapping[str, str]) -> int:
    """srun inside the job; the step's exit code."""
    from parsers.slurm_env import inherited_environment, profile_variables, step_environment, \
        task_environment
    from parsers.step_gpus import step_gpu_counts
    from parsers.step_layout import layout_step
    from parsers.steps import parse_srun

    if "SBATCHK8S_NODE_ADDRS" not in environ or "SBATCHK8S_JOB_DIR" not in environ:
        raise SlurmInputError("srun runs only inside an sbatch-k8s job here "
                              "(no allocation found in the environment)", exit_code=1)
    job_dir = environ["SBATCHK8S_JOB_DIR"]
    with needed("read the job description", os.path.join(job_dir, DESCRIPTION_KEY)):
        desc = load_description(job_dir)
    names, addresses = node_addresses(environ)
    known = agent_ips(names, addresses, environ)
    request = parse_srun(argv, environ)
    for line in request.errors:  # the -w cut comes before the task-count warnings
        error(line)
    if not request.quiet:
        for note in request.warnings:
            warn(note)
    _check_container(request, desc)
    job_id = int(desc["job_id"])
    layout = layout_step(request, names, desc["cpus_per_node"], job_id,
                         bool(desc.get("overcommit")))
    holds, shared_gpus = step_holds(request, layout, desc,
                                    step_gpu_counts(request, layout, desc))
    port = int(environ.get("SBATCHK8S_RUNTIME_PORT", DEFAULT_PORT))
    token = read_token(environ["SBATCHK8S_TOKEN_FILE"])
    loop = fresh_loop()
    # A step is named by srun -J, else by its command (slurmctld's step name).
    info = {"name": request.job_name or os.path.basename(request.command[0]),
            "ntasks": layout.ntasks,
            "nodes": [names[i] for i in layout.node_indices], "argv": list(request.command)}
    targets = _agent_targets(job_id, names, known, [0] + list(layout.node_indices),
                             wait_budget(environ))
    registration = loop.run_until_complete(register_step(
        targets[0], port, token, job_id, info, holds, request.immediate_s is not None,
        shared_gpus))
    step_id = registration.step_id
    if registration.gpu_ids:
        layout = replace(layout, gpu_ids=tuple(tuple(registration.gpu_ids.get(str(i), ()))
                                               for i in layout.node_indices))
    launch_host = _launch_address(environ, names, targets)
    umask = os.umask(0o022)
    os.umask(umask)
    base = inherited_environment(_task_environment(environ, request), desc)
    base.update(step_environment(desc, names, layout, request, step_id, launch_host, port,
                                 f"{umask:04o}"))
    profile_dir = files_directory(environ.get("SBATCHK8S_SPOOL", ""))
    profiles = {i: profile_variables(desc, names, addresses, i, environ, profile_dir)
                for i in layout.node_indices}
    envs = {r: dict(base, **task_environment(desc, names, layout, request, r, profiles))
            for rs in layout.ranks for r in rs}
    cwd = request.chdir or request.container_workdir or os.getcwd()
    files, out, err = _io_plan(request, desc, names, layout, step_id, cwd)
    reading, stdin_fd = _stdin_plan(request, desc, names, layout, step_id, cwd, files)
    router = OutputRouter(out, err, layout.ntasks, request.label, request.unbuffered)
    step = StepRun(step_id, job_id, request, names, router, stdin_fd)
    code = 1
    kill_wait_s = float(environ.get("SBATCHK8S_KILL_WAIT", 30))

    acctg_interval_s = checked_interval(request.acctg_freq, desc.get("acctg_freq"))
    step.on_usage = UsageRelay(registration, acctg_interval_s).relay

    async def launch() -> int:
        registration.watch(lambda signum: cancel_step(step, signum),
                           lambda: job_ending(step, kill_wait_s))
        return await launch_step(step, layout, envs, targets, port, token, cwd, files,
                                 reading, kill_wait_s, _time_limit_s(request, environ),
                                 acctg_interval_s)

    try:
        code = loop.run_until_complete(launch())
    finally:
        loop.run_until_complete(registration.end(step_result(step, code)))
    return code


def _agent_targets(job_id: int, names: List[str], known: Mapping[str, str],
                   indices: List[int], wait_s: float) -> List[str]:
    """What to connect to for each node (by index; only those of ``indices`` looked up):
    node 0's recorded IPs, else the name looked up while the DNS has not caught up yet
    (:mod:`sbatch_k8s.runtime.agent.addresses`). A name that never resolves fails the step as
    Slurm's srun fails one it cannot create."""
    targets = [known[name] for name in names]
    for index in sorted(set(indices)):
        try:
            targets[index] = resolve_patiently(targets[index], wait_s)
        except OSError as e:
            raise SlurmInputError(f"Unable to create step for job {job_id}: cannot resolve "
                                  f"node {names[index]} ({targets[index]}): "
                                  f"{e.strerror or e}", exit_code=1) from None
    return targets


def _launch_address(environ: Mapping[str, str], names: List[str],
                    addresses: List[str]) -> str:
    """The IP of the node running this srun (``SLURM_LAUNCH_NODE_IPADDR``)."""
    here = environ.get("SLURMD_NODENAME", names[0])
    address = addresses[names.index(here)] if here in names else addresses[0]
    try:
        return socket.gethostbyname(address)
    except OSError:
        return address


def _time_limit_s(request: Any, environ: Mapping[str, str]) -> Optional[float]:
    """The step's ``-t`` in seconds (whole minutes, as Slurm rounds it); None for none."""
    if not request.time_limit_min or request.time_limit_min <= 0:
        return None
    return request.time_limit_min * float(environ.get("SBATCHK8S_SECONDS_PER_MINUTE", 60))


class UsageRelay:
    """Passes the step's usage so far to node 0, at most once per half sampling interval:
    every node reports each interval, and a report that comes sooner than that after the
    last one waits and goes with the next fold (the latest figures of every node)."""

    def __init__(self, registration: Registration, interval_s: float) -> None:
        self.registration = registration
        self.spacing_s = interval_s / 2
        self.last = float("-inf")
        self.latest: List[Dict[str, Any]] = []
        self.waiting = False

    def relay(self, figures: List[Dict[str, Any]]) -> None:
        self.latest = figures
        if self.waiting:
            return
        delay = self.last + self.spacing_s - time.monotonic()
        if delay > 0:
            self.waiting = True
            asyncio.get_event_loop().call_later(delay, self._send)
        else:
            self._send()

    def _send(self) -> None:
        self.waiting = False
        self.last = time.monotonic()
        usage = StepUsage.from_tasks(self.latest)
        if usage is not None:
            self.registration.report_usage(usage.to_json())


def step_result(step: StepRun, code: int) -> Dict[str, Any]:
    """The step's state and exit as the step log records it: slurmstepd reports the largest
    raw wait status of its tasks (an exit code outranks a signal); a step past its time
    limit is TIMEOUT, one the job's end took CANCELLED (both with that status); one whose
    worst task was killed by a signal is CANCELLED, one srun ended CANCELLED with the signal
    it used; one that lost a node NODE_FAIL."""
    result = _end_state(step, code)
    usage = StepUsage.from_tasks(step.task_figures())
    if usage is not None:
        result["usage"] = usage.to_json()
    return result


def _end_state(step: StepRun, code: int) -> Dict[str, Any]:
    """The state and exit of :func:`step_result`."""
    results = [r for _, r in step.results()]
    lost = any(s.lost for s in step.sessions)
    if any(r.get("oom") for r in results):
        return {"state": OUT_OF_MEMORY, "exit_code": 0, "signal": OOM_EXIT_SIGNAL}
    raw = max((int(r["signal"]) if r.get("signal") else int(r.get("status") or 0) << 8
               for r in results), default=(code & 0xff) << 8)
    if step.timed_out or (step.job_ended and not lost):
        state = "TIMEOUT" if step.timed_out else "CANCELLED"
        return {"state": state, "exit_code": raw >> 8, "signal": raw & 0x7f}
    if step.cancelled_with and not lost:
        return {"state": "CANCELLED", "exit_code": 0, "signal": step.cancelled_with}
    state = "NODE_FAIL" if lost else (
        "COMPLETED" if raw == 0 and code == 0 else "CANCELLED" if raw & 0x7f else "FAILED")
    return {"state": state, "exit_code": raw >> 8, "signal": raw & 0x7f}


def main(argv: List[str], environ: Mapping[str, str]) -> int:
    """Entry point of the runtime's ``srun``."""
    try:
        return run(argv, environ)
    except SlurmInputError as e:
        sys.stderr.write(e.render(COMMAND))
        return e.exit_code
    except AccessError as e:
        sys.stderr.write(f"{COMMAND}: error: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 130
