"""Value readers: one per option ``kind`` of the option table.

A reader turns the raw text of an option into the typed value its JobSpec / StepRequest field
holds, and words failures as Slurm does for that option (``Invalid --time specification``,
``Invalid numeric value "x" for --ntasks.``, …) with Slurm's exit code. The value languages
themselves live in :mod:`parsers.values` (lark grammars); they are imported lazily so that a
command line that needs none of them never loads lark.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError
from parsers.input_errors import fatal, submission_failed
from parsers.formats.cnumbers import atoi, strtol
from parsers.options import Option
from parsers.platforms.target_names import CONTRACT_PROFILES, TARGET_NAMES
from parsers.platforms.platform_names import EXPORT_PLATFORMS
from parsers.values.acctg_freq import task_interval

#: Slurm's NICE_OFFSET - 3: the largest --nice adjustment.
NICE_LIMIT = 0x80000000 - 3
MAIL_TYPES = (
    "NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
    "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS",
)


def _invalid(option: Option) -> SlurmInputError:
    return SlurmInputError(f"Invalid --{option.long} specification")


def _flag(option: Option, raw: Optional[str]) -> object:
    return True if option.const is None else option.const


def _string(option: Option, raw: Optional[str]) -> object:
    return raw if raw is not None else ""


def parse_int(name: str, raw: Optional[str], positive: bool) -> int:
    """Slurm's ``parse_int``: ``strtol(raw, &end, 10)`` with nothing after the number (C
    blanks and a sign may precede it; ASCII digits only), >= 0, > 0 when ``positive``, below
    INT_MAX. Failures exit 1."""
    value, rest = strtol(raw or "")
    if rest or value < 0 or (positive and value == 0):
        raise SlurmInputError(f'Invalid numeric value "{raw}" for {name}.',
                              exit_code=EXIT_SUBMIT_ERROR)
    if value >= 2**31 - 1:
        raise SlurmInputError(f"Numeric argument ({value}) too large for {name}.",
                              exit_code=EXIT_SUBMIT_ERROR)
    return value


def _ascii_decimal(text: str) -> Optional[int]:
    """``text`` as a whole number of ASCII digits only (no sign, blank, ``_`` or other
    script's digits, all of which Python's ``int`` accepts), else None."""
    if text and all("0" <= char <= "9" for char in text):
        return int(text)
    return None


#: The name Slurm's ``parse_int`` call gives an option in its message, where not ``--<long>``.
_PARSE_INT_NAMES = {"immediate": "immediate"}


def _int(option: Option, raw: Optional[str]) -> object:
    if raw is None and option.arg == "optional":
        return 1
    return parse_int(f"--{option.long}", raw, positive=True)


def _int0(option: Option, raw: Optional[str]) -> object:
    if raw is None and option.arg == "optional":
        return 1
    name = _PARSE_INT_NAMES.get(option.long, f"--{option.long}")
    return parse_int(name, raw, positive=False)


def _time(option: Option, raw: Optional[str]) -> object:
    from parsers.values.time import parse_time_limit_min

    try:
        return parse_time_limit_min(raw or "")
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _memory(option: Option, raw: Optional[str]) -> object:
    from parsers.values.memory import parse_memory_mb

    try:
        return parse_memory_mb(raw or "")
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _nodes(option: Option, raw: Optional[str]) -> object:
    from parsers.values.nodes import parse_node_range

    try:
        return parse_node_range(raw or "")
    except ValueSyntaxError as e:
        if str(e).startswith("Maximum node count"):
            raise SlurmInputError(str(e)) from e
        raise SlurmInputError(f'"{raw}" is not a valid node count') from e


def _gres(option: Option, raw: Optional[str]) -> object:
    from parsers.values.gres import parse_gres

    try:
        return parse_gres(raw or "")
    except ValueSyntaxError as e:
        raise submission_failed("Invalid generic resource (gres) specification") from e


def _gpus(option: Option, raw: Optional[str]) -> object:
    from parsers.values.gres import parse_gpu_counts

    try:
        return parse_gpu_counts(raw or "")
    except ValueSyntaxError as e:
        raise submission_failed("Invalid generic resource (gres) specification") from e


def _array(option: Option, raw: Optional[str]) -> object:
    from parsers.values.array import parse_array

    try:
        return parse_array(raw or "")
    except ValueSyntaxError as e:
        raise submission_failed("Invalid job array specification") from e


def _dependency(option: Option, raw: Optional[str]) -> object:
    from parsers.values.dependency import parse_dependency

    try:
        return parse_dependency(raw or "")
    except ValueSyntaxError as e:
        raise submission_failed("Job dependency problem") from e


def _hostlist(option: Option, raw: Optional[str]) -> object:
    """Node names; a value containing ``/`` names a file and is kept as text for the CLI."""
    text = raw or ""
    if "/" in text:
        return ("@file", text)
    from parsers.values.hostlist import expand_hostlist

    try:
        return tuple(expand_hostlist(text))
    except ValueSyntaxError as e:
        raise SlurmInputError("Invalid node list specified", exit_code=EXIT_SUBMIT_ERROR) from e


def _filename(option: Option, raw: Optional[str]) -> object:
    from parsers.values.filename import parse_step_io

    text = raw or ""
    try:
        parse_step_io(text)
    except ValueSyntaxError as e:
        raise _invalid(option) from e
    return text


def _export(option: Option, raw: Optional[str]) -> object:
    from parsers.values.export import parse_export

    try:
        return parse_export(raw or "")
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _signal(option: Option, raw: Optional[str]) -> object:
    from parsers.values.signal import parse_signal

    try:
        return parse_signal(raw or "")
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _begin(option: Option, raw: Optional[str]) -> object:
    """``parse_time``'s own line (``Invalid time specification (pos=0): bogus``), when it
    prints one, comes before the option's ``Invalid --begin specification``."""
    from parsers.values.begin import TimeSpecError, parse_begin

    try:
        return parse_begin(raw or "")
    except TimeSpecError as e:
        raise _invalid(option).after(e.slurm_line) from e
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _distribution(option: Option, raw: Optional[str]) -> object:
    from parsers.values.distribution import parse_distribution

    try:
        return parse_distribution(raw or "")
    except ValueSyntaxError as e:
        raise _invalid(option) from e


def _exclusive(option: Option, raw: Optional[str]) -> object:
    """``--exclusive[=user|mcs|topo|oversubscribe]`` → the sharing mode Slurm records."""
    modes = {"": "node", "exclusive": "node", "allocation": "node", "user": "user",
             "mcs": "mcs", "topo": "topo", "oversubscribe": "oversubscribe"}
    mode = modes.get((raw or "").lower())
    if mode is None:
        raise _invalid(option)
    return mode


def _yesno(option: Option, raw: Optional[str]) -> object:
    answer = (raw or "").lower()
    if answer not in ("yes", "no"):
        raise _invalid(option)
    return answer == "yes"


def ascii_upper(text: str) -> str:
    """``text`` with only ``a``-``z`` upper-cased, as C's ``toupper`` in the C locale (which
    ``strcasecmp`` compares with): Python's ``upper`` also maps ``ſ`` to ``S``, ``ı`` to ``I``…"""
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


def _mail_type(option: Option, raw: Optional[str]) -> object:
    """``parse_mail_type``: ``strtok`` on commas (empty items vanish), each item compared
    case-insensitively (ASCII) with the known types, unknown items skipped, ``NONE`` ends the
    list with nothing; invalid only when no item is known (real 22.05: ``bogus,end`` is END,
    `` end`` is invalid)."""
    kinds = []
    for part in (raw or "").split(","):
        kind = ascii_upper(part)
        if kind == "NONE":
            return ("NONE",)
        if kind in MAIL_TYPES and kind not in kinds:
            kinds.append(kind)
    if not kinds:
        raise _invalid(option)
    return tuple(kinds)


def _acctg_freq(option: Option, raw: Optional[str]) -> object:
    """Checked as Slurm checks it (:mod:`parsers.values.acctg_freq`), kept as given."""
    task_interval(raw or "")
    return raw


def _open_mode(option: Option, raw: Optional[str]) -> object:
    first = (raw or " ")[0].lower()
    if first not in "at":
        raise _invalid(option)
    return "append" if first == "a" else "truncate"


def _requeue(option: Option, raw: Optional[str]) -> object:
    if raw and raw.lower() != "expedite":
        raise _invalid(option)
    return True


def _no_kill(option: Option, raw: Optional[str]) -> object:
    value = (raw or "set").lower()
    if value not in ("set", "off", "no"):
        raise _invalid(option)
    return value == "set"


def _nice(option: Option, raw: Optional[str]) -> object:
    """``arg_set_nice``: ``strtoll(arg, NULL, 10)`` — the leading number, 0 when there is
    none (``--nice=--5``, ``--nice=x``), 100 without an argument."""
    value = 100 if raw is None else strtol(raw)[0]
    if abs(value) > NICE_LIMIT:
        raise SlurmInputError(f"Invalid --nice value, out of range (+/- {NICE_LIMIT})")
    return value


def _wait_all_nodes(option: Option, raw: Optional[str]) -> object:
    value = parse_int("--wait-all-nodes", raw, positive=False)
    if value > 1:
        raise _invalid(option)
    return value


#: TRES a task cannot ask for, in the order ``_validate_tres_per_task`` tests them; each
#: matches any name it begins (case-insensitively: ``memory=1`` is refused as ``mem``).
NOT_PER_TASK = ("mem", "energy", "node", "billing", "fs", "vmem", "pages", "bb")


def _tres(option: Option, raw: Optional[str]) -> object:
    """``--tres-per-task=cpu:4,gres/gpu:1`` → ``(("cpu", 4), ("gres/gpu", 1))``.

    TRES a task cannot have are fatal as in ``_validate_tres_per_task`` (whatever their
    count); a cpu count that is not a positive number fails as 26.05's
    ``_set_tres_per_task_from_sibling_opt_internal`` does, with ``atoi`` of the text."""
    names = [item.lower() for item in (raw or "").split(",")]
    for bad in NOT_PER_TASK:
        if any(name.startswith(bad) for name in names):
            raise fatal(f"Invalid TRES for --tres-per-task: {bad}")
    parts = []
    for item in (raw or "").split(","):
        name, sep, count = item.replace("=", ":").rpartition(":")
        if sep and name.lower() == "cpu" and atoi(count) <= 0:
            raise fatal(f"Invalid --tres-per-task=cpu={atoi(count)}")
        value = _ascii_decimal(count)
        if not sep or not name or value is None:
            raise _invalid(option)
        parts.append((name.lower(), value))
    return tuple(parts)


def _mounts(option: Option, raw: Optional[str]) -> object:
    """pyxis ``SRC[:DST[:FLAGS]][,...]`` → ``((src, dst, flags), ...)``."""
    mounts = []
    for item in (raw or "").split(","):
        fields = item.split(":")
        if not fields[0] or len(fields) > 3:
            raise _invalid(option)
        src = fields[0]
        dst = fields[1] if len(fields) > 1 and fields[1] else src
        flags = fields[2] if len(fields) > 2 else ""
        mounts.append((src, dst, flags))
    return tuple(mounts)


def _k8s_target(option: Option, raw: Optional[str]) -> object:
    if raw not in TARGET_NAMES:
        raise SlurmInputError(
            f"Invalid --k8s-target specification: {raw} (one of {', '.join(TARGET_NAMES)})")
    return raw


def _k8s_contract(option: Option, raw: Optional[str]) -> object:
    if raw not in CONTRACT_PROFILES:
        raise SlurmInputError(f"Invalid --k8s-contract specification: {raw} (one of "
                              f"{', '.join(CONTRACT_PROFILES)})")
    return raw


def _k8s_export(option: Option, raw: Optional[str]) -> object:
    if raw not in EXPORT_PLATFORMS:
        names = ", ".join(EXPORT_PLATFORMS)
        raise SlurmInputError(f"Invalid --k8s-export specification: {raw} (one of {names})")
    return raw


#: Oldest Kubernetes minor (1.x) sbatch-k8s renders for: Indexed Jobs with pod hostnames.
MIN_KUBERNETES_MINOR = 24
_KUBERNETES_VERSION = re.compile(r"^v?1\.(0|[1-9][0-9]{0,2})(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?$")
#: ``--k8s-print=`` values: everything, or the job's objects without the runtime ConfigMap.
K8S_PRINT_OBJECTS = "objects"


def _k8s_print(option: Option, raw: Optional[str]) -> object:
    """``--k8s-print`` (or ``=all``): True; ``--k8s-print=objects``: ``"objects"``."""
    if raw is None or raw == "all":
        return True
    if raw == K8S_PRINT_OBJECTS:
        return K8S_PRINT_OBJECTS
    raise SlurmInputError(f"Invalid --k8s-print specification: {raw} (all or objects)")


def _k8s_version(option: Option, raw: Optional[str]) -> object:
    """``1.29``, ``v1.29.3``, ``1.30.1-gke.100`` → ``"1.29"``: only the minor matters."""
    found = _KUBERNETES_VERSION.match(raw or "")
    if not found:
        raise SlurmInputError(f"Invalid --k8s-kubernetes-version specification: {raw} "
                              "(a Kubernetes version such as 1.29)")
    minor = int(found.group(1))
    if minor < MIN_KUBERNETES_MINOR:
        raise SlurmInputError(f"Invalid --k8s-kubernetes-version specification: {raw} "
                              f"(Kubernetes 1.{MIN_KUBERNETES_MINOR} or newer)")
    return f"1.{minor}"


def kubernetes_minor(version: str) -> int:
    """The minor number of a ``--k8s-kubernetes-version`` value (``"1.29"`` → 29)."""
    return int(version.split(".")[1])


def _count(option: Option, raw: Optional[str]) -> object:
    """``-v`` counts one; from SBATCH_DEBUG/SLURM_DEBUG the value is the count, read by
    ``arg_set_verbose`` with ``parse_int("--verbose", …)``."""
    return 1 if raw is None else parse_int("--verbose", raw, positive=False)


READERS: Dict[str, Callable[[Option, Optional[str]], object]] = {
    "flag": _flag, "string": _string, "int": _int, "int0": _int0, "time": _time,
    "memory": _memory, "nodes": _nodes, "gres": _gres, "gpus": _gpus, "array": _array,
    "dependency": _dependency, "hostlist": _hostlist, "filename": _filename, "export": _export,
    "signal": _signal, "begin": _begin, "distribution": _distribution,
    "exclusive": _exclusive, "yesno": _yesno, "mail_type": _mail_type,
    "acctg_freq": _acctg_freq, "open_mode": _open_mode, "requeue": _requeue,
    "no_kill": _no_kill, "nice": _nice,
    "wait_all_nodes": _wait_all_nodes, "tres": _tres, "mounts": _mounts,
    "k8s_target": _k8s_target, "k8s_print": _k8s_print, "k8s_version": _k8s_version,
    "k8s_export": _k8s_export, "k8s_contract": _k8s_contract,
    "count": _count,
}


def read_value(option: Option, raw: Optional[str]) -> object:
    """The typed value of ``option`` given ``raw`` (None for a flag or an absent optional)."""
    return READERS[option.kind](option, raw)


def env_flag_is_set(raw: str) -> bool:
    """How ``slurm_process_option`` reads a flag option from the environment: empty,
    ``yes`` (any case) or ``strtol(raw, &end, 10) != 0`` with nothing after the number sets
    it; anything else (``no``, ``0``, ``1_0``, ``'1 '``, other scripts' digits) resets it."""
    if raw == "" or raw.lower() == "yes":
        return True
    value, rest = strtol(raw)
    return value != 0 and rest == ""


__all__: Tuple[str, ...] = ("READERS", "read_value", "parse_int", "env_flag_is_set")
