"""``sbatch``, ``scontrol``, ``squeue``, ``scancel`` inside a job, answered by the runtime.

``scontrol show hostnames|hostlist|hostlistsorted`` and questions about the own job
(``scontrol show job``, ``squeue -j $SLURM_JOB_ID -h -o %N``, ``scancel $SLURM_JOB_ID``) need
no controller: the job description and node 0 know the answers. Anything else, and every
``sbatch``, is handed to the same command further down ``PATH`` when there is one (the full
commands: on the local backend, or in an image with sbatch-k8s installed), else refused with
one line saying what is missing (the runtime alone has no API client).

In a pod the full commands get the configuration the job carries (:data:`CARRIED_CONFIG`,
written by the submitting command) unless ``$SBATCHK8S_CONFIG`` names one, and no command
server (``SBATCHK8S_SERVER=0``: a daemon would outlive its use in a container); they find
the API server with the pod's ServiceAccount (in-cluster configuration).
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional

from parsers.input_errors import SlurmInputError
from parsers.job_records import RUNNING, JobRecord
from sbatch_k8s.runtime.file_access import AccessError, needed

#: The configuration file the job carries, in its job directory (the login side's
#: ``sbatch_k8s.backends.kubernetes.submit.carried_config.CONFIG_KEY``).
CARRIED_CONFIG = "config.toml"
#: What an image needs for commands about other jobs (named in the refusal).
FULL_COMMANDS = "the sbatch-k8s commands in the image (pip install sbatch-k8s)"


def own_record(desc: Mapping[str, Any], environ: Mapping[str, str]) -> JobRecord:
    """The running job as Slurm's reports see it."""
    started = environ.get("SBATCHK8S_JOB_START")
    names = environ.get("SLURM_JOB_NODELIST", "")
    if not names and environ.get("SBATCHK8S_NODE_ADDRS"):  # a tool stripped SLURM_*
        from parsers.values.hostlist import compress_hostlist
        from sbatch_k8s.runtime.srun.launch import node_addresses

        names = compress_hostlist(node_addresses(environ)[0])
    return JobRecord(
        job_id=int(desc["job_id"]), name=str(desc["job_name"]), user=str(desc["user"]),
        uid=int(desc["uid"]), group=str(desc["group"]), gid=int(desc["gid"]),
        partition=str(desc.get("partition") or "debug"), state=RUNNING,
        account=str(desc.get("account") or desc["user"]), qos=str(desc.get("qos") or "normal"),
        array_job_id=desc.get("array_job_id"), array_task_id=desc.get("array_task_id"),
        start_time=int(float(started)) if started else None,
        submit_time=int(float(started)) if started else None,
        time_limit_min=desc.get("time_limit_min"), node_count=int(desc["node_count"]),
        node_list=names, batch_host=environ.get("SLURMD_NODENAME", ""),
        cpus=sum(desc["cpus_per_node"]), ntasks=desc.get("ntasks"),
        cpus_per_task=int(desc.get("cpus_per_task") or 1), work_dir=str(desc["workdir"]),
        submit_host=str(desc["submit_host"]), cluster=str(desc.get("cluster_name", "")))


def full_command(name: str, environ: Mapping[str, str]) -> Optional[str]:
    """The next ``name`` on PATH after the shims, None when there is none."""
    shims = os.path.join(environ.get("SBATCHK8S_SPOOL", ""), "bin")
    for directory in environ.get("PATH", "").split(os.pathsep):
        if not directory or os.path.abspath(directory) == os.path.abspath(shims):
            continue
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def delegate_environment(environ: Mapping[str, str]) -> Dict[str, str]:
    """The full commands' environment (module docstring): in a pod, the carried
    configuration and no command server."""
    env = dict(environ)
    if env.get("SBATCHK8S_CONTRACT", "local") != "local":
        carried = os.path.join(env.get("SBATCHK8S_JOB_DIR", ""), CARRIED_CONFIG)
        if not env.get("SBATCHK8S_CONFIG") and os.path.isfile(carried):
            env["SBATCHK8S_CONFIG"] = carried
        env["SBATCHK8S_SERVER"] = "0"
        # a pod's job is on Kubernetes: never a local backend of whatever HOME holds
        env.setdefault("SBATCHK8S_BACKEND", "kubernetes")
    return env


def _delegate(name: str, argv: List[str], environ: Mapping[str, str]) -> Optional[int]:
    """Exec the full ``name``; None when there is none."""
    path = full_command(name, environ)
    if path is None:
        return None
    sys.stdout.flush()
    os.execve(path, [name] + argv, delegate_environment(environ))
    return None  # not reached


def _refuse(name: str, what: str) -> int:
    sys.stderr.write(f"{name}: error: {what} inside this job needs {FULL_COMMANDS}; the "
                     "runtime alone answers only about the job itself\n")
    return 1


def _own_details(record: Any, desc: Mapping[str, Any]) -> List[str]:
    """``scontrol show job -d``'s lines for this job, from its description alone (each
    node's pod is for the full commands to show)."""
    from parsers.formats.scontrol_details import allocation_lines, described_allocation
    from parsers.values.hostlist import expand_hostlist

    names = expand_hostlist(record.node_list) if record.node_list else []
    return allocation_lines(record, described_allocation(record, names, desc))


def _scontrol(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.formats.scontrol_show import format_show_job, show_hosts
    from parsers.report_options.scontrol_options import parse_scontrol_args, show_job_id

    request = parse_scontrol_args(argv)
    if request.command == "show" and request.entity in ("hostnames", "hostlist",
                                                        "hostlistsorted"):
        sys.stdout.write(show_hosts(request.entity, request.value, environ))
        return 0
    if request.command == "show" and request.entity == "jobs":
        wanted = show_job_id(request.value) if request.value else None
        if wanted is None or wanted.job_id == int(desc["job_id"]):
            if request.details:        # the full commands add each node's pod, if here
                code = _delegate("scontrol", argv, environ)
                if code is not None:
                    return code
            record = own_record(desc, environ)
            sys.stdout.write(format_show_job(record, int(time.time()), request.oneliner,
                                             details=_own_details(record, desc)
                                             if request.details else None))
            return 0
    code = _delegate("scontrol", argv, environ)
    return code if code is not None else _refuse("scontrol", " ".join(["scontrol"] + argv))


def _squeue(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.formats.squeue_format import format_squeue, format_squeue_fields
    from parsers.report_options.squeue_options import parse_squeue_args

    query = parse_squeue_args(argv, environ)
    own = int(desc["job_id"])
    if query.jobs is None or any(j.job_id != own for j in query.jobs) or query.step_mode:
        code = _delegate("squeue", argv, environ)
        return code if code is not None else _refuse("squeue", " ".join(["squeue"] + argv))
    render = format_squeue_fields if query.format_is_long else format_squeue
    sys.stdout.write(render([own_record(desc, environ)], query.format, int(time.time()),
                            not query.noheader, date_line=query.date_line))
    return 0


def _scancel(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.report_options.scancel_options import parse_scancel_args, verbose_line
    from sbatch_k8s.runtime.protocol import read_token
    from sbatch_k8s.runtime.srun.launch import ask, node_addresses

    request = parse_scancel_args(argv, environ)
    own = int(desc["job_id"])
    if not request.jobs or any(j.job_id != own for j in request.jobs):
        code = _delegate("scancel", argv, environ)
        return code if code is not None else _refuse("scancel", " ".join(["scancel"] + argv))
    from sbatch_k8s.runtime.protocol import fresh_loop

    _, addresses = node_addresses(environ)
    token = read_token(environ["SBATCHK8S_TOKEN_FILE"])
    port = int(environ["SBATCHK8S_RUNTIME_PORT"])
    loop = fresh_loop()
    for job in request.jobs:
        if request.verbose > 0:
            sys.stderr.write(verbose_line(request, str(job), job.step))
        step = job.step
        message: Dict[str, Any] = {
            "type": "cancel", "signal": request.signal,
            "batch": request.batch or step == "batch", "full": request.full,
            "step": int(step) if step is not None and step.isdecimal() else None}
        loop.run_until_complete(ask(addresses[0], port, token, message))
    return 0


def run(name: str, argv: List[str], environ: Mapping[str, str]) -> int:
    """Run command ``name`` inside the job; its exit code."""
    from sbatch_k8s.runtime.agent.node_setup import load_description

    handlers = {"scontrol": _scontrol, "squeue": _squeue, "scancel": _scancel}
    if name == "sbatch":
        code = _delegate("sbatch", argv, environ)
        return code if code is not None else _refuse("sbatch", "submitting a job")
    try:
        job_dir = environ["SBATCHK8S_JOB_DIR"]
        with needed("read the job description", os.path.join(job_dir, DESCRIPTION_KEY)):
            desc = load_description(job_dir)
        return handlers[name](argv, environ, desc)
    except SlurmInputError as e:
        sys.stderr.write(e.render(name))
        return e.exit_code
    except AccessError as e:
        sys.stderr.write(f"{name}: error: {e}\n")
        return 1
