"""Errors of operations: the I/O layer's (configuration, backends, the job database), as
opposed to errors in what the user typed (:mod:`parsers.input_errors`).

* :class:`SbatchK8sError` — base; ``str(e)`` is one line in Slurm's voice, without the
  ``<command>: error:`` prefix, and ``exit_code`` is what the command exits with.
* :class:`ConfigurationError` — the configuration file is unreadable or invalid.
* :class:`BackendError` — the local backend or the cluster refused or failed an operation;
  for the Kubernetes backend the message carries the API server's own Status message.

User input errors are :class:`parsers.input_errors.SlurmInputError`; both kinds are turned into
messages in one place, :func:`sbatch_k8s.cli.common.run_command`.
"""

from __future__ import annotations


class SbatchK8sError(Exception):
    """Base of the I/O layer's errors."""

    exit_code = 1


class ConfigurationError(SbatchK8sError):
    """The configuration cannot be used."""


class BackendError(SbatchK8sError):
    """A backend operation failed."""
