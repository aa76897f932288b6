"""Where per-user state lives. Standard library only and import-cheap: the command client
(:mod:`sbatch_k8s.fastpath`) needs it before anything else is loaded."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds this module must not spend
    from typing import Mapping


def state_dir(environ: Mapping[str, str]) -> str:
    """``$SBATCHK8S_STATE_DIR``, else ``$XDG_STATE_HOME/sbatch-k8s``, else
    ``~/.local/state/sbatch-k8s``: the job database, job directories, the command server."""
    if environ.get("SBATCHK8S_STATE_DIR"):
        return environ["SBATCHK8S_STATE_DIR"]
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(base, "sbatch-k8s")


def state_dir_source(environ: Mapping[str, str]) -> str:
    """How the state directory was chosen, for messages: the variable that named it."""
    if environ.get("SBATCHK8S_STATE_DIR"):
        return "SBATCHK8S_STATE_DIR"
    return "XDG_STATE_HOME" if environ.get("XDG_STATE_HOME") else "HOME"


def make_state_dir(environ: Mapping[str, str]) -> str:
    """The state directory, created (mode 0700) if missing; raises
    :class:`~sbatch_k8s.operation_errors.ConfigurationError` saying what is wrong with which
    path."""
    from sbatch_k8s.operation_errors import ConfigurationError

    directory = state_dir(environ)
    where = f"state directory {directory} (from {state_dir_source(environ)})"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except FileExistsError as e:
        raise ConfigurationError(f"{where}: {e.filename} exists and is not a directory") from e
    except NotADirectoryError as e:
        raise ConfigurationError(f"{where}: a part of the path is a file, not a "
                                 "directory") from e
    except OSError as e:
        raise ConfigurationError(f"{where}: cannot create {e.filename or directory}: "
                                 f"{e.strerror}") from e
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{where}: not writable by uid {os.getuid()}")
    return directory
