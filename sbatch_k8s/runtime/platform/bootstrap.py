"""The one-line command for platforms whose form takes one line.

The runtime zipapp (about 400 kB) is far too long to embed in a command line (base64 would
pass Linux's 128 kB limit for one argument, and no form takes it), and platform mode fetches
nothing from the network: the zipapp must already be in the container — in the image, or on
the volume every container mounts (a platform's NAS, ``/mnt/user/…``, ``/workspace/…``).
The line only finds it and a Python, says so in one line when either is missing, and starts
``runtime run``. It obeys the strictest form's rules (the task-training platform's): it
starts with an executable and is one statement (``bash -c '…'``), and does not start with
``python``, which that platform's PyTorch mode would wrap in ``torch.distributed.launch``
(starting the runtime once per GPU).
"""

from __future__ import annotations

import shlex
from typing import List, Optional, Sequence

MISSING_RUNTIME = ("sbatch-k8s: error: run: no runtime at {path} in this container (write it "
                   "there with: sbatch-k8s runtime -o FILE, in the image or on a volume every "
                   "container mounts)")
MISSING_PYTHON = "sbatch-k8s: error: run: no python3 in this container (the runtime needs 3.8+)"


def double_quoted(text: str) -> str:
    """``text`` as one shell word in double quotes (no single quote needed, so the whole
    line fits in ``bash -c '…'``)."""
    for char in ("\\", '"', "$", "`"):
        text = text.replace(char, "\\" + char)
    return f'"{text}"'


def bootstrap_line(runtime_path: str, script: str, script_args: Sequence[str] = (),
                   contract: Optional[str] = None, chdir: Optional[str] = None,
                   verbose: bool = False) -> str:
    """``bash -c '…'`` running ``python3 <runtime_path> run [options] script args…``."""
    run: List[str] = ["run"]
    if contract:
        run += ["--contract", contract]
    if verbose:
        run.append("-v")
    run += ["--", script] + list(script_args)
    steps = []
    if chdir:
        steps.append(f"cd {double_quoted(chdir)} || exit 1")
    steps += [
        f"f={double_quoted(runtime_path)}",
        f'[ -r "$f" ] || {{ echo {double_quoted(MISSING_RUNTIME.format(path=runtime_path))} '
        ">&2; exit 1; }",
        "p=$(command -v python3 || command -v python) || "
        f"{{ echo {double_quoted(MISSING_PYTHON)} >&2; exit 1; }}",
        'exec "$p" "$f" ' + " ".join(_word(word) for word in run),
    ]
    inner = "; ".join(steps)
    return f"bash -c '{inner}'" if "'" not in inner else "bash -c " + shlex.quote(inner)


def _word(word: str) -> str:
    """A plain word as is, anything else double-quoted."""
    plain = word and all(c.isalnum() or c in "-_./=:,+@%" for c in word)
    return word if plain else double_quoted(word)
