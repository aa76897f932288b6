"""``sbatch`` on the local backend: record the job, wake the scheduler, print the id.

The job directory (``<state>/jobs/<id>/``) gets the script, the job's token and the job
description: ``job.json``, and beside the token its private part (``environment.json``: the
exported environment, which may hold secrets) and the settings its node processes start with
(``launch.json``), all mode 0600. The database gets one row per job (per element for arrays,
all PENDING) — that is all a pending job costs; the state directory's one scheduler
(:mod:`~sbatch_k8s.backends.local.scheduler`, started if none runs) starts it when it may.
``--wait`` sleeps until the scheduler says jobs ended and returns the job's exit code (1 for
a signal, the highest for arrays).
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import os
import secrets
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

from parsers.allocation import Allocation
from parsers.input_errors import submission_failed
from parsers.formats.job_stdio import recorded_stdio
from parsers.formats.job_values import eligible_from
from parsers.jobspec import JobSpec, SubmitContext, initial_reason
from parsers.own_variables import PREFIX
from parsers.job_records import PENDING
from sbatch_k8s import jobdb
from sbatch_k8s.backends.base import SRUN_COMMAND, StartEstimate, Submitted
from sbatch_k8s.backends.local.capacity import check_fits
from sbatch_k8s.backends.local.layout import job_dir_of, write_private
from sbatch_k8s.backends.local.supervisor import write_launch_settings
from sbatch_k8s.backends.local.wakeup import ensure_scheduler
from sbatch_k8s.user_messages import print_warning
from sbatch_k8s.submission_plan import SubmissionPlan
from translators.config import ClusterConfig
from parsers.platforms.contract_profiles import profile_entry
from parsers.job_description import (
    describe_job,
    description_to_json,
    job_environment,
    split_description,
)
from parsers.vocabulary import ENVIRONMENT_KEY

#: Our variables a local job keeps: the settings naming this cluster, so that sacct, sbatch…
#: run inside the job see the same one. Every other ``SBATCHK8S_*`` belongs to the runtime
#: of an enclosing job and is dropped.
LOGIN_SETTINGS = ("SBATCHK8S_STATE_DIR", "SBATCHK8S_CONFIG", "SBATCHK8S_BACKEND",
                  "SBATCHK8S_SERVER", "SBATCHK8S_DEBUG")


def _runtime_variables(environ: Mapping[str, str]) -> List[str]:
    """The enclosing job's runtime variables, not to be passed on."""
    return [k for k in environ if k.startswith(PREFIX) and k not in LOGIN_SETTINGS]


def _check_request(job: JobSpec, allocation: Allocation, config: ClusterConfig,
                   conn: Any) -> None:
    """The controller's refusals that only the local backend can decide."""
    if job.array is not None and job.array.max_index >= config.local.max_array_size:
        raise submission_failed("Invalid job array specification")
    check_fits(job, allocation, config.local)
    if job.dependency is not None:
        for clause in job.dependency.clauses:
            for target in clause.targets:
                if jobdb.get_job(conn, target.job_id) is None:
                    raise submission_failed("Job dependency problem")


def _workdir(job: JobSpec, context: SubmitContext) -> str:
    if job.chdir:
        return os.path.normpath(os.path.join(context.cwd, job.chdir))
    return context.cwd


def _begin_time(job: JobSpec, now: float) -> Optional[float]:
    """``--begin`` as a moment (what the scheduler waits for), or None."""
    if job.begin is None:
        return None
    import datetime

    from parsers.values.begin import resolve_begin

    return resolve_begin(job.begin, datetime.datetime.fromtimestamp(now)).timestamp()


def _rows(job: JobSpec, allocation: Allocation, context: SubmitContext, base_id: int,
          job_dir: str, workdir: str, desc: Mapping[str, Any],
          batch: bool = True) -> List[Dict[str, Any]]:
    now = time.time()
    begin_time = _begin_time(job, now)
    indices: Sequence[Optional[int]] = job.array.indices() if job.array else (None,)
    stdout, stderr, stdin = recorded_stdio(job.output, job.error, job.input, workdir)
    common: Dict[str, Any] = {
        "name": job.job_name, "user": context.user, "uid": context.uid, "grp": context.group,
        "gid": context.gid, "partition": desc["partition"], "account": desc.get("account"),
        "qos": job.qos or "normal", "state": PENDING, "reason": initial_reason(job),
        "submit_time": now, "begin_time": begin_time,
        "eligible_time": eligible_from(
            begin_time, bool(job.hold or (job.dependency and job.dependency.clauses)), now),
        "time_limit_min": job.time_limit_min, "node_count": allocation.node_count,
        "node_list": "", "cpus": sum(allocation.cpus_per_node),
        "batch_cpus": allocation.cpus_per_node[0],
        "gpus": allocation.gpus_per_node, "gpu_ids": "", "ntasks": allocation.ntasks,
        "cpus_per_task": job.cpus_per_task or 1, "ntasks_per_node": job.ntasks_per_node,
        # Slurm's MinMemoryCPU or MinMemoryNode: per CPU when asked (or defaulted) so
        "mem_mb": job.mem_per_cpu_mb if job.mem_per_cpu_mb is not None
        else allocation.mem_per_node_mb,
        "mem_per_cpu": 1 if job.mem_per_cpu_mb is not None else 0,
        "dependency": desc.get("dependency") or "", "hold": 1 if job.hold else 0,
        "kill_on_invalid_dep": 1 if job.kill_on_invalid_dep else 0,
        "priority": 1, "nice": job.nice or 0, "work_dir": workdir,
        "command": job.script.path and os.path.abspath(job.script.path) or "",
        "stdout": stdout, "stderr": stderr, "stdin": stdin, "job_dir": job_dir,
        "array_spec": job.array.format() if job.array else None,
        "array_max_running": job.array.max_running if job.array else None,
        "comment": job.comment or "", "exclusive": job.exclusive,
        "submit_host": context.host, "features": job.constraint or "",
        "requeue": 0 if job.requeue is False else 1, "batch_flag": 1 if batch else 0,
    }
    rows = []
    for k, index in enumerate(indices):
        row = dict(common, job_id=base_id + k,
                   array_job_id=base_id if job.array else None, array_task_id=index)
        rows.append(row)
    return rows


def _estimate(base_id: int, allocation: Allocation, partition: str) -> StartEstimate:
    """``--test-only``: the job would start now, on the first loopback addresses."""
    from parsers.values.hostlist import compress_hostlist
    from sbatch_k8s.runtime.contract import local_address

    nodes = compress_hostlist([local_address(i) for i in range(allocation.node_count)])
    return StartEstimate(base_id, time.strftime("%Y-%m-%dT%H:%M:%S"),
                         sum(allocation.cpus_per_node), nodes, partition)


def create_job(plan: SubmissionPlan, environ: Mapping[str, str]) -> Submitted:
    """Record the planned job and wake the scheduler; its ids (with ``--test-only``
    nothing is recorded: only where the job would run)."""
    job, allocation, partition, config = plan.job, plan.allocation, plan.partition, plan.config
    quiet, command = plan.submit.quiet, plan.command
    if not quiet:
        for note in plan.warnings:
            print_warning(command, note)
    with jobdb.opened(environ) as conn:
        _check_request(job, allocation, config, conn)
        context = plan.context
        count = job.array.count() if job.array else 1
        base_id = jobdb.allocate_job_ids(conn, count)
        if plan.submit.test_only:
            return Submitted((), estimate=_estimate(base_id, allocation, partition.name))
        workdir = _workdir(job, context)
        environment = job_environment(job, dict(context.environment),
                                      drop=_runtime_variables(dict(context.environment)))
        desc = describe_job(job, allocation, context, base_id, config.cluster_name, workdir,
                            environment)
        desc["partition"] = partition.name
        desc.update(profile_entry(job.k8s_contract or partition.contract))
        job_dir = job_dir_of(environ, base_id)
        os.makedirs(job_dir, mode=0o700, exist_ok=True)
        write_private(os.path.join(job_dir, "script"),
                      job.script.text.encode("utf-8", "surrogateescape"))
        write_private(os.path.join(job_dir, "token"), secrets.token_hex(32).encode())
        public, private = split_description(desc)
        write_private(os.path.join(job_dir, ENVIRONMENT_KEY), description_to_json(private).encode())
        write_private(os.path.join(job_dir, DESCRIPTION_KEY), description_to_json(public).encode())
        write_launch_settings(job_dir, environ)
        jobdb.insert_jobs(conn, _rows(job, allocation, context, base_id, job_dir, workdir, desc,
                                      batch=command != SRUN_COMMAND))
        sys.stdout.flush()   # the scheduler may be forked from here: nothing buffered twice
        sys.stderr.flush()
        ensure_scheduler(environ, conn=conn)
    return Submitted(tuple(range(base_id, base_id + count)))


def submit_local(plan: SubmissionPlan, environ: Mapping[str, str]) -> Submitted:
    """``sbatch`` on this machine: what was created."""
    if not plan.submit.quiet:  # what the option table says this backend ignores
        from parsers.backend_support import backend_warnings
        from parsers.options import LOCAL

        for note in backend_warnings(plan.job.given, LOCAL):
            print_warning("sbatch", note)
    return create_job(plan, environ)
