"""--signal and scancel --signal: proc_args.c's get_signal_opts and sig_name2num."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.signal import (
    SIGNAL_NUMBERS,
    SignalSpec,
    parse_signal,
    signal_name,
    signal_number,
)

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, spec",
    [
        ("USR1", SignalSpec(10, "USR1", 60, False, False)),  # sig_time defaults to 60
        ("USR2@180", SignalSpec(12, "USR2", 180, False, False)),  # submitit
        ("B:USR1", SignalSpec(10, "USR1", 60, True, False)),
        ("b:usr1@0", SignalSpec(10, "USR1", 0, True, False)),
        ("BUSR1", SignalSpec(10, "USR1", 60, True, False)),  # the colon is optional
        ("R:10", SignalSpec(10, "USR1", 60, False, True)),
        ("RB:TERM@120", SignalSpec(15, "TERM", 120, True, True)),
        ("BR:TERM", SignalSpec(15, "TERM", 60, True, True)),
        (":USR1", SignalSpec(10, "USR1", 60, False, False)),
        ("SIGUSR2", SignalSpec(12, "USR2", 60, False, False)),
        ("sigterm", SignalSpec(15, "TERM", 60, False, False)),
        ("USR1@", SignalSpec(10, "USR1", 0, False, False)),  # strtol of "" is 0
        ("10@65535", SignalSpec(10, "USR1", 65535, False, False)),
        ("33", SignalSpec(33, "33", 60, False, False)),
        ("XCPU", SignalSpec(24, "XCPU", 60, False, False)),
    ],
)
def test_parse_signal(text, spec):
    assert parse_signal(text) == spec


@pytest.mark.parametrize(
    "text",
    ["", "0", "65536", "WINCH", "SIGWINCH", "B:", "@60", "USR1@-1", "USR1@65536", "USR1@x",
     "X:USR1", "usr1 ", " USR1", "USR", "USR1USR2", "B::USR1", "-1"],
)
def test_parse_signal_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_signal(text)


@pytest.mark.parametrize(
    "text, number",
    [("USR1", 10), ("SIGTERM", 15), ("kill", 9), ("10", 10), ("Hup", 1), ("CONT", 18), ("9", 9)],
)
def test_signal_number(text, number):
    assert signal_number(text) == number


@pytest.mark.parametrize("text", ["B:USR1", "USR1@5", "WINCH", "0", "", "R"])
def test_signal_number_rejects(text):
    with pytest.raises(ValueSyntaxError):
        signal_number(text)


def test_signal_name():
    assert signal_name(10) == "USR1" and signal_name(64) == "64"


@PROPERTY
@given(st.sampled_from(sorted(SIGNAL_NUMBERS)), st.sampled_from(["", "B:", "R:", "RB:", "b"]),
       st.one_of(st.none(), st.integers(0, 65535)), st.booleans())
def test_names_flags_and_times(name, flags, seconds, sig_prefix):
    text = f"{flags}{'SIG' if sig_prefix else ''}{name}"
    text += "" if seconds is None else f"@{seconds}"
    spec = parse_signal(text)
    assert spec.signal_number == SIGNAL_NUMBERS[name] and spec.signal_name == name
    assert spec.seconds_before_end == (60 if seconds is None else seconds)
    assert spec.batch_only == ("B" in flags.upper())
    assert spec.reservation_overlap == ("R" in flags)


@PROPERTY
@given(st.text(alphabet="RBrb:SIGUSR12TERMKIL@0123456789", max_size=12) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    for parse in (parse_signal, signal_number):
        try:
            parse(text)
        except ValueSyntaxError:
            pass
