"""Backends: where jobs run. Commands reach them only through :func:`open_backend`, the
verbs of :class:`~sbatch_k8s.backends.base.Backend` and its facets (``identity``, ``cluster``,
``lookup``) — values in, values out; only commands print: a command never imports a
backend's modules, a backend never imports a command or the other backend (import
contracts in ``pyproject.toml`` and ``tests/unit/test_import_rules.py``).

Selection, once per command: ``$SBATCHK8S_BACKEND``, else the configuration file's
``backend``, else ``kubernetes`` when a kubeconfig (or an in-cluster service account) exists,
else ``local`` (:func:`sbatch_k8s.config_file.choose_backend`).
"""

from __future__ import annotations

import importlib
from typing import Dict, Mapping, Tuple

from sbatch_k8s.backends.base import Backend

#: The one registry: backend name → (module, class). Imported only when chosen.
BACKENDS: Dict[str, Tuple[str, str]] = {
    "local": ("sbatch_k8s.backends.local.backend", "LocalBackend"),
    "kubernetes": ("sbatch_k8s.backends.kubernetes.backend", "KubernetesBackend"),
}


def open_backend(environ: Mapping[str, str]) -> Backend:
    """The backend this environment chooses, with the configuration loaded."""
    from sbatch_k8s.config_file import choose_backend, load_config

    config, path = load_config(environ)
    module, name = BACKENDS[choose_backend(environ, config, path)]
    backend_class = getattr(importlib.import_module(module), name)
    return backend_class(config, environ)  # type: ignore[no-any-return]
