"""Finding and reading the configuration, and choosing the backend.

Configuration file: ``$SBATCHK8S_CONFIG``, else ``~/.config/sbatch-k8s/config.toml``, else
``/etc/sbatch-k8s/config.toml``; none → built-in defaults (one partition ``debug``, which
also takes jobs naming any other partition).
Backend: ``$SBATCHK8S_BACKEND``, else the file's ``backend``, else ``kubernetes`` when a
kubeconfig exists (``$KUBECONFIG``, ``~/.kube/config``) or we run inside a pod, else ``local``.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Tuple

from sbatch_k8s.operation_errors import ConfigurationError
from translators.config import (
    BACKENDS,
    BUILT_IN,
    ClusterConfig,
    ConfigError,
    cluster_config_from_dict,
)

LOCAL = "local"
KUBERNETES = "kubernetes"


def config_paths(environ: Mapping[str, str]) -> Tuple[str, ...]:
    """Where the configuration may live, in the order they are tried."""
    if environ.get("SBATCHK8S_CONFIG"):
        return (environ["SBATCHK8S_CONFIG"],)
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return (os.path.join(xdg, "sbatch-k8s", "config.toml"), "/etc/sbatch-k8s/config.toml")


def find_config_file(environ: Mapping[str, str]) -> Optional[str]:
    """The configuration file in use, or None for built-in defaults.

    An explicit ``$SBATCHK8S_CONFIG`` that does not exist is an error, not a silent default.
    """
    paths = config_paths(environ)
    if environ.get("SBATCHK8S_CONFIG") and not os.path.exists(paths[0]):
        raise ConfigurationError(f"SBATCHK8S_CONFIG={paths[0]}: no such file")
    for path in paths:
        if os.path.exists(path):
            return path
    return None


def _read_toml(path: str) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigurationError(f"{path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigurationError(f"{path}: {e}") from e


def load_config(environ: Mapping[str, str]) -> Tuple[ClusterConfig, Optional[str]]:
    """The configuration and the file it came from (None for defaults)."""
    path = find_config_file(environ)
    if path is None:
        return BUILT_IN, None
    try:
        return cluster_config_from_dict(_read_toml(path)), path
    except ConfigError as e:
        raise ConfigurationError(f"{path}: {e}") from e


def _has_kubeconfig(environ: Mapping[str, str]) -> bool:
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    if environ.get("KUBECONFIG"):
        return any(os.path.exists(p) for p in environ["KUBECONFIG"].split(os.pathsep) if p)
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.exists(os.path.join(home, ".kube", "config"))


def choose_backend(environ: Mapping[str, str], config: ClusterConfig,
                   config_path: Optional[str]) -> str:
    """``local`` or ``kubernetes``, by the rules in the module docstring."""
    wanted = environ.get("SBATCHK8S_BACKEND") or config.backend
    if wanted:
        if wanted not in BACKENDS:
            raise ConfigurationError(
                f"SBATCHK8S_BACKEND={wanted}: must be one of {', '.join(BACKENDS)}")
        return wanted
    if _has_kubeconfig(environ):
        return KUBERNETES
    return LOCAL
