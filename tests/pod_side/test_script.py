"""Reading batch scripts as sbatch does (reference/slurm.md §1.1, §1.2, §10)."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.script import OLD_MAGIC_ERROR, check_script, directive_words, find_steps, wrap_command


@pytest.mark.parametrize("text, lines, code", [
    ("", ["Batch script is empty!"], 1),
    ("  \n\t\n", ["Batch script contains only whitespace!"], 1),
    ("echo hello\n", ["This does not look like a batch script.  The first",
                      "line must start with #! followed by the path to an interpreter.",
                      "For instance: #!/bin/sh"], 1),
    ("#!/bin/sh\necho \0\n", ["The Slurm controller does not allow scripts that",
                              "contain a NULL character '\\0'."], 1),
    ("#!/bin/sh\r\necho\r\n", ["Batch script contains DOS line breaks (\\r\\n)",
                               "instead of expected UNIX line breaks (\\n)."], 1),
    # Anywhere in the script, not only on the first line (observed on 22.05).
    ("#!/bin/sh\n#SBATCH --bogus\ntrue\r\n", ["Batch script contains DOS line breaks (\\r\\n)",
                                             "instead of expected UNIX line breaks (\\n)."], 1),
    # xstring_is_whitespace: C's isspace, up to the first NUL.
    (" \n\0#!/bin/sh\n", ["Batch script contains only whitespace!"], 1),
    ("\x1c\n", ["This does not look like a batch script.  The first",
                "line must start with #! followed by the path to an interpreter.",
                "For instance: #!/bin/sh"], 1),
])
def test_script_checks(text, lines, code):
    with pytest.raises(SlurmInputError) as e:
        check_script(text)
    assert list(e.value.lines) == lines
    assert e.value.exit_code == code
    assert e.value.render("sbatch").splitlines() == [f"sbatch: error: {x}" for x in lines]


@pytest.mark.parametrize("text", ["#!/bin/bash\necho hi\n", "#!/bin/sh\nprintf 'a\\rb'\rx\n"])
def test_good_script_passes(text):
    """A lone carriage return is not a DOS line break."""
    check_script(text)


def test_wrap_builds_slurms_script():
    assert wrap_command("hostname") == (
        "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname\n")


def _words(text):
    words, sources, notes = directive_words(text, "job.sh")
    return list(words)


@pytest.mark.parametrize("text, words", [
    # Several options on one line; '#' ends a directive; no space needed after #SBATCH.
    ("#!/bin/sh\n#SBATCH -t 0:30:00 --exclusive --mem=0\n",
     ["-t", "0:30:00", "--exclusive", "--mem=0"]),
    ("#!/bin/sh\n#SBATCH --time=01:00:00   # one hour\n", ["--time=01:00:00"]),
    ("#!/bin/sh\n#SBATCH--time=24:00:00\n", ["--time=24:00:00"]),
    ("#!/bin/sh\n#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01\n",
     ["--container-image=nvcr.io"]),
    # Inert forms: ##SBATCH, indented #SBATCH, other comments, blank lines.
    ("#!/bin/sh\n##SBATCH --time=5\n  #SBATCH -N 3\n# comment\n\n#SBATCH -N 2\n", ["-N", "2"]),
    # Directives after the first command are not read.
    ("#!/bin/sh\n#SBATCH -N 2\necho hi\n#SBATCH -N 5\n", ["-N", "2"]),
    # Quoting groups, quotes removed; backslash escapes; no variable expansion.
    ("#!/bin/sh\n#SBATCH --job-name=\"my job\" --comment='a b'\n",
     ["--job-name=my job", "--comment=a b"]),
    ("#!/bin/sh\n#SBATCH --job-name=a\\ b --comment=x\\#y\n", ["--job-name=a b", "--comment=x#y"]),
    ("#!/bin/sh\n#SBATCH --output=$HOME/~/$(date).out\n", ["--output=$HOME/~/$(date).out"]),
    ("#!/bin/sh\n#SBATCH --comment=\"a # b\"\n", ["--comment=a # b"]),
    # #SLURM is read too (with Slurm's warning).
    ("#!/bin/sh\n#SLURM -N 2\n", ["-N", "2"]),
    # A hetjob separator after the first word is blanked, and the rest of the line with it.
    ("#!/bin/sh\n#SBATCH -N1 hetjob -n 2\n", ["-N1"]),
    ("#!/bin/sh\n#SBATCH -N1 PACKJOB\n#SBATCH -n 2\n", ["-N1", "-n", "2"]),
    # Only C's isspace separates words (get_argument, C locale).
    ("#!/bin/sh\n#SBATCH -J a\u00a0b\u2003c\x1cd\n", ["-J", "a\u00a0b\u2003c\x1cd"]),
    ("#!/bin/sh\n#SBATCH\x0b-N\x0c2\r\n", ["-N", "2"]),
    # A word that yields nothing ends the line: a trailing backslash, '', a backslash before
    # a tab.
    ("#!/bin/sh\n#SBATCH -N 2 \\\n#SBATCH -n 2\n", ["-N", "2", "-n", "2"]),
    ("#!/bin/sh\n#SBATCH -J '' -n 2\n#SBATCH -t 5\n", ["-J", "-t", "5"]),
    ("#!/bin/sh\n#SBATCH -J x\\\ty -n 2\n", ["-J", "x", "y", "-n", "2"]),
    ("#!/bin/sh\n#SBATCH -J \\\ty -n 2\n", ["-J"]),
    # Backslash escapes inside quotes too; an escaped quote or '#' is kept.
    ('#!/bin/sh\n#SBATCH --comment="a\\"b" -J \\#x\n', ['--comment=a"b', "-J", "#x"]),
])
def test_directive_words(text, words):
    assert _words(text) == words


@pytest.mark.parametrize("text, header", [
    # The header ends at a line whose first non-blank character is not '#'; blanks are C's.
    ("#!/bin/sh\n\u00a0#SBATCH -N 2\n#SBATCH -n 2\n", []),
    ("#!/bin/sh\n \t\x0b#SBATCH -N 2\n#SBATCH -n 2\n", ["-n", "2"]),
])
def test_header_ends_at_the_first_command(text, header):
    assert _words(text) == header


def test_sources_and_notes():
    text = "#!/bin/sh\n#SBATCH -N 2\n#SLURM --time=5\n#PBS -l nodes=2\necho hi\n#SBATCH -n 4\n"
    words, sources, notes = directive_words(text, "job.sh")
    assert sources[0].startswith("job.sh:2: ")
    assert sources[2].startswith("job.sh:3: ")
    messages = [n.message for n in notes]
    assert any(m.startswith("Change from #SLURM to #SBATCH") for m in messages)
    assert any("#PBS directives are not translated" in m for m in messages)
    assert any(n.location == "job.sh:6" for n in notes)


def test_old_magic_is_slurms_error_once_per_script():
    """sbatch's error() at the first #SLURM line (a flag per script), then it goes on."""
    text = "#!/bin/sh\n#SLURM -N 2\n#SBATCH -n 2\n#SLURM -t 5\ntrue\n"
    words, _, notes = directive_words(text, "job.sh")
    assert list(words) == ["-N", "2", "-n", "2", "-t", "5"]
    assert [(n.message, n.location, n.severity) for n in notes] == [
        (OLD_MAGIC_ERROR, None, "error")]
    assert OLD_MAGIC_ERROR == ("Change from #SLURM to #SBATCH in your script and verify the "
                               "options are valid in sbatch")


@pytest.mark.parametrize("line, message", [
    # get_argument shows the text it was called with: after #SBATCH and its blanks, or
    # from the end of the previous word (blanks included). Observed on 22.05.
    ('#SBATCH --job-name="abc', "job.sh: line 2: Unmatched `\"` in [--job-name=\"abc]"),
    ("#SBATCH --job-name='abc", "job.sh: line 2: Unmatched `'` in [--job-name='abc]"),
    ('#SBATCH -N1 --job-name="x', "job.sh: line 2: Unmatched `\"` in [ --job-name=\"x]"),
    ('#SBATCH   \t-N1 \t  --job-name="x  # y',
     "job.sh: line 2: Unmatched `\"` in [ \t  --job-name=\"x  # y]"),
    ("#SBATCH :", "job.sh: line 2: Unexpected `:` in [:]"),
    ("#SBATCH : -N 2", "job.sh: line 2: Unexpected `:` in [: -N 2]"),
    ("#SBATCH -N1 :", "job.sh: line 2: Unexpected `:` in [ :]"),
    ("#SBATCH:", "job.sh: line 2: Unexpected `:` in [:]"),
])
def test_directive_fatal_errors(line, message):
    with pytest.raises(SlurmInputError) as e:
        directive_words(f"#!/bin/sh\n{line}\n", "job.sh")
    assert e.value.render("sbatch") == f"sbatch: fatal: {message}\n"
    assert e.value.exit_code == 1


@pytest.mark.parametrize("lines, first", [
    # The #SLURM line was read (and its error printed) before the failing line.
    (["#SLURM -N 1", "#SBATCH :"], [f"sbatch: error: {OLD_MAGIC_ERROR}"]),
    (["#SBATCH -N 1", "#SLURM :"], [f"sbatch: error: {OLD_MAGIC_ERROR}"]),
    (['#SLURM --job-name="abc'], [f"sbatch: error: {OLD_MAGIC_ERROR}"]),
    # sbatch stops at the failing line: a later #SLURM is never read.
    (["#SBATCH :", "#SLURM -N 1"], []),
])
def test_old_magic_error_comes_before_a_later_failure(lines, first):
    text = "#!/bin/sh\n" + "".join(f"{line}\n" for line in lines)
    with pytest.raises(SlurmInputError) as e:
        directive_words(text, "job.sh")
    lines = e.value.render("sbatch").splitlines()
    assert lines[:-1] == first
    assert lines[-1].startswith("sbatch: fatal: job.sh: line ")


def test_find_steps():
    text = ("#!/bin/bash\n#SBATCH -N 2\n"
            "srun --label torchrun --nnodes \"$SLURM_NNODES\" \\\n   --nproc_per_node 8 train.py\n"
            "srun -N1 -n1 --container-image=nvcr.io#nvidia/pytorch:24.01 hostname &\n"
            "echo srun is a word here\n"
            "X=1 srun -n2 true && srun --overlap sleep 1\n"
            "# srun in a comment\n")
    steps = find_steps(text)
    assert [s.line_no for s in steps] == [3, 5, 7, 7]
    assert steps[0].options == (("label", None),)
    assert steps[0].command[:3] == ("torchrun", "--nnodes", "$SLURM_NNODES")
    assert steps[1].option("container-image") == "nvcr.io#nvidia/pytorch:24.01"
    assert steps[2].option("ntasks") == "2"
    assert steps[3].option("overlap") == ""
