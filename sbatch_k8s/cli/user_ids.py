"""User names on the command line (``-u alice,1000``, ``--me``) → uids, as the reporting
commands need them. The backend knows its users: this machine's accounts on the local
backend, the cluster's authenticated users on a cluster (``--me`` is whom the API server says
the credentials are, never the local uid). Unknown names get the command's own message."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional, Sequence, Set

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend


def resolve_users(command: str, names: Optional[Sequence[str]], me: bool,
                  backend: "Backend") -> Optional[Set[int]]:
    """The uids to select, or None for everyone."""
    if me:
        return {backend.identity.caller_uid()}
    if names is None:
        return None
    from parsers.formats.messages import invalid_user_error

    uids: Set[int] = set()
    for name in names:
        if name.isascii() and name.isdigit():
            uids.add(int(name))
            continue
        uid = backend.identity.uid_of_user(name)
        if uid is not None:
            uids.add(uid)
            continue
        error = invalid_user_error(command, name)
        if error.exit_code:
            raise error from None
        sys.stderr.write(error.render(command))
    return uids
