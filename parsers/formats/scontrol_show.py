"""``scontrol show job`` and ``scontrol show hostnames|hostlist|hostlistsorted``.

The job layout is Slurm 22.05's (``_sprint_job_info`` as it printed on a real cluster): one
``Key=value`` group per line, continuation lines indented by three blanks, a ``TRES=`` line,
optional ``BatchHost=``/``Comment=``/``StdOut=`` lines, then ``Power=``, and a record ending in
``\\n   \\n\\n``. With ``one_liner`` (``scontrol -o``) the groups are separated by single blanks
and the record ends in `` \\n``. NULL strings print ``(null)``, unset times ``Unknown``.
"""

from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError
from parsers.formats import job_values as jv
from parsers.formats.cells import format_timestamp
from parsers.formats.job_stdio import scontrol_stdio
from parsers.formats.messages import BareError
from parsers.formats.states import is_pending
from parsers.job_records import JobRecord
from parsers.values.hostlist import (
    compress_hostlist,
    compress_hostlist_sorted,
    expand_hostlist,
)
from parsers.values.time import format_duration_hms, format_time_limit

INDENT = "   "


def _null(text: str) -> str:
    return text if text else "(null)"


def _time_limit(job: JobRecord) -> str:
    return "UNLIMITED" if not job.time_limit_min else format_time_limit(job.time_limit_min)


def _end_time(job: JobRecord, now: int) -> Optional[int]:
    """EndTime: the recorded end, or start plus a finite limit; unlimited running is Unknown."""
    return jv.expected_end(job, now)


def _num_nodes(job: JobRecord) -> str:
    if is_pending(job.state) and job.max_nodes:
        low = min(job.node_count, job.max_nodes)
        return f"{low}-{job.max_nodes}"
    return str(job.node_count)


def _first_line(job: JobRecord) -> str:
    parts = [f"JobId={job.job_id}"]
    if job.array_job_id is not None and (job.array_task_id is not None
                                         or job.array_pending is not None):
        task = job.array_pending if job.array_pending is not None else job.array_task_id
        parts.append(f"ArrayJobId={job.array_job_id} ArrayTaskId={task}")
        if job.array_throttle:
            parts.append(f"ArrayTaskThrottle={job.array_throttle}")
    parts.append(f"JobName={job.name}")
    return " ".join(parts)


def show_job_lines(job: JobRecord, now: int, time_format: Optional[str] = None,
                   details: Optional[Sequence[str]] = None) -> List[str]:
    """The groups of ``scontrol show job``, one string per output line; ``details``: those
    of ``-d`` after the ``Socks/Node`` line (:mod:`parsers.formats.scontrol_details`), and
    the ``DerivedExitCode`` line."""
    from parsers.formats.scontrol_details import derived_exit_line

    def stamp(epoch: Optional[int]) -> str:
        return format_timestamp(epoch, time_format, now)

    mem_kind = "CPU" if job.memory_per_cpu else "Node"
    lines = [
        _first_line(job),
        f"UserId={job.user}({job.uid}) GroupId={job.group}({job.gid}) MCS_label=N/A",
        f"Priority={job.priority} Nice={job.nice} Account={_null(job.account)} "
        f"QOS={_null(job.qos)}",
        f"JobState={job.state} Reason={job.reason.replace(' ', '_')} "
        f"Dependency={_null(job.dependency)}",
        f"Requeue={int(job.requeue)} Restarts={job.restarts} BatchFlag={int(job.batch_flag)} "
        f"Reboot=0 ExitCode={jv.exit_code_text(job.exit_code, job.exit_signal)}",
        *([derived_exit_line(job)] if details is not None else []),
        f"RunTime={format_duration_hms(jv.time_used_s(job, now))} "
        f"TimeLimit={_time_limit(job)} TimeMin=N/A",
        f"SubmitTime={stamp(job.submit_time)} EligibleTime={stamp(job.eligible_time)}",
        f"AccrueTime={stamp(job.accrue_time or job.eligible_time)}",
        f"StartTime={stamp(jv.shown_start(job, now))} EndTime={stamp(_end_time(job, now))} "
        "Deadline=N/A",
        "SuspendTime=None SecsPreSuspend=0 "
        f"LastSchedEval={stamp(job.last_sched_eval or job.start_time or job.submit_time)} "
        "Scheduler=Main",
        f"Partition={job.partition} AllocNode:Sid={_null(job.submit_host)}:{job.alloc_sid}",
        f"ReqNodeList={_null(job.req_nodes)} ExcNodeList={_null(job.exc_nodes)}",
        f"NodeList={job.node_list}",
    ]
    if job.batch_host:
        lines.append(f"BatchHost={job.batch_host}")
    lines += [
        f"NumNodes={_num_nodes(job)} NumCPUs={job.cpus} NumTasks={jv.num_tasks(job)} "
        f"CPUs/Task={job.cpus_per_task} ReqB:S:C:T=0:0:*:*",
        f"TRES={jv.tres_text(job)}",
        f"Socks/Node=* NtasksPerN:B:S:C={job.ntasks_per_node or 0}:0:*:* CoreSpec=*",
        *(details or ()),
        f"MinCPUsNode={jv.min_cpus_per_node(job)} "
        f"MinMemory{mem_kind}={jv.memory_text(job.min_memory_mb or 0)} MinTmpDiskNode=0",
        f"Features={_null(job.features)} DelayBoot=00:00:00",
        f"OverSubscribe={jv.oversubscribe_text(job)} Contiguous=0 Licenses=(null) "
        "Network=(null)",
        f"Command={_null(job.command)}",
        f"WorkDir={job.work_dir}",
    ]
    if job.system_comment:
        lines.append(f"SystemComment={job.system_comment} ")
    if job.comment:
        lines.append(f"Comment={job.comment} ")
    if job.batch_flag:
        stderr, stdin, stdout = scontrol_stdio(job)
        lines += [f"StdErr={stderr}", f"StdIn={stdin}", f"StdOut={stdout}"]
    lines.append("Power=")
    gres = jv.tres_per_node(job)
    if gres:
        lines.append(f"TresPerNode={gres}")
    return lines


def format_show_job(record: JobRecord, now: int, one_liner: bool = False,
                    time_format: Optional[str] = None,
                    details: Optional[Sequence[str]] = None) -> str:
    """One job as ``scontrol show job`` prints it (``one_liner``: ``scontrol -o``;
    ``details``: ``-d``'s lines, see :func:`show_job_lines`)."""
    lines = show_job_lines(record, now, time_format, details)
    if one_liner:
        return " ".join(lines) + " \n"
    return ("\n" + INDENT).join(lines) + "\n" + INDENT + "\n\n"


def format_show_jobs(records: Sequence[JobRecord], now: int, one_liner: bool = False,
                     time_format: Optional[str] = None,
                     details: Optional[Callable[[JobRecord], Sequence[str]]] = None) -> str:
    """Several jobs; an empty list prints ``No jobs in the system``. ``details``: each
    job's ``-d`` lines."""
    if not records:
        return "No jobs in the system\n"
    return "".join(format_show_job(r, now, one_liner, time_format,
                                   details(r) if details is not None else None)
                   for r in records)


def _hostlist_error(expression: str, error: ValueSyntaxError, exit_code: int) -> BareError:
    """Slurm's two lines: hostlist.c's log line, then ``Invalid hostlist: <expr>``."""
    message = str(error)
    lines = []
    if message.startswith("Invalid range: "):
        lines.append(f"scontrol: error: _parse_single_range: Invalid range: "
                     f"`{message[len('Invalid range: '):]}'")
    lines.append(f"Invalid hostlist: {expression}")
    return BareError(*lines, exit_code=exit_code)


def show_hostnames(expression: str) -> str:
    """``scontrol show hostnames``: one host per line, order and duplicates kept.

    The caller passes ``$SLURM_NODELIST`` when no argument was given; an empty expression
    prints nothing. Errors exit 0 in Slurm (:attr:`SlurmInputError.exit_code` is 0).
    """
    try:
        hosts = expand_hostlist(expression)
    except ValueSyntaxError as e:
        raise _hostlist_error(expression, e, exit_code=0) from e
    return "".join(host + "\n" for host in hosts)


def empty_host_list_error() -> SlurmInputError:
    """``show hostnames`` without an argument and without ``SLURM_NODELIST`` (exit 0)."""
    return SlurmInputError("host list is empty", exit_code=0)


def show_hostlist(expression: str, sorted_hosts: bool = False) -> str:
    """``scontrol show hostlist`` (``sorted_hosts``: ``hostlistsorted``): one ranged line."""
    try:
        hosts = expand_hostlist(expression)
    except ValueSyntaxError as e:
        raise _hostlist_error(expression, e, exit_code=EXIT_SUBMIT_ERROR) from e
    text = compress_hostlist_sorted(hosts) if sorted_hosts else compress_hostlist(hosts)
    return text + "\n"


def show_hosts(entity: str, value: Optional[str], environ: Mapping[str, str]) -> str:
    """``show hostnames|hostlist|hostlistsorted`` (shared with the runtime's scontrol)."""
    if entity == "hostnames":
        expression = value if value is not None else environ.get("SLURM_NODELIST", "")
        if not expression:
            raise empty_host_list_error()
        return show_hostnames(expression)
    if value is None:
        raise SlurmInputError("invalid encode argument", exit_code=1)
    return show_hostlist(value, sorted_hosts=entity == "hostlistsorted")
