"""Backends: where jobs run. Commands reach them only through :func:`open_backend`.

Selection, once per command: ``$SBATCHK8S_BACKEND``, else the configuration file's
``backend``, else ``kubernetes`` when a kubeconfig (or an in-cluster service account) exists,
else ``local`` (:func:`sbatch_k8s.config_file.choose_backend`).
"""

from __future__ import annotations

from typing import Mapping

from sbatch_k8s.backends.base import Backend


def open_backend(environ: Mapping[str, str]) -> Backend:
    """The backend this environment chooses, with the configuration loaded."""
    from sbatch_k8s.config_file import LOCAL, choose_backend, load_config

    config, path = load_config(environ)
    if choose_backend(environ, config, path) == LOCAL:
        from sbatch_k8s.backends.local.backend import LocalBackend

        return LocalBackend(config, environ)
    from sbatch_k8s.backends.kubernetes.backend import KubernetesBackend

    return KubernetesBackend(config, environ)
