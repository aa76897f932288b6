"""The runtime zipapp that pods run: ``python3 /opt/sbatch-k8s/runtime.pyz …``.

It holds ``parsers`` (with its grammars), ``sbatch_k8s/runtime`` and the ``lark`` package, built
deterministically (sorted names, fixed timestamps and modes) so the same sources always give
the same bytes — and so the same content hash, which names the shared ConfigMap
``sbatch-k8s-runtime-<hash>`` (:func:`translators.objects.runtime_config_map`). Its
``__main__`` refuses interpreters older than 3.8 with one clear line before any modern syntax
is parsed, then imports the runtime from an extracted copy whose bytecode is kept
(:mod:`sbatch_k8s.runtime.warm.bytecode_cache`; named by :func:`source_hash`, which the
``__main__`` holds, so the bundle's bytes stay a function of the sources).
"""

from __future__ import annotations

import hashlib
import functools
import io
import os
import zipfile
from typing import Iterator, List, Sequence, Tuple

#: Largest ConfigMap payload we allow ourselves (the API server's limit is 1 MiB).
MAX_BUNDLE_BYTES = 1024 * 1024 - 64 * 1024
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)

# Parsed by any Python (2.7 included): no f-strings, no annotations. ``%(source_hash)s``
# names the extracted copy (:mod:`sbatch_k8s.runtime.warm.bytecode_cache`).
_MAIN = """import os, sys
if sys.version_info < (3, 8):
    sys.stderr.write("sbatch-k8s: error: python3 in this image is %%d.%%d; the sbatch-k8s "
                     "runtime needs Python >= 3.8\\n" %% sys.version_info[:2])
    sys.exit(127)
from sbatch_k8s.runtime.warm.bytecode_cache import use_bytecode_cache
use_bytecode_cache(os.path.dirname(os.path.abspath(__file__)), "%(source_hash)s")
from sbatch_k8s.runtime.main import main
main()
"""


def _package_dir(name: str) -> str:
    module = __import__(name)
    return os.path.dirname(os.path.abspath(module.__file__))


def _walk(root: str, prefix: str, suffixes: Tuple[str, ...]) -> Iterator[Tuple[str, str]]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(suffixes):
                path = os.path.join(directory, name)
                yield prefix + os.path.relpath(path, root).replace(os.sep, "/"), path


def bundle_files() -> List[Tuple[str, str]]:
    """``(name in the zip, file on disk)`` for everything the runtime ships, sorted."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = list(_walk(_package_dir("parsers"), "parsers/", (".py", ".lark")))
    files += list(_walk(os.path.join(here, "runtime"), "sbatch_k8s/runtime/", (".py",)))
    files.append(("sbatch_k8s/__init__.py", os.path.join(here, "__init__.py")))
    files += list(_walk(_package_dir("lark"), "lark/", (".py", ".lark")))
    return sorted(files)


def source_hash(entries: Sequence[Tuple[str, bytes]]) -> str:
    """16 hex digits of the SHA-256 over every shipped file's name and bytes: the name of
    the directory pods extract the bundle into (the bundle itself holds it, so it cannot be
    the bundle's own hash)."""
    digest = hashlib.sha256()
    for name, data in sorted(entries):
        digest.update(b"%d:%s\0%d:" % (len(name), name.encode(), len(data)))
        digest.update(data)
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def build_bundle() -> bytes:
    """The zipapp's bytes; identical for identical sources. Built once per process (the
    command server builds it at start and its children inherit it; a source change restarts
    the server)."""
    entries: List[Tuple[str, bytes]] = []
    for name, path in bundle_files():
        with open(path, "rb") as f:
            entries.append((name, f.read()))
    main = _MAIN % {"source_hash": source_hash(entries)}
    entries.append(("__main__.py", main.encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    data = buffer.getvalue()
    if len(data) > MAX_BUNDLE_BYTES:
        raise RuntimeError(f"runtime bundle is {len(data)} bytes; the limit is "
                           f"{MAX_BUNDLE_BYTES}")
    return data


def bundle_hash(data: bytes) -> str:
    """12 hex digits of the bundle's SHA-256: the ConfigMap name suffix."""
    return bundle_digest(data)[:12]


def bundle_digest(data: bytes) -> str:
    """The bundle's whole SHA-256 (hex): what every pod checks its runtime against."""
    return hashlib.sha256(data).hexdigest()
