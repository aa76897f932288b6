"""--export: sbatch's env_merge_filter and srun's _build_user_env."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.export import ExportSpec, apply_export, parse_export

PROPERTY = settings.get_profile("values")
CALLER = {"EDITOR": "emacs", "PATH": "/bin", "HOME": "/home/a", "SLURM_CONF": "/etc/slurm.conf",
          "SLURMD_X": "1", "_SLURM_SPANK_OPTION_pyxis": "x"}
SLURM_ONLY = {"SLURM_CONF": "/etc/slurm.conf", "SLURMD_X": "1", "_SLURM_SPANK_OPTION_pyxis": "x"}


@pytest.mark.parametrize(
    "text, mode, names, assignments, get_user_env",
    [
        ("ALL", "ALL", (), (), False),
        ("all", "ALL", (), (), False),
        ("NONE", "NONE", (), (), True),
        ("NIL", "NIL", (), (), False),
        ("EDITOR,ARG1=test", "NONE", ("EDITOR",), (("ARG1", "test"),), True),  # sbatch.1
        ("ALL,EDITOR=/bin/emacs", "ALL", (), (("EDITOR", "/bin/emacs"),), True),
        ("A=b=c", "NONE", (), (("A", "b=c"),), True),  # value keeps later '='
        ("'A=1,2',B", "NONE", ("B",), (("A", "1,2"),), True),  # quotes hide commas
        ('"A=1,2"', "NONE", (), (("A", "1,2"),), True),
        ('A="x,y"', "NONE", (), (("A", '"x,y"'),), True),  # inner quotes stay
        ("A=,B", "NONE", ("B",), (("A", ""),), True),
        ("ARG=1,,", "NONE", (), (("ARG", "1"),), True),
        ("", "NONE", (), (), True),
        ("NONE,PATH", "NONE", ("NONE", "PATH"), (), True),  # NONE in a list is a name
    ],
)
def test_parse_export(text, mode, names, assignments, get_user_env):
    spec = parse_export(text)
    assert (spec.mode, spec.names, spec.assignments, spec.get_user_env) == (
        mode, names, assignments, get_user_env)


@pytest.mark.parametrize("text", ['"unbalanced', "A='x", "=x", "'a'b'"])
def test_parse_export_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_export(text)


@pytest.mark.parametrize(
    "text, launcher, expected",
    [
        ("ALL", "sbatch", CALLER),
        ("NONE", "sbatch", SLURM_ONLY),  # only SLURM* and SPANK option variables
        ("NIL", "sbatch", SLURM_ONLY),
        ("EDITOR,ARG1=test", "sbatch", {"EDITOR": "emacs", "ARG1": "test", **SLURM_ONLY}),
        ("MISSING,ARG1=test", "sbatch", {"ARG1": "test", **SLURM_ONLY}),
        # sbatch applies items in order: the explicit value after ALL wins ...
        ("ALL,EDITOR=/bin/vi", "sbatch", {**CALLER, "EDITOR": "/bin/vi"}),
        ("EDITOR=/bin/vi,ALL", "sbatch", CALLER),
        # ... srun merges the caller's environment last (the man pages' wording)
        ("ALL,EDITOR=/bin/vi", "srun", CALLER),
        ("ALL,NEW=1", "srun", {**CALLER, "NEW": "1"}),
        ("SLURM_CONF=/x", "sbatch", SLURM_ONLY),  # SLURM* always come from the caller
        ("PATH,NONE,EDITOR", "srun", {"PATH": "/bin", **SLURM_ONLY}),  # srun stops at NONE
        ("PATH,NONE,EDITOR", "sbatch", {"PATH": "/bin", "EDITOR": "emacs", **SLURM_ONLY}),
    ],
)
def test_apply_export(text, launcher, expected):
    assert apply_export(parse_export(text), CALLER, launcher) == expected


def test_spec_value():
    assert parse_export("EDITOR,ARG1=test") == ExportSpec(
        "NONE", ("EDITOR",), (("ARG1", "test"),), ("EDITOR", "ARG1=test"), True)


@PROPERTY
@given(st.dictionaries(st.text(alphabet="ABCXYZ_", min_size=1, max_size=6),
                       st.text(alphabet="abz09=", max_size=6), max_size=5))
def test_assignments_round_trip(assignments):
    text = ",".join(f"{k}={v}" for k, v in assignments.items())
    spec = parse_export(text)
    assert dict(spec.assignments) == assignments
    assert apply_export(spec, {}) == assignments


@PROPERTY
@given(st.text(alphabet="AB=,'\" x", max_size=14) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        spec = parse_export(text)
    except ValueSyntaxError:
        return
    assert spec.mode in ("ALL", "NONE", "NIL")
