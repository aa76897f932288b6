"""Where per-user state lives. Standard library only and import-cheap: the command client
(:mod:`sbatch_k8s.fastpath`) needs it before anything else is loaded."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds this module must not spend
    from typing import Mapping


def state_dir(environ: Mapping[str, str]) -> str:
    """``$SBATCH_K8S_STATE_DIR``, else ``$XDG_STATE_HOME/sbatch-k8s``, else
    ``~/.local/state/sbatch-k8s``: the job database, job directories, the command server."""
    if environ.get("SBATCH_K8S_STATE_DIR"):
        return environ["SBATCH_K8S_STATE_DIR"]
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(base, "sbatch-k8s")
