"""Our environment variables: every name the code spells is in the one table, none carries a
prefix Slurm's commands take for their input (which tools strip), and the former names of
the user's settings are still read."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from parsers.own_variables import (FORMER_PREFIX, LOGIN, PREFIX, VARIABLES,
                                   adopt_former_names, former_name, names_of)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for d in ("parsers", "translators", "sbatch_k8s", "bin")
           for p in (ROOT / d).rglob("*") if p.is_file() and p.suffix in (".py", "")]
SLURM_INPUT_PREFIXES = ("SBATCH_", "SRUN_", "SALLOC_", "SLURM_")


def spelled(pattern: str) -> set:
    found = set()
    for path in SOURCES:
        found |= set(re.findall(pattern, path.read_text(errors="replace")))
    return found


def test_every_name_in_the_code_is_in_the_table() -> None:
    names = spelled(r"\b" + PREFIX + r"[A-Z0-9_]*[A-Z0-9]\b")
    # a prefix of names (``SBATCHK8S_MPIJOB_``) is no name
    unknown = {n for n in names if n not in VARIABLES
               and not any(v.startswith(n + "_") for v in VARIABLES)}
    assert not unknown, f"spelled in the code but not in parsers.own_variables: {unknown}"


def test_no_name_takes_a_slurm_input_prefix() -> None:
    assert not [n for n in VARIABLES if n.startswith(SLURM_INPUT_PREFIXES)]
    assert not PREFIX.startswith(SLURM_INPUT_PREFIXES)
    # the former prefix is spelled only where it is read for the user's settings
    former = [p for p in SOURCES if FORMER_PREFIX in p.read_text(errors="replace")]
    assert {p.name for p in former} <= {"own_variables.py", "job_description.py"}, former


def test_former_names_of_login_settings_are_read() -> None:
    environ = {"SBATCH_K8S_STATE_DIR": "/old", "SBATCH_K8S_CONFIG": "/old.toml",
               "SBATCHK8S_CONFIG": "/new.toml", "SBATCH_K8S_JOB_DIR": "/job"}
    assert adopt_former_names(environ) == ["SBATCHK8S_STATE_DIR"]
    assert environ["SBATCHK8S_STATE_DIR"] == "/old"
    assert environ["SBATCHK8S_CONFIG"] == "/new.toml"          # the new name wins
    assert "SBATCHK8S_JOB_DIR" not in environ                  # not a user's setting
    assert former_name("SBATCHK8S_DEBUG") == "SBATCH_K8S_DEBUG"
    assert "SBATCHK8S_STATE_DIR" in names_of(LOGIN)


def test_a_command_honours_a_former_name(tmp_path: Path) -> None:
    """``SBATCH_K8S_BACKEND`` with a bad value is still read: the command says so in the
    new name's words."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SBATCH_K8S_BACKEND": "nonsense",
           "SBATCHK8S_SERVER": "0", "SBATCHK8S_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, str(ROOT / "bin" / "squeue")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "SBATCHK8S_BACKEND=nonsense" in done.stderr, done.stderr
