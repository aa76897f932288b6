"""``sinfo`` command line and environment → :class:`SinfoQuery` (``src/sinfo/opts.c``).

The format stays None unless ``-o``/``-O`` or ``SINFO_FORMAT`` gives one: the default layouts
(which size some columns to their contents) are chosen at print time from ``summarize``,
``node_oriented`` and ``long`` — see :func:`parsers.formats.sinfo_format.format_sinfo`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError, fatal
from parsers.formats.cnumbers import atoi
from parsers.formats.sinfo_format import parse_sinfo_format
from parsers.formats.sinfo_fields import NODE_STATES
from parsers.report_options.argv import OPENAPI_REFUSED, doc, refuse_unapplied, options, parse_argv
from parsers.values.hostlist import expand_hostlist

COMMAND = "sinfo"
SINFO_OPTIONS = options(
    ("autocomplete", "1", "autocomplete"), ("all/a", "0", "all"), ("dead/d", "0", "dead"),
    ("exact/e", "0", "exact"), ("federation", "0", "federation"), ("future/F", "0", "future"),
    ("help", "0", "help"), ("helpformat", "0", "helpformat"), ("helpFormat", "0", "helpFormat"),
    ("helpstate", "0", "helpstate"), ("hide", "0", "hide"), ("iterate/i", "1", "iterate"),
    ("local", "0", "local"), ("long/l", "0", "long"), ("cluster/M", "1", "clusters"),
    ("clusters", "1", "clusters"), ("nodes/n", "1", "nodes"), ("noconvert", "0", "noconvert"),
    ("noheader/h", "0", "noheader"), ("Node/N", "0", "node_oriented"),
    ("format/o", "1", "format"), ("Format/O", "1", "format_long"),
    ("partition/p", "1", "partitions"), ("responding/r", "0", "responding"),
    ("list-reasons/R", "0", "list_reasons"), ("summarize/s", "0", "summarize"),
    ("sort/S", "1", "sort"), ("states/t", "1", "states"), ("reservation/T", "0", "reservation"),
    ("usage", "0", "usage"), ("verbose/v", "0", "verbose"), ("version/V", "0", "version"),
    ("json", "?", "json"), ("yaml", "?", "yaml"),
)
ACTIONS = ("help", "usage", "version", "helpformat", "helpFormat", "helpstate", "autocomplete")
SYNOPSIS = "[OPTIONS]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "all": doc("", "show all partitions (none are hidden)"),
    "autocomplete": doc("prefix", "list options",
                        refused="shell completion lists are not generated for this command"),
    "clusters": doc("cluster_name", "cluster to report on (only this cluster)"),
    "dead": doc("", "show only non-responding nodes"),
    "exact": doc("", "group nodes only on exact match of configuration"),
    "federation": doc("", "report federated information (one cluster)"),
    "format": doc("format", "format specification"),
    "format_long": doc("format", "format specification by field names"),
    "future": doc("", "report nodes in FUTURE state (there are none)"),
    "help": doc("", "show this help message"),
    "helpFormat": doc("", "list the -O field names", refused="Slurm 22.05 has no such option"),
    "helpformat": doc("", "list the -o format letters", refused="Slurm 22.05 has no such option"),
    "helpstate": doc("", "list the node states", refused="Slurm 22.05 has no such option"),
    "hide": doc("", "do not show hidden partitions"),
    "iterate": doc("seconds", "specify an iteration period"),
    "json": doc("[data_parser]", "produce JSON output", refused=OPENAPI_REFUSED),
    "list_reasons": doc("", "list reason nodes are down or drained"),
    "local": doc("", "show only the local cluster (the only one)"),
    "long": doc("", "long output - displays more information"),
    "node_oriented": doc("", "Node-centric format"),
    "nodes": doc("nodes", "report on specific node(s)"),
    "noconvert": doc("", "don't convert units",
                     refused="memory sizes print in Slurm's default units only"),
    "noheader": doc("", "no headers on output"),
    "partitions": doc("partition", "report on specific partition"),
    "reservation": doc("", "show only reservation information"),
    "responding": doc("", "report only responding nodes"),
    "sort": doc("fields", "comma separated list of fields to sort on",
                refused="partitions print in configuration order only"),
    "states": doc("node_state", "specify the what states of nodes to view"),
    "summarize": doc("", "report state summary only"),
    "usage": doc("", "display brief usage message"),
    "verbose": doc("", "verbosity level"),
    "version": doc("", "output version information and exit"),
    "yaml": doc("[data_parser]", "produce YAML output", refused=OPENAPI_REFUSED),
}
#: The state names sinfo lists after ``Bad state string`` (Slurm 22.05).
VALID_STATES = ("unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,"
                "reserved,perfctrs,cloud,completing,powering_down,powered_down,power_down,"
                "powering_up,fail,maint,reboot,reboot^,unknown")
_STATE_NAMES = {name for name in VALID_STATES.split(",")} | {
    state.compact for state in NODE_STATES.values()} | set(NODE_STATES)


@dataclass(frozen=True)
class SinfoQuery:
    """What ``sinfo`` was asked; ``format`` None selects the default layout."""

    format: Optional[str] = None
    format_is_long: bool = False
    format_errors: Tuple[str, ...] = ()
    summarize: bool = False
    node_oriented: bool = False
    long: bool = False
    noheader: bool = False
    partitions: Optional[Tuple[str, ...]] = None
    all_partitions: bool = False
    states: Optional[Tuple[str, ...]] = None
    nodes: Optional[Tuple[str, ...]] = None
    sort: Optional[str] = None
    dead: bool = False
    responding: bool = False
    exact: bool = False
    list_reasons: bool = False
    future: bool = False
    reservation: bool = False
    iterate_s: Optional[int] = None
    verbose: int = 0
    mimetype: Optional[str] = None
    data_parser: Optional[str] = None
    clusters: Optional[str] = None
    action: Optional[str] = None


def _states(text: str) -> Tuple[str, ...]:
    states = tuple(s for s in text.split(",") if s)
    for state in states:
        if state.lower() not in _STATE_NAMES:
            raise SlurmInputError(f'Bad state string: "{state}"', f"valid states: {VALID_STATES}",
                                  exit_code=EXIT_SUBMIT_ERROR)
    return tuple(s.lower() for s in states)


def _environment(environ: Mapping[str, str]) -> Dict[str, object]:
    values: Dict[str, object] = {"all_partitions": "SINFO_ALL" in environ,
                                 "future": "SINFO_FUTURE" in environ}
    if "SINFO_PARTITION" in environ:
        if "SINFO_ALL" in environ:
            raise SlurmInputError("Conflicting options, SINFO_ALL and SINFO_PARTITION, "
                                  "specified. Please choose one or the other.",
                                  exit_code=EXIT_SUBMIT_ERROR)
        values["partitions"] = tuple(p for p in environ["SINFO_PARTITION"].split(",") if p)
        values["all_partitions"] = True
    for variable, key in (("SINFO_SORT", "sort"), ("SLURM_CLUSTERS", "clusters")):
        if variable in environ:
            values[key] = environ[variable]
    return values


def parse_sinfo_args(argv: Sequence[str], environ: Mapping[str, str]) -> SinfoQuery:
    """Read sinfo's options (``argv`` without the program name) and ``SINFO_*``."""
    values = _environment(environ)
    given, _operands = parse_argv(COMMAND, SINFO_OPTIONS, argv)
    if not any(g.key in ACTIONS for g in given):
        refuse_unapplied(given, SINFO_OPTIONS, DOCS)
    fmt: Optional[str] = None
    is_long = a_set = p_set = False
    verbose = 0
    for g in given:
        value = g.value or ""
        if g.key in ACTIONS:
            values["action"] = values.get("action") or g.key
        elif g.key == "all":
            a_set, values["all_partitions"], values["partitions"] = True, True, None
        elif g.key == "partitions":
            p_set, values["all_partitions"] = True, True
            values["partitions"] = tuple(p for p in value.split(",") if p)
        elif g.key == "hide":
            values["all_partitions"] = False
        elif g.key == "iterate":
            if atoi(value) <= 0:
                raise SlurmInputError(f"Error: invalid entry for --iterate={value}",
                                      exit_code=EXIT_SUBMIT_ERROR)
            values["iterate_s"] = atoi(value)
        elif g.key == "nodes":
            values["nodes"] = _nodes(value)
        elif g.key in ("format", "format_long"):
            fmt, is_long = value, g.key == "format_long"
        elif g.key == "states":
            values["states"] = _states(value)
        elif g.key == "verbose":
            verbose += 1
        elif g.key in ("json", "yaml"):
            values["mimetype"], values["data_parser"] = g.key, g.value
        elif g.key in ("sort", "clusters"):
            values[g.key] = value
        elif g.key in SinfoQuery.__dataclass_fields__:
            values[g.key] = True
    if values.get("long") and fmt is not None:
        raise fatal("Options -o(--format) and -l(--long) are mutually exclusive. "
                    "Please remove one and retry.")
    if a_set and p_set:
        raise SlurmInputError("Conflicting options, -a and -p, specified. "
                              "Please choose one or the other.", exit_code=EXIT_SUBMIT_ERROR)
    if fmt is None and not (values.get("summarize") or values.get("node_oriented")
                            or values.get("list_reasons")) and "SINFO_FORMAT" in environ:
        fmt = environ["SINFO_FORMAT"]
    errors: Tuple[str, ...] = ()
    if fmt is not None:
        errors = parse_sinfo_format(fmt, is_long).errors
    return SinfoQuery(format=fmt, format_is_long=is_long, format_errors=errors,
                      verbose=verbose, **values)  # type: ignore[arg-type]


def _nodes(value: str) -> Tuple[str, ...]:
    try:
        return tuple(expand_hostlist(value))
    except ValueSyntaxError as e:
        lines: List[str] = []
        if str(e).startswith("Invalid range: "):
            lines.append(f"_parse_single_range: Invalid range: `{str(e)[15:]}'")
        lines.append(f"'{value}' invalid entry for --nodes")
        raise SlurmInputError(*lines, exit_code=EXIT_SUBMIT_ERROR) from None


def format_error_lines(query: SinfoQuery) -> List[str]:
    """The stderr lines about the format: ``-o`` errors are bare, ``-O`` errors prefixed."""
    if query.format_is_long:
        return [f"{COMMAND}: error: {line}" for line in query.format_errors]
    return list(query.format_errors)

