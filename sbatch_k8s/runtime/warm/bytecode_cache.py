"""Bytecode that outlives one start of the runtime zipapp.

Python never writes bytecode for modules it imports from a zip file, so every
``python3 runtime.pyz …`` compiled every module it imports from source again (a few hundred
milliseconds for ``node`` or ``run``, more on a slow machine), and a job starts the runtime
again for each ``srun``/``scontrol``/``squeue`` its script runs. The zipapp's ``__main__``
therefore calls :func:`use_bytecode_cache` first: the bundle's files are extracted once into
``<cache root>/<source hash>/`` and imported from there, so the interpreter's own machinery
compiles each module once and keeps ``__pycache__/<module>.cpython-3X.pyc`` beside it: one
copy of the sources serves every Python version, each with its own bytecode.

The cache root is ``$SBATCHK8S_RUNTIME_CACHE`` if set (``0`` turns the cache off), else
``sbatch-k8s-runtime-<uid>`` in ``$TMPDIR`` (or ``/tmp``; in a pod that is the container's own,
writable even with a read-only root filesystem). It is used only when it is a real directory
of this user that nobody else may write (made so when missing): another user's files are
never imported. A source directory appears whole or not at all (extracted aside, then
renamed). Whenever anything fails, or bytecode writing is off (``-B``,
``PYTHONDONTWRITEBYTECODE``), the runtime imports from the zip as before.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Mapping, Optional

CACHE_VARIABLE = "SBATCHK8S_RUNTIME_CACHE"
OFF = "0"
#: Packages that were imported from the zip before the switch (this module's own).
_BOOTSTRAP_PACKAGES = ("sbatch_k8s",)


def cache_root(environ: Mapping[str, str]) -> Optional[str]:
    """The directory holding this user's extracted bundles; None when the cache is off."""
    given = environ.get(CACHE_VARIABLE)
    if given is not None:
        return None if given in ("", OFF) else given
    base = environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, f"sbatch-k8s-runtime-{os.geteuid()}")


def private_directory(path: str) -> bool:
    """Whether ``path`` is (now) a directory of this user that only it may write: created
    with mode 0700 when missing; never a symbolic link, never someone else's."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    info = os.lstat(path)
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
            and not info.st_mode & 0o022)


def _remove_tree(path: str) -> None:
    for directory, subdirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(directory, name))
        for name in subdirs:
            os.rmdir(os.path.join(directory, name))
    os.rmdir(path)


def extracted_sources(bundle: str, root: str, source_hash: str) -> str:
    """``root/<source_hash>``, extracted from the zip ``bundle`` unless already there."""
    target = os.path.join(root, source_hash)
    if os.path.isdir(target):
        return target
    import zipfile

    partial = os.path.join(root, f".{source_hash}.{os.getpid()}")
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(partial)
        os.rename(partial, target)
    except Exception:
        if os.path.isdir(partial):
            _remove_tree(partial)
        if not os.path.isdir(target):  # not another process winning the same race
            raise
    return target


def use_bytecode_cache(bundle: str, source_hash: str,
                       environ: Mapping[str, str] = os.environ) -> Optional[str]:
    """Import the runtime from its extracted copy (see the module docstring); the directory
    now first on ``sys.path``, or None when the zip stays in use."""
    root = cache_root(environ)
    if root is None or sys.dont_write_bytecode:
        return None
    try:
        if not private_directory(root):
            return None
        target = extracted_sources(bundle, root, source_hash)
    except Exception:  # a full disk, a damaged zip…: the zip itself still serves
        return None
    sys.path.insert(0, target)
    for name in list(sys.modules):
        if name.split(".")[0] in _BOOTSTRAP_PACKAGES:
            del sys.modules[name]
    return target
