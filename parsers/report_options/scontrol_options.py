"""``scontrol`` command line → :class:`ScontrolRequest` (``src/scontrol/scontrol.c``).

Only ``show`` is read in detail: its entity may be abbreviated as Slurm allows (``show j``,
``show hostn``, ``show hostl``; at least 5 letters for the host list entities) and its value
may follow ``=`` (``show job=12``). Other commands are handed back as words for the caller
to run or refuse; a word that is no scontrol command at all is ``invalid keyword: x``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from parsers.formats.cnumbers import strtol
from parsers.formats.messages import BareError
from parsers.report_options.argv import doc, refuse_unapplied, options, parse_argv
from parsers.report_options.ids import JobId

COMMAND = "scontrol"
SCONTROL_OPTIONS = options(
    ("all/a", "0", "all"), ("autocomplete", "1", "autocomplete"),
    ("cluster/M", "1", "clusters"), ("clusters", "1", "clusters"),
    ("details/d", "0", "details"), ("federation", "0", "federation"),
    ("future/F", "0", "future"), ("help/h", "0", "help"), ("hide", "0", "hide"),
    ("local", "0", "local"), ("oneliner/o", "0", "oneliner"), ("quiet/Q", "0", "quiet"),
    ("sibling", "0", "sibling"), ("uid/u", "1", "uid"), ("usage", "0", "usage"),
    ("verbose/v", "0", "verbose"), ("version/V", "0", "version"),
    ("json", "?", "json"), ("yaml", "?", "yaml"),
)
SYNOPSIS = "[<OPTION>] [<COMMAND>]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "all": doc("", "equivalent to \"all\" command (no partition is hidden)"),
    "autocomplete": doc("prefix", "list options",
                        refused="shell completion lists are not generated for this command"),
    "clusters": doc("cluster", "equivalent to \"cluster\" command (only this cluster)"),
    "details": doc("", "equivalent to \"details\" command"),
    "federation": doc("", "report federated job information (one cluster)"),
    "future": doc("", "report information about nodes in FUTURE state (none)"),
    "help": doc("", "equivalent to \"help\" command"),
    "hide": doc("", "equivalent to \"hide\" command"),
    "json": doc("[data_parser]", "produce JSON output", refused="Slurm 22.05 has no such option"),
    "local": doc("", "report information only about jobs on the local cluster"),
    "oneliner": doc("", "equivalent to \"oneliner\" command"),
    "quiet": doc("", "equivalent to \"quiet\" command"),
    "sibling": doc("", "report information about all sibling jobs (none)"),
    "uid": doc("uid", "update job as user uid",
               refused="jobs are updated as the invoking user only"),
    "usage": doc("", "display brief usage message"),
    "verbose": doc("", "equivalent to \"verbose\" command"),
    "version": doc("", "equivalent to \"version\" command"),
    "yaml": doc("[data_parser]", "produce YAML output", refused="Slurm 22.05 has no such option"),
}
ACTIONS = ("help", "usage", "version", "autocomplete")
#: ``show`` entities: (name, fewest letters that select it), in scontrol's testing order.
SHOW_ENTITIES: Tuple[Tuple[str, int], ...] = (
    ("aliases", 1), ("bbstat", 2), ("dwstat", 2), ("burstbuffer", 2), ("assoc_mgr", 2),
    ("cache", 2), ("config", 1), ("daemons", 1), ("federations", 1), ("hostnames", 5),
    ("hostlist", 5), ("hostlistsorted", 9), ("jobs", 1), ("jobid", 1), ("licenses", 2),
    ("nodes", 1), ("partitions", 2), ("partitionname", 2), ("reservations", 1),
    ("reservationname", 1), ("resources", 4), ("slurmd", 2), ("steps", 2), ("topoconf", 5),
    ("topology", 1),
)
#: Canonical entity for the spellings that share a printer.
ENTITY_ALIASES = {"jobid": "jobs", "partitionname": "partitions", "dwstat": "bbstat",
                  "reservationname": "reservations", "cache": "assoc_mgr"}
#: Entities that take extra words (``show topology <node>``).
MULTI_WORD = ("assoc_mgr", "bbstat", "dwstat", "topology")
#: ``show`` may be abbreviated to ``sho``.
SHOW_MIN_LETTERS = 3
#: scontrol's other commands, handed back to the caller.
COMMANDS = (
    "abort", "cancel_reboot", "cluster", "completing", "create", "delete", "details", "errnumstr",
    "exit", "fsdampeningfactor", "getent", "gethost", "help", "hold", "inactive", "listjobs",
    "listpids", "liststeps", "notify", "oneliner", "pidinfo", "ping", "power", "quiet", "quit",
    "reboot", "reboot_nodes", "reconfigure", "release", "requeue", "requeuehold", "resume",
    "schedloglevel", "setdebug", "setdebugflags", "show", "shutdown", "suspend", "takeover",
    "top", "token", "uhold", "update", "verbose", "version", "wait_job", "write",
)


@dataclass(frozen=True)
class ScontrolRequest:
    """scontrol's flags, its command, and for ``show`` the entity and value."""

    command: Optional[str] = None
    words: Tuple[str, ...] = ()
    entity: Optional[str] = None
    value: Optional[str] = None
    details: bool = False
    oneliner: bool = False
    all: bool = False
    quiet: bool = False
    verbose: int = 0
    clusters: Optional[str] = None
    action: Optional[str] = None


def keyword_matches(tag: str, word: str, minimum: int) -> bool:
    """``xstrncasecmp(tag, word, MAX(strlen(tag), minimum)) == 0``."""
    size = max(len(tag), minimum)
    return tag[:size].lower() == word[:size].lower()


def _show(words: Sequence[str]) -> Tuple[str, Optional[str]]:
    if len(words) < 2:
        raise BareError(f"too few arguments for keyword:{words[0]}")
    tag, eq, value = words[1].partition("=")
    multi = any(keyword_matches(tag, name, minimum) for name, minimum in SHOW_ENTITIES
                if name in MULTI_WORD)
    if len(words) > 3 and not multi:
        raise BareError(f"too many arguments for keyword:{words[0]}")
    entity = next((name for name, minimum in SHOW_ENTITIES
                   if keyword_matches(tag, name, minimum)), None)
    if entity is None:
        raise BareError(f"invalid entity:{tag} for keyword:{words[0]} ")
    found = value if eq else (words[2] if len(words) == 3 else None)
    return ENTITY_ALIASES.get(entity, entity), found


def show_job_id(value: str) -> Optional[JobId]:
    """The job of ``show job <value>`` (Slurm 22.05: a value without digits shows all jobs,
    a zero or malformed id is ``scontrol_print_job error: Invalid job id specified``)."""
    number, rest = strtol(value)
    if rest == value:
        return None
    task: Optional[int] = None
    if rest.startswith("_"):
        task, after = strtol(rest[1:])
        if after == rest[1:]:
            raise BareError("scontrol_print_job error: Invalid job id specified")
        rest = after
    if number <= 0 or rest:
        raise BareError("scontrol_print_job error: Invalid job id specified")
    return JobId(number, task)


def parse_scontrol_args(argv: Sequence[str]) -> ScontrolRequest:
    """Read scontrol's options and its command words (``argv`` without the program name)."""
    given, words = parse_argv(COMMAND, SCONTROL_OPTIONS, argv)
    if not any(g.key in ACTIONS for g in given):
        refuse_unapplied(given, SCONTROL_OPTIONS, DOCS)
    flags = {"details": False, "oneliner": False, "all": False, "quiet": False}
    verbose = 0
    action: Optional[str] = None
    clusters: Optional[str] = None
    for g in given:
        if g.key == "clusters":
            clusters = g.value
        elif g.key in flags:
            flags[g.key] = True
        elif g.key == "verbose":
            verbose += 1
        elif g.key in ("help", "usage", "version", "autocomplete") and action is None:
            action = g.key
    if not words:
        return ScontrolRequest(verbose=verbose, clusters=clusters, action=action, **flags)
    command = "show" if keyword_matches(words[0], "show", SHOW_MIN_LETTERS) else next(
        (c for c in COMMANDS if keyword_matches(words[0], c, len(c))), None)
    if command is None:
        raise BareError(f"invalid keyword: {words[0]}")
    entity, value = _show(words) if command == "show" else (None, None)
    return ScontrolRequest(command, tuple(words[1:]), entity, value, verbose=verbose,
                           clusters=clusters, action=action, **flags)
