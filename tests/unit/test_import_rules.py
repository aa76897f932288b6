"""The architecture's import rules, read from every import statement of the product —
those inside functions and ``if TYPE_CHECKING:`` blocks too, which the import contracts of
``pyproject.toml`` may not see (most imports of a backend are inside functions).

* Layers: parsers -> translators -> sbatch_k8s (nothing imports upward).
* Pod-side code (``parsers/``, ``sbatch_k8s/runtime/``) runs in arbitrary images: it imports
  the standard library, lark, parsers and the runtime itself — an allowlist.
* A backend imports no command (``sbatch_k8s.cli``, the ``sbatch-k8s`` tool's subcommands,
  the console) and not the other backend; the modules all backends share import neither.
* A command imports no backend's modules (only :mod:`sbatch_k8s.backends`, its ``base`` and
  the shared ``attach_files``), nor names one to import it by string (``importlib``) — save
  the adapters listed in :data:`ADAPTERS`, each with its reason.
* Tools, the console and commands → the job inspection → the backends (:data:`LAYERS`,
  nothing imports a layer above its own); the console's pages import no backend (only its
  adapter, ``ui.jobs_source``, does, with the inspection).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("parsers", "translators", "sbatch_k8s")
POD_SIDE = ("parsers", "sbatch_k8s.runtime")
#: What pod-side code may import besides the standard library (the bundle ships these:
#: :mod:`sbatch_k8s.runtime_bundle`; ``sbatch_k8s`` is its empty ``__init__``).
POD_SIDE_ALLOWED = ("parsers", "sbatch_k8s.runtime", "lark")
POD_SIDE_EXACT = ("sbatch_k8s",)
BACKENDS = ("sbatch_k8s.backends.local", "sbatch_k8s.backends.kubernetes")
#: What runs as a command: Slurm's commands, the ``sbatch-k8s`` tool's subcommands, the console.
COMMANDS = ("sbatch_k8s.cli", "sbatch_k8s.tool", "sbatch_k8s.ui")
#: Commands that may reach into one backend, and why.
ADAPTERS = {
    # the Kubernetes backend's reconciling daemon, started as ``sbatch-k8s controller``
    "sbatch_k8s.tool.controller": "the controller",
}
#: Highest first: each may import those below it, never those above.
LAYERS = ("sbatch_k8s.tool", "sbatch_k8s.ui", "sbatch_k8s.cli", "sbatch_k8s.inspection",
          "sbatch_k8s.backends")
CONSOLE_ADAPTER = "sbatch_k8s.ui.jobs_source"


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_command(module: str) -> bool:
    return any(_within(module, c) for c in COMMANDS)


def _is_adapter(module: str) -> bool:
    return any(_within(module, a) for a in ADAPTERS)


def strings_of(source: str) -> Iterator[Tuple[int, str]]:
    """Every string constant of ``source`` (line, text): a module named to import it later."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> Iterator[Tuple[int, str]]:
    """Every module ``source`` imports (line, absolute name), wherever the statement is."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base == "__future__":
                continue
            yield node.lineno, base
            for alias in node.names:  # ``from pkg import module`` imports pkg.module too
                yield node.lineno, f"{base}.{alias.name}"


def _product_imports() -> Iterator[Tuple[str, str, int, str]]:
    for top in PRODUCT:
        for path in sorted((REPO / top).rglob("*.py")):
            module = _module_name(path)
            for line, imported in imports_of(path.read_text(), module,
                                             path.name == "__init__.py"):
                yield str(path.relative_to(REPO)), module, line, imported


IMPORTS = list(_product_imports())


def _is_product(name: str) -> bool:
    return any(_within(name, top) for top in PRODUCT)


def _exists(name: str) -> bool:
    """Whether ``name`` is a product module or package (not a name inside one)."""
    path = REPO / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _violations(rule) -> List[str]:
    return [f"{path}:{line}: {imported}" for path, module, line, imported in IMPORTS
            if rule(module, imported)]


def test_nothing_imports_upward() -> None:
    def upward(module: str, imported: str) -> bool:
        if _within(module, "parsers"):
            return _within(imported, "translators") or _within(imported, "sbatch_k8s")
        if _within(module, "translators"):
            return _within(imported, "sbatch_k8s")
        return False
    assert _violations(upward) == []


def test_pod_side_code_imports_only_what_every_image_has() -> None:
    stdlib = set(sys.stdlib_module_names)

    def outside(module: str, imported: str) -> bool:
        if not any(_within(module, p) for p in POD_SIDE):
            return False
        if imported.split(".")[0] in stdlib:
            return False
        if _is_product(imported) and not _exists(imported):
            return False  # a name from a module (``from parsers.x import NAME``)
        if imported in POD_SIDE_EXACT:
            return False
        return not any(_within(imported, a) for a in POD_SIDE_ALLOWED)
    assert _violations(outside) == []


def test_a_backend_imports_no_command_and_not_the_other_backend() -> None:
    def crossing(module: str, imported: str) -> bool:
        for backend in BACKENDS:
            if _within(module, backend):
                others = [b for b in BACKENDS if b != backend]
                return _is_command(imported) or any(_within(imported, o) for o in others)
        if _within(module, "sbatch_k8s.backends"):   # shared by both: neither backend
            return _is_command(imported) or any(_within(imported, b) for b in BACKENDS)
        return False
    assert _violations(crossing) == []


def test_a_command_reaches_a_backend_only_through_the_interface() -> None:
    def internal(module: str, imported: str) -> bool:
        return _is_command(module) and not _is_adapter(module) and \
            any(_within(imported, b) for b in BACKENDS)
    assert _violations(internal) == []


def test_a_command_names_no_backend_module_to_import_it_by_string() -> None:
    named = []
    for top in PRODUCT:
        for path in sorted((REPO / top).rglob("*.py")):
            module = _module_name(path)
            if not _is_command(module) or _is_adapter(module):
                continue
            named += [f"{path.relative_to(REPO)}:{line}: {text}"
                      for line, text in strings_of(path.read_text())
                      if any(_within(text, b) for b in BACKENDS)]
    assert named == []


def test_every_adapter_exists_and_reaches_a_backend() -> None:
    """An adapter that no longer reaches into a backend leaves the list (it only shrinks)."""
    for adapter in ADAPTERS:
        assert _exists(adapter), adapter
        assert any(_within(module, adapter) and any(_within(imported, b) for b in BACKENDS)
                   for _, module, _, imported in IMPORTS), adapter


def test_tools_console_and_commands_reach_backends_through_the_inspection_layering() -> None:
    def upward(module: str, imported: str) -> bool:
        for level, layer in enumerate(LAYERS):
            if _within(module, layer):
                return any(_within(imported, higher) for higher in LAYERS[:level])
        return False
    assert _violations(upward) == []


def test_the_console_pages_import_no_backend() -> None:
    def reaching(module: str, imported: str) -> bool:
        return _within(module, "sbatch_k8s.ui") and not _within(module, CONSOLE_ADAPTER) \
            and _within(imported, "sbatch_k8s.backends")
    assert _violations(reaching) == []


@pytest.mark.parametrize("source, module, expected", [
    ("def f():\n    from sbatch_k8s.backends.local import capacity\n",
     "sbatch_k8s.cli.x", "sbatch_k8s.backends.local.capacity"),
    ("if TYPE_CHECKING:\n    import kubernetes.client\n", "parsers.x", "kubernetes.client"),
    ("def f():\n    from ..kubernetes.api import client\n", "sbatch_k8s.backends.local.x",
     "sbatch_k8s.backends.kubernetes.api.client"),
    ("class C:\n    def m(self):\n        import sbatch_k8s.cli.sbatch\n",
     "sbatch_k8s.backends.base", "sbatch_k8s.cli.sbatch"),
])
def test_the_rules_see_imports_inside_functions_and_relative_ones(source, module, expected):
    assert expected in [name for _, name in imports_of(source, module)]


def test_the_rules_see_modules_named_in_strings() -> None:
    source = "import importlib\nimportlib.import_module('sbatch_k8s.backends.local.submit')\n"
    assert (2, "sbatch_k8s.backends.local.submit") in list(strings_of(source))
