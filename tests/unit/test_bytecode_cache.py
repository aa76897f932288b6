"""The runtime zipapp keeps its bytecode: extracted once per bundle into a private cache,
compiled once per Python version, imported from there; the zip serves whenever the cache
cannot (off, not private, not writable, a damaged bundle)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest

from sbatch_k8s.runtime_bundle import build_bundle, source_hash
from tests.local.harness import find_python

NO_JOB = "sbatch-k8s: error: runtime node: cannot read the job description"
#: Prints where the runtime's modules come from after the bootstrap the zipapp runs.
PROBE = """import sys
sys.path.insert(0, sys.argv[1])
from sbatch_k8s.runtime.warm.bytecode_cache import use_bytecode_cache
print(use_bytecode_cache(sys.argv[1], sys.argv[2]))
import sbatch_k8s.runtime.main
print(sbatch_k8s.runtime.main.__file__)
"""


def _interpreters() -> List[str]:
    found = [find_python("3.8"), sys.executable]
    return [p for p in found if p]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bundle") / "runtime.pyz"
    path.write_bytes(build_bundle())
    return path


def _hash_of(bundle: Path) -> str:
    main = zipfile.ZipFile(bundle).read("__main__.py").decode()
    return main.split('use_bytecode_cache(')[1].split('"')[1]


def _env(cache: object) -> Dict[str, str]:
    return {"PATH": os.defpath, "SBATCHK8S_RUNTIME_CACHE": str(cache)}


def _probe(python: str, bundle: Path, cache: object) -> List[str]:
    done = subprocess.run([python, "-c", PROBE, str(bundle), _hash_of(bundle)],
                          env=_env(cache), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("python", _interpreters())
def test_bytecode_is_written_once_and_imported_from_the_cache(
        tmp_path: Path, bundle: Path, python: str) -> None:
    cache = tmp_path / "cache"
    runs = [subprocess.run([python, str(bundle), "node"], env=_env(cache), text=True,
                           capture_output=True, timeout=120) for _ in range(2)]
    for done in runs:
        assert done.returncode == 1 and done.stderr.startswith(NO_JOB), done.stderr
    sources = cache / _hash_of(bundle)
    tag = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"],
                         capture_output=True, text=True).stdout.strip()
    compiled = sources / "sbatch_k8s" / "runtime" / "agent" / "__pycache__" / f"node.{tag}.pyc"
    assert compiled.is_file()
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    first = compiled.stat().st_mtime_ns
    assert _probe(python, bundle, cache) == [
        str(sources), str(sources / "sbatch_k8s" / "runtime" / "main.py")]
    assert compiled.stat().st_mtime_ns == first  # read, not rewritten


def test_the_zip_serves_when_the_cache_is_off_or_not_private(tmp_path: Path,
                                                             bundle: Path) -> None:
    from_zip = ["None", f"{bundle}/sbatch_k8s/runtime/main.py"]
    assert _probe(sys.executable, bundle, "0") == from_zip
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    assert _probe(sys.executable, bundle, shared) == from_zip
    assert list(shared.iterdir()) == []
    link = tmp_path / "link"
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    link.symlink_to(private)
    assert _probe(sys.executable, bundle, link) == from_zip
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    assert _probe(sys.executable, bundle, unwritable / "cache") == from_zip


def test_a_damaged_bundle_leaves_nothing_half_extracted(tmp_path: Path, bundle: Path) -> None:
    from sbatch_k8s.runtime.warm.bytecode_cache import extracted_sources

    broken = tmp_path / "broken.pyz"
    broken.write_bytes(bundle.read_bytes()[:100000])
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    with pytest.raises(Exception):
        extracted_sources(str(broken), str(root), "h")
    assert list(root.iterdir()) == []


def test_the_source_hash_follows_the_sources_and_the_bundle_stays_deterministic() -> None:
    entries = [("a.py", b"x = 1\n"), ("b/c.py", b"")]
    assert source_hash(entries) == source_hash(list(reversed(entries)))
    assert source_hash(entries) != source_hash([("a.py", b"x = 2\n"), ("b/c.py", b"")])
    assert source_hash([("ab", b"c")]) != source_hash([("a", b"bc")])
    assert build_bundle.__wrapped__() == build_bundle()
