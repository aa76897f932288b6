"""Who the caller is on a cluster: what the API server says, never the local uid or ``$USER``.

One ``SelfSubjectReview`` (``authentication.k8s.io/v1``, GA in Kubernetes 1.28) tells the
user name, groups and extra attributes the API server authenticates the client's credentials
as. That name owns what the caller submits (``sbatch-k8s.io/owner``, checked by the
cluster's admission policy, ``deploy/policy.yaml``) and decides every owner check; its Slurm
user name and uid follow from the ``[users]`` table (:mod:`translators.users`).

The answer is cached per credentials (a digest of the server and of what authenticates:
token, client certificate, the pod's token file) in the state directory, for
:data:`CACHE_S`: the warm command server's commands, forked one by one, and cold ones alike
ask once in a while, not once per command. A pod's ServiceAccount token is bound to the pod
(``authentication.kubernetes.io/pod-name`` in ``extra``): :attr:`ClusterUser.pod_name`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from sbatch_k8s.backends.kubernetes.api.client import SERVICE_ACCOUNT_DIR, KubeClient
from translators.config import UsersConfig
from translators.users import (
    SERVICE_ACCOUNT_PREFIX,
    configured_uid,
    hashed_uid,
    slurm_user_name,
)

#: ``SelfSubjectReview``: GA (``v1``) from Kubernetes 1.28, ``v1beta1`` in 1.27.
REVIEW_VERSIONS = ("v1", "v1beta1")
POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
#: How long one answer stands for the same credentials.
CACHE_S = 600.0
#: The job ServiceAccount (``deploy/rbac.yaml``): whose tokens act for a job's pods.
JOB_SERVICE_ACCOUNT = "sbatch-k8s-job"


@dataclass(frozen=True)
class ClusterUser:
    """The authenticated user: ``username``, ``groups``, ``extra`` (key → values)."""

    username: str
    groups: Tuple[str, ...] = ()
    extra: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()

    @property
    def pod_name(self) -> str:
        """The pod a ServiceAccount token is bound to ("" otherwise)."""
        values = dict(self.extra).get(POD_NAME_EXTRA) or ()
        return values[0] if values else ""

    def is_job_account(self, namespace: str) -> bool:
        """Whether this is a job pod's ServiceAccount of ``namespace`` (with its pod)."""
        return bool(self.pod_name) and self.username == \
            f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{JOB_SERVICE_ACCOUNT}"

    def is_operator(self, users: UsersConfig) -> bool:
        """Slurm's operator: in ``[users] operators_group`` (or ``system:masters``)."""
        return users.operators_group in self.groups or "system:masters" in self.groups


def _from_review(answer: Any) -> ClusterUser:
    info = ((answer or {}).get("status") or {}).get("userInfo") or {}
    extra = tuple(sorted((str(k), tuple(str(x) for x in v or ()))
                         for k, v in (info.get("extra") or {}).items()))
    return ClusterUser(str(info.get("username") or ""), tuple(info.get("groups") or ()),
                       extra)


def _credentials_digest(client: KubeClient) -> str:
    """A digest of who the client authenticates as (never the credentials themselves)."""
    configuration = getattr(client.api_client, "configuration", None)
    parts = [client.target.server, client.target.context]
    if configuration is not None:
        parts += [json.dumps(getattr(configuration, "api_key", {}) or {}, sort_keys=True),
                  str(getattr(configuration, "username", "") or "")]
        for name in ("cert_file", "key_file"):
            path = getattr(configuration, name, None)
            if path and os.path.exists(path):
                with open(path, "rb") as f:
                    parts.append(hashlib.sha256(f.read()).hexdigest())
    token = os.path.join(SERVICE_ACCOUNT_DIR, "token")
    if client.target.context == "in-cluster" and os.path.exists(token):
        with open(token, "rb") as f:
            parts.append(hashlib.sha256(f.read()).hexdigest())
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()


def _cache_path(environ: Dict[str, str], digest: str) -> Optional[str]:
    from sbatch_k8s.paths import state_dir

    try:
        return os.path.join(state_dir(environ), "identity", digest[:32] + ".json")
    except Exception:  # no usable state directory: ask every time
        return None


def _cached(path: Optional[str]) -> Optional[ClusterUser]:
    if path is None:
        return None
    try:
        if time.time() - os.stat(path).st_mtime > CACHE_S:
            return None
        with open(path, encoding="utf-8") as f:
            return _from_review(json.load(f))
    except (OSError, ValueError):
        return None


def _store(path: Optional[str], answer: Any) -> None:
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                  encoding="utf-8") as f:
            json.dump({"status": (answer or {}).get("status")}, f)
        os.replace(temporary, path)
    except OSError:
        pass


def who_am_i(client: KubeClient, environ: Dict[str, str]) -> ClusterUser:
    """The user the API server authenticates the client as (cached, module docstring)."""
    path = _cache_path(environ, _credentials_digest(client))
    found = _cached(path)
    if found is not None and found.username:
        return found
    from sbatch_k8s.backends.kubernetes.api.client import KubeError
    from sbatch_k8s.operation_errors import BackendError

    for version in REVIEW_VERSIONS:
        try:
            answer = client.request(
                "POST", f"/apis/authentication.k8s.io/{version}/selfsubjectreviews",
                body={"apiVersion": f"authentication.k8s.io/{version}",
                      "kind": "SelfSubjectReview"})
        except KubeError as e:
            if e.status == 404:
                continue
            raise
        _store(path, answer)
        return _from_review(answer)
    raise BackendError(f"the API server at {client.target.server} cannot say who these "
                       "credentials are (no SelfSubjectReview: Kubernetes 1.27 or later is "
                       "needed)")


def local_ids(name: str) -> Optional[Tuple[int, int]]:
    """``(uid, gid)`` of this machine's account ``name``, or None."""
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def slurm_ids(slurm_name: str, users: UsersConfig) -> Tuple[int, int]:
    """``(uid, gid)`` of a Slurm user name on a cluster (see :class:`UsersConfig`)."""
    uid = configured_uid(slurm_name, users)
    if uid is not None:
        return uid, uid
    if users.local_passwd:
        found = local_ids(slurm_name)
        if found is not None:
            return found
    uid = hashed_uid(slurm_name, users)
    return uid, uid


def slurm_identity(user: ClusterUser, users: UsersConfig) -> Tuple[str, int, int]:
    """``(Slurm user name, uid, gid)`` of a cluster user."""
    name = slurm_user_name(user.username, users)
    uid, gid = slurm_ids(name, users)
    return name, uid, gid


def group_name(gid: int, fallback: str) -> str:
    """The name of group ``gid`` on this machine, else ``fallback`` (the user's name: a
    user's own group)."""
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return fallback


def slurm_groups(slurm_name: str, gid: int, users: UsersConfig) -> Tuple[int, ...]:
    """The user's supplementary gids: this machine's, with ``local_passwd`` when it has the
    account (a partition's ``run_as = "submitter"`` gives them to the tasks); else none."""
    if not users.local_passwd or local_ids(slurm_name) is None:
        return ()
    try:
        return tuple(sorted(set(os.getgrouplist(slurm_name, gid))))
    except OSError:
        return ()
