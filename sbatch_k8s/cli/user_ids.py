"""User names on the command line (``-u alice,1000``, ``--me``) → uids, as the reporting
commands need them. Unknown names get the command's own message."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence, Set


def resolve_users(command: str, names: Optional[Sequence[str]], me: bool) -> Optional[Set[int]]:
    """The uids to select, or None for everyone."""
    if me:
        return {os.getuid()}
    if names is None:
        return None
    import pwd

    from parsers.formats.messages import invalid_user_error

    uids: Set[int] = set()
    for name in names:
        if name.isascii() and name.isdigit():
            uids.add(int(name))
            continue
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            error = invalid_user_error(command, name)
            if error.exit_code:
                raise error from None
            sys.stderr.write(error.render(command))
    return uids
