"""``sacct`` command line and environment → :class:`SacctQuery` (``src/sacct/options.c``).

The time window follows ``slurmdb_job_cond_def_start_end``: with neither ``-j`` nor ``-s``
it is today's midnight to now; ``-j`` alone widens it to the epoch; ``-s`` alone narrows it to
the current instant (jobs in those states *now*). The window is half-open, so an end equal to
the start or to now is moved one second on. Naming jobs (``-j``) or nodes (``-N``) selects
every user's jobs; otherwise the caller applies sacct's rule that root sees everyone and
other users see their own jobs (``users`` None, ``all_users`` False).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, fatal
from parsers.formats.cells import format_timestamp
from parsers.formats.sacct_format import (
    BRIEF_FIELDS,
    DEFAULT_FIELDS,
    LONG_FIELDS,
    FieldSpec,
    parse_format,
)
from parsers.formats.states import SACCT_STATES, job_state_num
from parsers.report_options.clusters import sacct_clusters
from parsers.report_options.argv import (OPENAPI_REFUSED, comma_list, doc, options,
                                         parse_argv, refuse_unapplied)
from parsers.report_options.ids import JobId, parse_sacct_jobs
from parsers.report_options.timespec import INFINITE, limit_seconds, parse_time

COMMAND = "sacct"
BRIEF_COMP_FIELDS = "jobid,uid,state"
DEFAULT_COMP_FIELDS = "jobid,uid,jobname,partition,nnodes,nodelist,state,end"
LONG_COMP_FIELDS = "jobid,uid,jobname,partition,nnodes,nodelist,state,start,end,timelimit"

SACCT_OPTIONS = options(
    ("autocomplete", "1", "autocomplete"), ("allusers/a", "0", "allusers"),
    ("accounts/A", "1", "accounts"), ("allocations/X", "0", "allocations"),
    ("array", "0", "array"), ("brief/b", "0", "brief"), ("batch-script/B", "0", "script"),
    ("completion/c", "0", "completion"), ("constraints/C", "1", "constraints"),
    ("delimiter", "1", "delimiter"), ("duplicates/D", "0", "duplicates"),
    ("federation", "0", "federation"), ("helpformat/e", "0", "helpformat"),
    ("help-fields", "0", "helpformat"), ("helpreason", "0", "helpreason"),
    ("helpstate", "0", "helpstate"), ("endtime/E", "1", "endtime"), ("env-vars", "0", "env"),
    ("expand-patterns", "0", "expand_patterns"), ("file/f", "1", "file"),
    ("flags/F", "1", "flags"), ("gid/g", "1", "groups"), ("group", "1", "groups"),
    ("help/h", "0", "help"), ("local", "0", "local"), ("name", "1", "names"),
    ("nnodes/i", "1", "nnodes"), ("ncpus/I", "1", "ncpus"), ("jobs/j", "1", "jobs"),
    ("timelimit-min/k", "1", "timelimit_min"), ("timelimit-max/K", "1", "timelimit_max"),
    ("long/l", "0", "long"), ("allclusters/L", "0", "allclusters"),
    ("cluster/M", "1", "clusters"), ("clusters", "1", "clusters"),
    ("nodelist/N", "1", "nodelist"), ("noconvert", "0", "noconvert"), ("units", "1", "units"),
    ("noheader/n", "0", "noheader"), ("fields", "1", "format"), ("format/o", "1", "format"),
    ("parsable/p", "0", "parsable"), ("parsable2/P", "0", "parsable2"), ("qos/q", "1", "qos"),
    ("partition/r", "1", "partitions"), ("reason/R", "1", "reasons"),
    ("state/s", "1", "states"), ("starttime/S", "1", "starttime"),
    ("truncate/T", "0", "truncate"), ("uid/u", "1", "users"),
    ("use-local-uid", "0", "use_local_uid"), ("usage/U", "0", "usage"),
    ("user", "1", "users"), ("verbose/v", "0", "verbose"), ("version/V", "0", "version"),
    ("wckeys/W", "1", "wckeys"), ("whole-hetjob", "?", "whole_hetjob"),
    ("associations/x", "1", "associations"), ("-/t", "0", "allocations"),
    ("json", "?", "json"), ("yaml", "?", "yaml"),
)
ACTIONS = ("help", "usage", "version", "helpformat", "helpstate", "helpreason",
           "autocomplete")
UNIT_LETTERS = ("K", "M", "G", "T", "P")
SYNOPSIS = "[options]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "accounts": doc("account_list", "only jobs charging these accounts"),
    "allclusters": doc("", "all clusters (there is one)"),
    "allocations": doc("", "only jobs, not their steps"),
    "allusers": doc("", "jobs of all users"),
    "array": doc("", "one line per array element"),
    "associations": doc("assoc_list", "only jobs of these association ids (jobs have none)"),
    "autocomplete": doc("prefix", "list options",
                        refused="shell completion lists are not generated for this command"),
    "brief": doc("", "jobid, state and exit code only"),
    "clusters": doc("cluster_list", "only jobs of these clusters"),
    "completion": doc("", "use the job completion data",
                      refused="there is no job completion plugin"),
    "constraints": doc("constraint_list", "only jobs requesting these features"),
    "delimiter": doc("characters", "field delimiter with -p/-P"),
    "duplicates": doc("", "also the earlier runs of requeued jobs (state REQUEUED)"),
    "endtime": doc("time", "jobs before this time"),
    "env": doc("", "the environment the batch script started with (with -j)"),
    "expand_patterns": doc("", "expand patterns in file names",
                           refused="file names print as given"),
    "federation": doc("", "jobs of the federation (one cluster)"),
    "file": doc("path", "read a job completion file",
                refused="there is no job completion file"),
    "flags": doc("flags", "query flags", refused="no query flags are implemented"),
    "format": doc("field_list", "fields to print"),
    "groups": doc("gid_list", "only jobs of these groups"),
    "help": doc("", "show this help message"),
    "helpformat": doc("", "list the fields -o accepts"),
    "helpreason": doc("", "list the reasons", refused="Slurm 22.05 has no such option"),
    "helpstate": doc("", "list the states", refused="Slurm 22.05 has no such option"),
    "jobs": doc("job(.step)", "only these jobs"),
    "json": doc("[data_parser]", "produce JSON output", refused=OPENAPI_REFUSED),
    "local": doc("", "jobs of the local cluster (the only one)"),
    "long": doc("", "many fields"),
    "names": doc("name_list", "only jobs with these names"),
    "ncpus": doc("N[-M]", "only jobs with this many CPUs"),
    "nnodes": doc("N[-M]", "only jobs with this many nodes"),
    "noconvert": doc("", "memory amounts in bytes, not converted to units"),
    "noheader": doc("", "no header"),
    "nodelist": doc("node_list", "only jobs that ran on these nodes"),
    "parsable": doc("", "delimiter after every field"),
    "parsable2": doc("", "delimiter between fields"),
    "partitions": doc("partition_list", "only jobs of these partitions"),
    "qos": doc("qos_list", "only jobs of these QOS"),
    "reasons": doc("reason_list", "only jobs with these (last) reasons"),
    "script": doc("", "the batch script of each job (with -j)"),
    "starttime": doc("time", "jobs after this time"),
    "states": doc("state_list", "only jobs in these states"),
    "timelimit_max": doc("time", "only jobs with at most this time limit"),
    "timelimit_min": doc("time", "only jobs with at least this time limit"),
    "truncate": doc("", "truncate times to the window"),
    "units": doc("[KMGTP]", "every memory and disk amount in this unit (over --noconvert)"),
    "usage": doc("", "brief usage"),
    "use_local_uid": doc("", "look uids up locally (always)"),
    "users": doc("user_list", "only jobs of these users"),
    "verbose": doc("", "verbosity level"),
    "version": doc("", "output version information and exit"),
    "wckeys": doc("wckey_list", "only jobs with these wckeys (jobs have none)"),
    "whole_hetjob": doc("[yes|no]", "all components of a hetjob (there are none)"),
    "yaml": doc("[data_parser]", "produce YAML output", refused=OPENAPI_REFUSED),
}
LISTS = ("accounts", "constraints", "groups", "names", "partitions", "reasons", "qos",
         "wckeys", "associations")


@dataclass(frozen=True)
class SacctQuery:
    """What ``sacct`` was asked. ``start_time``/``end_time`` bound the half-open window
    ``[start, end)`` in epoch seconds; list fields are None when not restricted."""

    fields: Tuple[FieldSpec, ...]
    start_time: int
    end_time: int
    parsable: Optional[str] = None
    delimiter: Optional[str] = None
    header: bool = True
    allocations_only: bool = False
    #: ``--noconvert``: memory amounts print in bytes.
    noconvert: bool = False
    #: ``--units``: the unit (``KMGTP``) every amount prints in, over ``noconvert``.
    units: Optional[str] = None
    jobs: Optional[Tuple[JobId, ...]] = None
    states: Optional[Tuple[str, ...]] = None
    users: Optional[Tuple[str, ...]] = None
    all_users: bool = False
    accounts: Optional[Tuple[str, ...]] = None
    constraints: Optional[Tuple[str, ...]] = None
    groups: Optional[Tuple[str, ...]] = None
    names: Optional[Tuple[str, ...]] = None
    partitions: Optional[Tuple[str, ...]] = None
    reasons: Optional[Tuple[str, ...]] = None
    qos: Optional[Tuple[str, ...]] = None
    wckeys: Optional[Tuple[str, ...]] = None
    associations: Optional[Tuple[str, ...]] = None
    nodelist: Optional[str] = None
    timelimit_min: Optional[int] = None
    timelimit_max: Optional[int] = None
    clusters: Optional[Tuple[str, ...]] = None
    nnodes_min: Optional[int] = None
    nnodes_max: Optional[int] = None
    ncpus_min: Optional[int] = None
    ncpus_max: Optional[int] = None
    expand_arrays: bool = False
    duplicates: bool = False
    truncate: bool = False
    completion: bool = False
    batch_script: bool = False
    env_vars: bool = False
    mimetype: Optional[str] = None
    data_parser: Optional[str] = None
    verbose: int = 0
    action: Optional[str] = None


def _states(text: str, states: List[str]) -> None:
    for item in comma_list(text):
        state = job_state_num(item)
        if state is None:
            raise fatal(f"unrecognized job state value '{item}'")
        if state not in SACCT_STATES:
            raise fatal(f"job state {item} is not supported / accounted")
        if state not in states:
            states.append(state)


def _count_range(text: str, key: str) -> Tuple[int, int]:
    """``-i``/``-I`` ``N[-M]`` (``get_resource_arg_range``): one number is an exact count."""
    what = "requested node range" if key == "nnodes" else "requested cpu range"
    low, dash, high = text.partition("-")
    numbers = [low] + ([high] if dash else [])
    if not all(n.isascii() and n.isdigit() for n in numbers):
        raise SlurmInputError(f'Invalid numeric value "{text}" for {what}.',
                              exit_code=EXIT_SUBMIT_ERROR)
    return int(low), int(high) if dash else int(low)


def _field_list(q: Dict[str, object], given_format: str, environ: Mapping[str, str]) -> str:
    completion = bool(q.get("completion"))
    text = given_format
    if q.pop("brief", False):
        text += (BRIEF_COMP_FIELDS if completion else BRIEF_FIELDS) + ","
    if q.pop("long", False):
        text += (LONG_COMP_FIELDS if completion else LONG_FIELDS) + ","
    if not text:
        default = DEFAULT_COMP_FIELDS if completion else environ.get("SACCT_FORMAT",
                                                                     DEFAULT_FIELDS)
        text = default + ","
    return text


def _window(start: int, end: int, q: Dict[str, object], now: int) -> Tuple[int, int]:
    """``slurmdb_job_cond_def_start_end`` and sacct's start-after-end check."""
    if q.get("states"):
        if not start and not q.get("jobs"):
            start = now
        if start and not end:
            end = start
    elif not q.get("jobs") and not start:
        today = time.localtime(now)
        start = int(time.mktime((today.tm_year, today.tm_mon, today.tm_mday, 0, 0, 0, 0, 0,
                                 -1)))
    end = end or now
    if end in (start, now):
        end += 1
    if start > end:
        raise SlurmInputError(
            f"Start time ({format_timestamp(start, now=now)}) requested is after end time "
            f"({format_timestamp(end, now=now)}).", exit_code=EXIT_SUBMIT_ERROR)
    return start, end


#: Keys of options read that are no query field: used for the field list (``brief``,
#: ``long``), or changing nothing on our one cluster, as DOCS says (the rest are refused).
NOT_QUERY_KEYS = frozenset({"brief", "long", "federation", "local", "use_local_uid",
                            "whole_hetjob"})


def parse_sacct_args(argv: Sequence[str], environ: Mapping[str, str], now: int) -> SacctQuery:
    """Read sacct's options (``argv`` without the program name) and ``SACCT_FORMAT``."""
    given, operands = parse_argv(COMMAND, SACCT_OPTIONS, argv, try_help=False)
    if not any(g.key in ACTIONS for g in given):
        refuse_unapplied(given, SACCT_OPTIONS, DOCS)
    q: Dict[str, object] = {}
    fields_text, states, verbose = "", [], 0
    for g in given:
        value = g.value or ""
        if g.key in ACTIONS:
            q["action"] = q.get("action") or g.key
        elif g.key in LISTS:
            q[g.key] = (q.get(g.key) or ()) + comma_list(value)  # type: ignore[operator]
        elif g.key == "allusers":
            q["all_users"] = True
        elif g.key == "users":
            if value == "-1":
                q["all_users"] = True
            else:
                q["all_users"] = False
                q["users"] = (q.get("users") or ()) + comma_list(value)  # type: ignore[operator]
        elif g.key == "jobs":
            jobs = (q.get("jobs") or ()) + parse_sacct_jobs(value)  # type: ignore[operator]
            q["jobs"] = jobs or None
        elif g.key == "states":
            _states(value, states)
            q["states"] = tuple(states)
        elif g.key in ("starttime", "endtime"):
            q["start" if g.key == "starttime" else "end"] = parse_time(value, now)
        elif g.key in ("timelimit_min", "timelimit_max"):
            seconds = limit_seconds(value)
            q[g.key] = seconds if seconds == INFINITE else (seconds + 59) // 60
        elif g.key == "clusters":
            q["clusters"] = sacct_clusters(value)
        elif g.key == "allclusters":
            q["clusters"] = None
        elif g.key in ("nnodes", "ncpus"):
            q[f"{g.key}_min"], q[f"{g.key}_max"] = _count_range(value, g.key)
        elif g.key == "format":
            fields_text += value + ","
        elif g.key in ("parsable", "parsable2"):
            q["parsable"] = "p" if g.key == "parsable" else "P"
        elif g.key == "noheader":
            q["header"] = False
        elif g.key == "nodelist":
            q["nodelist"] = q.get("nodelist") or value
        elif g.key == "verbose":
            verbose += 1
        elif g.key in ("json", "yaml"):
            q["mimetype"], q["data_parser"] = g.key, g.value
        elif g.key == "whole_hetjob" and value.lower() not in ("", "yes", "y", "no", "n"):
            raise SlurmInputError(f'Invalid --whole-hetjob value "{value}". '
                                  "Valid values: [yes|no].", exit_code=EXIT_SUBMIT_ERROR)
        elif g.key == "units":
            q["units"] = _unit(value)
        else:
            q[{"allocations": "allocations_only", "array": "expand_arrays",
               "script": "batch_script", "env": "env_vars"}.get(g.key, g.key)] = (
                g.value if g.key == "delimiter" else True)
    return _finish(q, fields_text, operands, environ, now, verbose)


def _unit(value: str) -> str:
    """``--units``' letter (its first, either case), or Slurm's two lines on a bad one (an
    empty value's NUL ends the first)."""
    letter = value[:1].upper()
    if letter not in UNIT_LETTERS:
        shown = f"{value[:1]}'. Possible options are 'KMGTP'" if value else ""
        raise SlurmInputError("Invalid unit type", exit_code=EXIT_SUBMIT_ERROR, fatal=True,
                              earlier=(f"sacct: error: Invalid unit type '{shown}",))
    return letter


def _finish(q: Dict[str, object], fields_text: str, operands: List[str],
            environ: Mapping[str, str], now: int, verbose: int) -> SacctQuery:
    """sacct's checks after the options, then the window and the field list."""
    if not q.get("jobs"):
        for flag, what in (("batch_script", "job scripts"), ("env_vars", "job environment")):
            if q.get(flag):
                raise fatal(f"When requesting {what} you must also request specific jobs "
                            "with the '-j' option.")
    if q.get("batch_script") and q.get("env_vars"):
        raise fatal("Options --batch-script and --env-vars are mutually exclusive")
    if q.get("long") and fields_text:
        raise fatal("Options -o(--format) and -l(--long) are mutually exclusive. "
                    "Please remove one and retry.")
    start, end = _window(int(q.pop("start", 0) or 0), int(q.pop("end", 0) or 0), q, now)
    if (q.get("jobs") or q.get("nodelist")) and not q.get("users"):
        q["all_users"] = True
    if q.get("all_users"):
        q["users"] = None
    fields = tuple(parse_format(_field_list(q, fields_text, environ)))
    if operands:
        raise SlurmInputError("Unknown arguments:", *(f" {word}" for word in operands),
                              exit_code=EXIT_SUBMIT_ERROR)
    query_keys = set(SacctQuery.__dataclass_fields__)
    unapplied = sorted(set(q) - query_keys - NOT_QUERY_KEYS)
    if unapplied:  # an option read but applied nowhere: a bug, never a silent no-op
        raise AssertionError(f"sacct options read but not applied: {unapplied}")
    known = {k: v for k, v in q.items() if k in query_keys}
    return SacctQuery(fields=fields, start_time=start, end_time=end, verbose=verbose, **known)
