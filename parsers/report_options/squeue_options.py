"""``squeue`` command line and environment → :class:`SqueueQuery` (``src/squeue/opts.c``).

The query says what to select and how to print it; it does not know which jobs exist.
Things that need the system — resolving user names, checking ``-w`` node names, loading a
single job (``-j N`` with one id asks the controller for that job, and an unknown one is
``slurm_load_jobs error: Invalid job id specified``, see
:func:`parsers.formats.messages.invalid_job_id_error`) — are the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError, fatal
from parsers.formats import squeue_format as fmt
from parsers.formats.cnumbers import atoi
from parsers.formats.squeue_sort import START_SORT, check_job_sort
from parsers.formats.squeue_steps import parse_step_format, parse_step_long_format
from parsers.formats.states import job_state_num, valid_states_text
from parsers.report_options.argv import (OPENAPI_REFUSED, comma_list, doc, options,
                                         parse_argv, refuse_unapplied)
from parsers.report_options.ids import JobId, parse_squeue_jobs, parse_squeue_steps
from parsers.report_options.timespec import limit_seconds
from parsers.values.hostlist import expand_hostlist

COMMAND = "squeue"
USAGE = """Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]
              [-n name] [-o format] [-p partitions] [--qos qos]
              [--reservation reservation] [--sort fields] [--start]
              [--step step_id] [-t states] [-u user_name] [--usage]
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]
\t      [-ahjlrsv]"""

SQUEUE_OPTIONS = options(
    ("autocomplete", "1", "autocomplete"), ("accounts/A", "1", "accounts"),
    ("-/U", "1", "accounts"), ("all/a", "0", "all"), ("array/r", "0", "array"),
    ("expand-patterns", "0", "expand_patterns"), ("Format/O", "1", "format_long"),
    ("format/o", "1", "format"), ("federation", "0", "federation"), ("help", "0", "help"),
    ("helpstate", "0", "helpstate"), ("helpformat", "0", "helpformat"),
    ("helpFormat", "0", "helpFormat"), ("hide", "0", "hide"),
    ("iterate/i", "1", "iterate"), ("jobs/j", "?", "jobs"), ("local", "0", "local"),
    ("long/l", "0", "long"), ("licenses/L", "1", "licenses"), ("cluster/M", "1", "clusters"),
    ("clusters", "1", "clusters"), ("me", "0", "me"), ("name/n", "1", "names"),
    ("noconvert", "0", "noconvert"), ("node/w", "1", "nodes"), ("nodes", "1", "nodes"),
    ("nodelist", "1", "nodes"), ("noheader/h", "0", "noheader"), ("notme", "0", "notme"),
    ("only-job-state", "0", "only_job_state"), ("partitions/p", "1", "partitions"),
    ("priority/P", "0", "priority"), ("qos/q", "1", "qos"), ("reservation/R", "1", "reservation"),
    ("running-over", "1", "running_over"), ("running-under", "1", "running_under"),
    ("sib", "0", "sibling"), ("sibling", "0", "sibling"), ("sort/S", "1", "sort"),
    ("start", "0", "start"), ("steps/s", "?", "steps"), ("states/t", "1", "states"),
    ("usage", "0", "usage"), ("user/u", "1", "users"), ("users", "1", "users"),
    ("verbose/v", "0", "verbose"), ("version/V", "0", "version"), ("json", "?", "json"),
    ("yaml", "?", "yaml"),
)
#: Options that only print something and exit 0.
ACTIONS = ("help", "usage", "version", "helpstate", "helpformat", "helpFormat", "autocomplete")
SYNOPSIS = "[OPTIONS]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "accounts": doc("accounts", "comma separated list of accounts to view"),
    "all": doc("", "display jobs in hidden partitions (none are hidden)"),
    "array": doc("", "display one job array element per line"),
    "autocomplete": doc("prefix", "list options",
                        refused="shell completion lists are not generated for this command"),
    "clusters": doc("cluster_name", "cluster to view (only this cluster)"),
    "expand_patterns": doc("", "expand patterns in output file names",
                           refused="output file names print as given"),
    "federation": doc("", "report federated information (one cluster: all jobs)"),
    "format": doc("format", "format specification"),
    "format_long": doc("format", "format specification by field names"),
    "help": doc("", "show this help message"),
    "helpFormat": doc("", "list the -O field names", refused="Slurm 22.05 has no such option"),
    "helpformat": doc("", "list the -o format letters", refused="Slurm 22.05 has no such option"),
    "helpstate": doc("", "list the job states", refused="Slurm 22.05 has no such option"),
    "hide": doc("", "do not display jobs in hidden partitions"),
    "iterate": doc("seconds", "specify an interation period"),
    "jobs": doc("job(s)", "comma separated list of jobs IDs to view, default is all"),
    "json": doc("[data_parser]", "produce JSON output", refused=OPENAPI_REFUSED),
    "licenses": doc("licenses", "licenses requested by jobs to view (jobs have none)"),
    "local": doc("", "report only jobs of the local cluster (the only one)"),
    "long": doc("", "long report"),
    "me": doc("", "equivalent to --user=<my username>"),
    "names": doc("names", "comma separated list of job names to view"),
    "noconvert": doc("", "don't convert units",
                     refused="memory sizes print in Slurm's default units only"),
    "nodes": doc("hostlist", "list of nodes to view, default is all nodes"),
    "noheader": doc("", "no headers on output"),
    "notme": doc("", "display jobs of all users but the calling one"),
    "only_job_state": doc("", "print only the job ids and states"),
    "partitions": doc("partitions", "comma separated list of partitions to view"),
    "priority": doc("", "sort by priority and list each partition of a job (one here)"),
    "qos": doc("qos", "comma separated list of qos's to view"),
    "reservation": doc("name", "reservation to view (jobs have none)"),
    "running_over": doc("time", "jobs running for longer than this"),
    "running_under": doc("time", "jobs running for shorter than this"),
    "sibling": doc("", "display sibling jobs of a federation (there are none)"),
    "sort": doc("fields", "comma separated list of fields to sort on"),
    "start": doc("", "print expected start times of pending jobs"),
    "steps": doc("step(s)", "comma separated list of job steps to view"),
    "states": doc("states", "comma separated list of states to view"),
    "usage": doc("", "display a brief summary of squeue options"),
    "users": doc("user_name(s)", "comma separated list of users to view"),
    "verbose": doc("", "verbosity level (prints the time first)"),
    "version": doc("", "output version information and exit"),
    "yaml": doc("[data_parser]", "produce YAML output", refused=OPENAPI_REFUSED),
}


@dataclass(frozen=True)
class SqueueQuery:
    """What ``squeue`` was asked. ``None`` in a list field means "not restricted".

    ``format`` is the effective format: an ``-o`` string, or an ``-O`` list when
    ``format_is_long``; ``format_errors`` are the lines squeue prints on stderr about it.
    ``states`` holds long state names; ``all_states`` is ``-t all``. ``users`` are the names
    or uids as given (``me``: the caller's own).
    """

    format: str
    format_is_long: bool
    format_errors: Tuple[str, ...] = ()
    sort: Optional[str] = None
    jobs: Optional[Tuple[JobId, ...]] = None
    steps: Optional[Tuple[JobId, ...]] = None
    step_mode: bool = False
    states: Optional[Tuple[str, ...]] = None
    all_states: bool = False
    users: Optional[Tuple[str, ...]] = None
    me: bool = False
    notme: bool = False
    partitions: Optional[Tuple[str, ...]] = None
    names: Optional[Tuple[str, ...]] = None
    accounts: Optional[Tuple[str, ...]] = None
    qos: Optional[Tuple[str, ...]] = None
    licenses: Optional[Tuple[str, ...]] = None
    nodes: Optional[Tuple[str, ...]] = None
    reservation: Optional[str] = None
    all_partitions: bool = False
    array_tasks: bool = False
    noheader: bool = False
    long: bool = False
    start: bool = False
    iterate_s: Optional[int] = None
    verbose: int = 0
    priority: bool = False
    only_job_state: bool = False
    expand_patterns: bool = False
    running_over_s: Optional[int] = None
    running_under_s: Optional[int] = None
    mimetype: Optional[str] = None
    data_parser: Optional[str] = None
    clusters: Optional[str] = None
    action: Optional[str] = None

    @property
    def single_job_id(self) -> Optional[int]:
        """The job squeue loads by id (exactly one ``-j`` entry): it must exist."""
        return self.jobs[0].job_id if self.jobs is not None and len(self.jobs) == 1 else None

    @property
    def date_line(self) -> bool:
        """squeue prints the date first with ``-l``, ``-i`` or ``-v`` (unless ``-h``)."""
        return not self.noheader and bool(self.long or self.iterate_s or self.verbose)


def _states(text: str) -> Tuple[Tuple[str, ...], bool]:
    if text.lower() == "all":
        return (), True
    states: List[str] = []
    for item in comma_list(text):
        state = job_state_num(item)
        if state is None:
            raise SlurmInputError(f"Invalid job state specified: {item}",
                                  f"Valid job states include: {valid_states_text()}\n",
                                  exit_code=EXIT_SUBMIT_ERROR)
        states.append(state)
    return tuple(states), False


def _error(message: str) -> SlurmInputError:
    return SlurmInputError(message, exit_code=EXIT_SUBMIT_ERROR)


def parse_squeue_args(argv: Sequence[str], environ: Mapping[str, str]) -> SqueueQuery:
    """Read squeue's options (``argv`` without the program name) and ``SQUEUE_*``."""
    given, operands = parse_argv(COMMAND, SQUEUE_OPTIONS, argv)
    if not any(g.key in ACTIONS for g in given):
        refuse_unapplied(given, SQUEUE_OPTIONS, DOCS)
    q = {"sort": environ.get("SQUEUE_SORT"), "all_partitions": "SQUEUE_ALL" in environ,
         "array_tasks": "SQUEUE_ARRAY" in environ, "priority": "SQUEUE_PRIORITY" in environ,
         "clusters": environ.get("SLURM_CLUSTERS")}
    o_format: Optional[str] = None
    o_long: Optional[str] = None
    override = job_flag = step_flag = False
    verbose = 0
    for g in given:
        value = g.value or ""
        if g.key in ACTIONS:
            q["action"] = q.get("action") or g.key
        elif g.key == "accounts":
            q["accounts"] = comma_list(value)
        elif g.key == "me":
            q["me"], q["users"] = True, None
        elif g.key in ("all", "array", "noheader", "long", "start", "priority", "notme",
                       "only_job_state", "expand_patterns"):
            q[{"all": "all_partitions", "array": "array_tasks"}.get(g.key, g.key)] = True
            override = override or g.key in ("long", "start")
        elif g.key == "hide":
            q["all_partitions"] = False
        elif g.key == "iterate":
            seconds = atoi(value)
            if seconds <= 0:
                raise _error(f"--iterate={value}\n")
            q["iterate_s"] = seconds
        elif g.key == "jobs":
            job_flag = True
            if g.value is not None:
                q["jobs"] = parse_squeue_jobs(value)
        elif g.key == "steps":
            step_flag = override = True
            if g.value is not None:
                q["steps"] = parse_squeue_steps(value)
        elif g.key == "format_long":
            if o_format is not None:
                raise _error("-O (--Format) is incompatible with -o (--format)")
            o_long, override = value, True
        elif g.key == "format":
            if o_long is not None:
                raise _error("-o (--format) is incompatible with -O (--Format)")
            o_format, override = value, True
        elif g.key == "partitions":
            q["partitions"], q["all_partitions"] = comma_list(value), True
        elif g.key in ("names", "qos", "licenses"):
            q[g.key] = comma_list(value)
        elif g.key == "users":
            q["users"], q["me"] = comma_list(value), False
        elif g.key == "states":
            q["states"], q["all_states"] = _states(value)
        elif g.key == "nodes":
            try:
                q["nodes"] = tuple(expand_hostlist(value))
            except ValueSyntaxError:
                raise _error(f"'{value}' invalid entry for --nodelist") from None
        elif g.key in ("running_over", "running_under"):
            q[f"{g.key}_s"] = limit_seconds(value)
        elif g.key in ("json", "yaml"):
            q["mimetype"], q["data_parser"] = g.key, g.value
        elif g.key == "verbose":
            verbose += 1
        elif g.key in ("sort", "reservation", "clusters"):
            q[g.key] = value
    q["verbose"] = verbose
    return _finish(q, operands, o_format, o_long, override, job_flag, step_flag, environ)


def _finish(q: dict, operands: List[str], o_format: Optional[str], o_long: Optional[str],
            override: bool, job_flag: bool, step_flag: bool,
            environ: Mapping[str, str]) -> SqueueQuery:
    """The checks and defaults squeue applies after reading the options."""
    if q.get("long") and o_format is not None:
        raise fatal("Options -o(--format) and -l(--long) are mutually exclusive. "
                    "Please remove one and retry.")
    if not override:
        o_format = environ.get("SQUEUE_FORMAT")
        o_long = None if o_format is not None else environ.get("SQUEUE_FORMAT2")
    if operands:
        if job_flag:
            q["jobs"] = parse_squeue_jobs(operands.pop(0))
        elif step_flag:
            q["steps"] = parse_squeue_steps(operands.pop(0))
        if operands:
            error = _error(f"Unrecognized option: {operands[0]}")
            error.hint = USAGE
            raise error
    if job_flag and step_flag and q.get("jobs") is None:
        raise _error("Incompatible options --jobs and --steps")
    for key, variable in (("accounts", "SQUEUE_ACCOUNT"), ("names", "SQUEUE_NAMES"),
                          ("licenses", "SQUEUE_LICENSES"), ("partitions", "SQUEUE_PARTITION"),
                          ("qos", "SQUEUE_QOS"), ("users", "SQUEUE_USERS")):
        if q.get(key) is None and variable in environ and not (key == "users" and q.get("me")):
            q[key] = comma_list(environ[variable])
            q["all_partitions"] = q["all_partitions"] or key == "partitions"
    if q.get("states") is None and not q.get("all_states") and "SQUEUE_STATES" in environ:
        q["states"], q["all_states"] = _states(environ["SQUEUE_STATES"])
    if q.get("start") and not step_flag:
        o_format = o_format if o_format is not None or o_long is not None else fmt.START_FORMAT
        q["sort"] = q.get("sort") or START_SORT
        if q.get("states") is None and not q.get("all_states"):
            q["states"] = ("PENDING",)
    if q.get("sort") and not step_flag:
        check_job_sort(q["sort"])
    return _query(q, o_format, o_long, step_flag)


def _query(q: dict, o_format: Optional[str], o_long: Optional[str],
           step_mode: bool) -> SqueueQuery:
    """Pick the effective format and read it (its errors go to stderr, not fatal)."""
    if q.get("only_job_state") and o_format is None and o_long is None:
        o_format = fmt.ONLY_STATE_FORMAT
    if o_format is None and o_long is None:
        if step_mode:
            o_format = fmt.STEPS_FORMAT
        else:
            o_long = fmt.LONG_FORMAT2 if q.get("long") else fmt.DEFAULT_FORMAT2
    is_long = o_format is None
    text = o_long if is_long else o_format
    assert text is not None
    if step_mode:
        parsed = parse_step_long_format(text) if is_long else parse_step_format(text)
    else:
        parsed = fmt.parse_long_format(text) if is_long else fmt.parse_format(text)
    return SqueueQuery(format=text, format_is_long=is_long, format_errors=parsed.errors,
                       step_mode=step_mode, **q)
