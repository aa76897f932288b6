"""``scancel`` command line and environment → :class:`ScancelRequest` (``src/scancel/opt.c``).

Operands are job ids (:func:`parsers.report_options.ids.parse_scancel_ids`); filters are
ANDed by the caller. ``SCANCEL_*`` variables are read first and the command line overrides
them. Resolving the user name and reading a ``-w`` node file are the caller's; a job the
controller does not know is :func:`parsers.formats.messages.kill_job_error`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError
from parsers.formats.messages import BareError
from parsers.formats.states import job_state_num
from parsers.report_options.argv import doc, options, parse_argv, refuse_unapplied
from parsers.report_options.ids import JobId, parse_scancel_ids
from parsers.values.signal import signal_name, signal_number

COMMAND = "scancel"
SCANCEL_OPTIONS = options(
    ("autocomplete", "1", "autocomplete"), ("account/A", "1", "account"),
    ("admin-comment", "1", "admin_comment"), ("batch/b", "0", "batch"),
    ("ctld", "0", "ctld"), ("cron/c", "0", "cron"), ("full/f", "0", "full"),
    ("help", "0", "help"), ("hurry/H", "0", "hurry"), ("interactive/i", "0", "interactive"),
    ("cluster/M", "1", "clusters"), ("clusters", "1", "clusters"),
    ("jobname/n", "1", "name"), ("me", "0", "me"), ("name", "1", "name"),
    ("nodelist/w", "1", "nodelist"), ("partition/p", "1", "partition"), ("qos/q", "1", "qos"),
    ("quiet/Q", "0", "quiet"), ("reservation/R", "1", "reservation"),
    ("sibling", "1", "sibling"), ("signal/s", "1", "signal"), ("state/t", "1", "state"),
    ("usage", "0", "usage"), ("user/u", "1", "user"), ("verbose/v", "0", "verbose"),
    ("version/V", "0", "version"), ("wckey", "1", "wckey"),
)
ACTIONS = ("help", "usage", "version", "autocomplete")
SYNOPSIS = "[OPTIONS] [job_id[_array_id][.step_id]]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "account": doc("account", "act only on jobs charging this account"),
    "admin_comment": doc("comment", "set the job's AdminComment",
                         refused="jobs have no administrator comment on sbatch-k8s"),
    "autocomplete": doc("prefix", "list the options starting with prefix"),
    "batch": doc("", "signal batch shell for specified job"),
    "clusters": doc("cluster", "clusters to issue commands to (only this cluster)"),
    "cron": doc("", "confirm cancelling a job submitted by scrontab (there are none)"),
    "ctld": doc("", "send the request through the controller (always so here)"),
    "full": doc("", "signal batch shell and all steps for specified job"),
    "help": doc("", "show this help message"),
    "hurry": doc("", "avoid burst buffer stage out (there are no burst buffers)"),
    "interactive": doc("", "require response from user for each job"),
    "me": doc("", "act only on jobs of the calling user"),
    "name": doc("job_name", "act only on jobs with this name"),
    "nodelist": doc("hosts", "act only on jobs on these nodes (a name with '/' is a file)"),
    "partition": doc("partition", "act only on jobs in this partition"),
    "qos": doc("qos", "act only on jobs with this quality of service"),
    "quiet": doc("", "disable warnings"),
    "reservation": doc("reservation", "act only on jobs with this reservation"),
    "sibling": doc("cluster_name", "remove an active sibling job from a federated job"),
    "signal": doc("name | integer", "signal to send to job, default is SIGKILL"),
    "state": doc("states", "act only on jobs in this state (PENDING, RUNNING, SUSPENDED)"),
    "usage": doc("", "display brief usage message"),
    "user": doc("user_name", "act only on jobs of this user"),
    "verbose": doc("", "verbosity level"),
    "version": doc("", "output version information and exit"),
    "wckey": doc("wckey", "act only on jobs with this workload characterization key"),
}
#: ``SCANCEL_*`` booleans: variable → request field; values true/T/false/F.
ENV_BOOLEANS = {"SCANCEL_BATCH": "batch", "SCANCEL_FULL": "full",
                "SCANCEL_INTERACTIVE": "interactive", "SCANCEL_VERBOSE": "verbose"}
#: ``SCANCEL_*`` set when present at all.
ENV_FLAGS = {"SCANCEL_CTLD": "ctld", "SCANCEL_CRON": "cron", "SCANCEL_HURRY": "hurry"}
ENV_STRINGS = {"SCANCEL_ACCOUNT": "account", "SCANCEL_NAME": "name",
               "SCANCEL_PARTITION": "partition", "SCANCEL_QOS": "qos",
               "SCANCEL_USER": "user", "SCANCEL_WCKEY": "wckey"}
#: Filters any one of which identifies jobs without a job id.
FILTERS = ("account", "name", "nodelist", "partition", "qos", "reservation", "state", "user",
           "wckey")


@dataclass(frozen=True)
class ScancelRequest:
    """What ``scancel`` was asked: jobs, filters, and the signal (None: cancel the job).

    ``verbose`` is -1 with ``-Q``; ``warnings`` are lines Slurm logs without stopping
    (``Unrecognized SCANCEL_BATCH value: x``). ``me`` stands for the caller's own uid.
    """

    jobs: Tuple[JobId, ...] = ()
    signal: Optional[int] = None
    signal_name: Optional[str] = None
    batch: bool = False
    full: bool = False
    hurry: bool = False
    interactive: bool = False
    ctld: bool = False
    cron: bool = False
    verbose: int = 0
    account: Optional[str] = None
    name: Optional[str] = None
    partition: Optional[str] = None
    qos: Optional[str] = None
    reservation: Optional[str] = None
    state: Optional[str] = None
    user: Optional[str] = None
    me: bool = False
    nodelist: Optional[str] = None
    wckey: Optional[str] = None
    sibling: Optional[str] = None
    admin_comment: Optional[str] = None
    clusters: Optional[str] = None
    warnings: Tuple[str, ...] = ()
    action: Optional[str] = None

    @property
    def has_filters(self) -> bool:
        """Whether scancel must load the jobs and filter them (``_proc_cluster``): any
        filter, or ``-i`` (which asks about each job it found)."""
        return self.interactive or self.me or any(
            value is not None for value in (
                self.account, self.name, self.nodelist, self.partition, self.qos,
                self.reservation, self.state, self.user, self.wckey))


def _state(text: str, from_env: bool) -> str:
    state = job_state_num(text)
    if state is None:
        first = (f"Unrecognized SCANCEL_STATE value: {text}" if from_env
                 else f"Invalid job state specified: {text}")
        raise BareError(first, "Valid job states are PENDING, RUNNING, and SUSPENDED")
    return state


def _environment(environ: Mapping[str, str]) -> Tuple[Dict[str, object], List[str]]:
    values: Dict[str, object] = {}
    warnings: List[str] = []
    for variable, key in ENV_STRINGS.items():
        if variable in environ:
            text = environ[variable]
            values[key] = text.lower() if key in ("account", "qos") else text
    for variable, key in ENV_FLAGS.items():
        if variable in environ:
            values[key] = True
    for variable, key in ENV_BOOLEANS.items():
        if variable in environ:
            text = environ[variable].lower()
            if text in ("true", "t", "false", "f"):
                flag = text in ("true", "t")
                values[key] = int(flag) if key == "verbose" else flag
            else:
                warnings.append(f"Unrecognized {variable} value: {environ[variable]}")
    if "SCANCEL_STATE" in environ:
        values["state"] = _state(environ["SCANCEL_STATE"], from_env=True)
    if "SLURM_CLUSTERS" in environ:
        values["clusters"], values["ctld"] = environ["SLURM_CLUSTERS"], True
    return values, warnings


def parse_scancel_args(argv: Sequence[str], environ: Mapping[str, str]) -> ScancelRequest:
    """Read scancel's options and operands (``argv`` without the program name)."""
    values, warnings = _environment(environ)
    given, operands = parse_argv(COMMAND, SCANCEL_OPTIONS, argv)
    if not any(g.key in ACTIONS for g in given):
        refuse_unapplied(given, SCANCEL_OPTIONS, DOCS)
    for g in given:
        value = g.value or ""
        if g.key in ACTIONS:
            values["action"] = values.get("action") or g.key
        elif g.key in ("batch", "ctld", "cron", "full", "hurry", "interactive"):
            values[g.key] = True
        elif g.key == "quiet":
            values["verbose"] = -1
        elif g.key == "verbose":
            values["verbose"] = int(values.get("verbose", 0)) + 1  # type: ignore[call-overload]
        elif g.key == "me":
            values["user"], values["me"] = None, True
        elif g.key == "user":
            values["user"], values["me"] = value, False
        elif g.key == "signal":
            try:
                number = signal_number(value.strip())
            except ValueSyntaxError:
                raise BareError(f"Unknown job signal: {value}") from None
            values["signal"], values["signal_name"] = number, signal_name(number)
        elif g.key == "state":
            values["state"] = _state(value, from_env=False)
        elif g.key in ("account", "qos"):
            values[g.key] = value.lower()
        elif g.key == "clusters":
            values["clusters"], values["ctld"] = value, True
        elif g.key == "admin_comment":
            values["admin_comment"], values["ctld"] = value, True
        else:
            values[g.key] = value
    jobs = parse_scancel_ids(tuple(operands)) if operands else ()
    if not jobs and not values.get("action") and not values.get("me") \
            and not any(values.get(k) for k in FILTERS):
        raise SlurmInputError("No job identification provided", exit_code=EXIT_SUBMIT_ERROR)
    return ScancelRequest(jobs=jobs, warnings=tuple(warnings), **values)  # type: ignore[arg-type]


def verbose_line(request: ScancelRequest, text: str, step: Optional[str]) -> str:
    """What ``scancel -v`` says before acting on a job or step (``text``: its id)."""
    if step is not None:
        what = f"step {text}"
    else:
        what = ("full " if request.full else "batch " if request.batch else "") + f"job {text}"
    if request.signal is None:
        return f"scancel: Terminating {what}\n"
    return f"scancel: Signal {request.signal} to {what}\n"
