"""``scontrol``, ``squeue``, ``scancel`` inside a job, answered by the runtime.

``scontrol show hostnames|hostlist|hostlistsorted`` and questions about the own job
(``scontrol show job``, ``squeue -j $SLURM_JOB_ID -h -o %N``, ``scancel $SLURM_JOB_ID``) need
no controller: the job description and node 0 know the answers. Anything else is handed to
the same command further down ``PATH`` when there is one (the login-side command, e.g. on the
local backend), else refused with one line.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional

from parsers.errors import SlurmInputError
from parsers.records import RUNNING, JobRecord
from sbatch_k8s.runtime.access import AccessError, needed


def own_record(desc: Mapping[str, Any], environ: Mapping[str, str]) -> JobRecord:
    """The running job as Slurm's reports see it."""
    started = environ.get("SBATCH_K8S_JOB_START")
    names = environ.get("SLURM_JOB_NODELIST", "")
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


def _delegate(name: str, argv: List[str], environ: Mapping[str, str]) -> Optional[int]:
    """Exec the next ``name`` on PATH after the shims; None when there is none."""
    shims = os.path.join(environ.get("SBATCH_K8S_SPOOL", ""), "bin")
    for directory in environ.get("PATH", "").split(os.pathsep):
        if not directory or os.path.abspath(directory) == os.path.abspath(shims):
            continue
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            sys.stdout.flush()
            os.execve(path, [name] + argv, dict(environ))
    return None


def _refuse(name: str, what: str) -> int:
    sys.stderr.write(f"{name}: error: inside an sbatch-k8s job only the job itself can be "
                     f"queried here ({what})\n")
    return 1


def _scontrol(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.formats.scontrol import format_show_job, show_hosts
    from parsers.report_options.scontrol import parse_scontrol_args, show_job_id

    request = parse_scontrol_args(argv)
    if request.command == "show" and request.entity in ("hostnames", "hostlist",
                                                        "hostlistsorted"):
        sys.stdout.write(show_hosts(request.entity, request.value, environ))
        return 0
    if request.command == "show" and request.entity == "jobs":
        wanted = show_job_id(request.value) if request.value else None
        if wanted is None or wanted.job_id == int(desc["job_id"]):
            sys.stdout.write(format_show_job(own_record(desc, environ), int(time.time()),
                                             request.oneliner))
            return 0
    code = _delegate("scontrol", argv, environ)
    return code if code is not None else _refuse("scontrol", " ".join(argv))


def _squeue(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.formats.squeue import format_squeue, format_squeue_fields
    from parsers.report_options.squeue import parse_squeue_args

    query = parse_squeue_args(argv, environ)
    own = int(desc["job_id"])
    if query.jobs is None or any(j.job_id != own for j in query.jobs) or query.step_mode:
        code = _delegate("squeue", argv, environ)
        if code is not None:
            return code
    render = format_squeue_fields if query.format_is_long else format_squeue
    sys.stdout.write(render([own_record(desc, environ)], query.format, int(time.time()),
                            not query.noheader, date_line=query.date_line))
    return 0


def _scancel(argv: List[str], environ: Mapping[str, str], desc: Mapping[str, Any]) -> int:
    from parsers.report_options.scancel import parse_scancel_args, verbose_line
    from sbatch_k8s.runtime.protocol import read_token
    from sbatch_k8s.runtime.srun import ask, node_addresses

    request = parse_scancel_args(argv, environ)
    own = int(desc["job_id"])
    if not request.jobs or any(j.job_id != own for j in request.jobs):
        code = _delegate("scancel", argv, environ)
        return code if code is not None else _refuse("scancel", " ".join(argv))
    from sbatch_k8s.runtime.protocol import fresh_loop

    _, addresses = node_addresses(environ)
    token = read_token(environ["SBATCH_K8S_TOKEN_FILE"])
    port = int(environ["SBATCH_K8S_RUNTIME_PORT"])
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
    from sbatch_k8s.runtime.node import load_description

    handlers = {"scontrol": _scontrol, "squeue": _squeue, "scancel": _scancel}
    try:
        job_dir = environ["SBATCH_K8S_JOB_DIR"]
        with needed("read the job description", os.path.join(job_dir, "job.json")):
            desc = load_description(job_dir)
        return handlers[name](argv, environ, desc)
    except SlurmInputError as e:
        sys.stderr.write(e.render(name))
        return e.exit_code
    except AccessError as e:
        sys.stderr.write(f"{name}: error: {e}\n")
        return 1
