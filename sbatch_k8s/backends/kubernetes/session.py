"""One command's session with the cluster: its client, whom the API server says the
credentials are, and the namespaces that hold the caller's jobs.

It is also the backend's :class:`~sbatch_k8s.backends.base.Identity` facet: on a cluster the
owner is the identity the API server authenticated (:mod:`.api.identity`), mapped to Slurm's
user names and uids by the ``[users]`` table — never a local uid or ``$USER``. Everything is
asked once per command and kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Set, Tuple

from sbatch_k8s.backends.base import Identity
from translators.config import ClusterConfig

if TYPE_CHECKING:
    from sbatch_k8s.backends.kubernetes.api.client import KubeClient
    from sbatch_k8s.backends.kubernetes.api.identity import ClusterUser


class ClusterSession(Identity):
    """The cluster of the kubeconfig context (or of the pod we run in), as the caller."""

    operators_see_all = True

    def __init__(self, config: ClusterConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = environ
        self._client: Optional["KubeClient"] = None
        self._caller: Optional["ClusterUser"] = None

    @property
    def client(self) -> "KubeClient":
        if self._client is None:
            from sbatch_k8s.backends.kubernetes.api.client import connect

            self._client = connect(self.environ, self.config.context)
        return self._client

    @property
    def caller(self) -> "ClusterUser":
        """Who the API server says the credentials are (:mod:`.api.identity`)."""
        if self._caller is None:
            from sbatch_k8s.backends.kubernetes.api.identity import who_am_i

            self._caller = who_am_i(self.client, dict(self.environ))
        return self._caller

    def caller_ids(self) -> Tuple[str, int, int]:
        """The caller's Slurm user name, uid and gid (the ``[users]`` table's mapping)."""
        from sbatch_k8s.backends.kubernetes.api.identity import slurm_identity

        return slurm_identity(self.caller, self.config.users)

    def caller_uid(self) -> int:
        return self.caller_ids()[1]

    def caller_name(self) -> str:
        return self.caller_ids()[0]

    def caller_is_operator(self) -> bool:
        return self.caller.is_operator(self.config.users)

    def uid_of_user(self, name: str) -> Optional[int]:
        from sbatch_k8s.backends.kubernetes.api.identity import slurm_ids

        return slurm_ids(name, self.config.users)[0]

    def namespaces(self) -> Set[str]:
        """Every namespace a partition puts jobs in: the caller's, where a partition's
        namespace names the user (``u-{user}``), and for an operator then every namespace
        that holds job records."""
        from sbatch_k8s.backends.kubernetes.submit.submitter import (
            all_record_namespaces,
            user_namespaces,
        )

        default = self.client.target.namespace
        if not any(p.namespace and "{user}" in p.namespace for p in self.config.partitions):
            return {p.namespace or default for p in self.config.partitions}
        found = user_namespaces(self.config, self.client, self.caller_ids()[0])
        if self.caller_is_operator():
            found |= all_record_namespaces(self.client)
        return found
