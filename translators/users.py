"""Cluster users as Slurm sees them: a user name and a uid, decided the same way everywhere.

The cluster authenticates users by names Slurm would not print (``alice@example.com``,
``oidc:alice``, ``system:serviceaccount:ml:runner``); Slurm shows user names and numeric
uids. :func:`slurm_user_name` and :func:`hashed_uid` map one to the other predictably, so
that every machine (and every command) agrees without a shared database; the site's
``[users]`` table (:class:`translators.config.UsersConfig`) overrides either. Pure: the local
passwd lookup of ``local_passwd`` is the backend's (it is I/O).
"""

from __future__ import annotations

import hashlib
import re
from typing import Optional

from translators.config import UsersConfig

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_NOT_SLURM = re.compile(r"[^a-z0-9._-]")
_NOT_DNS = re.compile(r"[^a-z0-9-]+")
#: Longest Slurm user name kept (Unix's login names are at most 32 characters).
NAME_MAX = 32


def slurm_user_name(cluster_name: str, users: UsersConfig) -> str:
    """The Slurm user name of a cluster user (see :class:`UsersConfig`)."""
    mapped = dict(users.names).get(cluster_name)
    if mapped:
        return mapped
    text = cluster_name
    if text.startswith(SERVICE_ACCOUNT_PREFIX):
        text = "sa_" + text[len(SERVICE_ACCOUNT_PREFIX):].replace(":", "_")
    name = _NOT_SLURM.sub("_", text.lower())[:NAME_MAX]
    return name or "nobody"


def hashed_uid(slurm_name: str, users: UsersConfig) -> int:
    """The uid of a Slurm user name with no configured or local one: a stable hash of the
    name into ``[uid_min, uid_max]``."""
    span = max(1, users.uid_max - users.uid_min + 1)
    digest = int.from_bytes(hashlib.sha256(slurm_name.encode("utf-8")).digest()[:8], "big")
    return users.uid_min + digest % span


def configured_uid(slurm_name: str, users: UsersConfig) -> Optional[int]:
    """The uid ``[users] uids`` gives the name, or None."""
    return dict(users.uids).get(slurm_name)


def namespace_for(template: str, slurm_name: str) -> str:
    """A partition's ``namespace`` with ``{user}`` replaced by the user's name as a DNS
    label (lower case, other characters ``-``): ``u-{user}`` → ``u-alice-example-com``."""
    if "{user}" not in template:
        return template
    label = _NOT_DNS.sub("-", slurm_name.lower()).strip("-") or "nobody"
    return template.replace("{user}", label)[:63].rstrip("-")
