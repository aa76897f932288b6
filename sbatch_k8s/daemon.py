"""Starting a background program detached from the command that needs it.

The per-user command server (:mod:`sbatch_k8s.fastpath`) and the local backend's scheduler
(:mod:`sbatch_k8s.backends.local.scheduler`) both outlive the command that starts them: a
double fork (the program's parent exits at once, so it is re-parented and never a zombie of
the command), a session of its own (no terminal, no signal aimed at the command's process
group), stdin from ``/dev/null``, stdout and stderr appended to a log, no inherited
descriptor, then ``exec`` of a fresh interpreter (no state of the forking process survives:
no open database connection, no half-held lock, the newest code on disk).

Standard library only and import-cheap: the command client imports it before anything else.
The pod-side runtime (``sbatch_k8s/runtime``) cannot import this module — its bundle holds the
runtime package alone — and it never daemonises: its forks (the node's PID 1 duties, the step
server) stay children of the node.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds this module must not spend
    from typing import List, Mapping, Optional, Sequence


def start_detached(argv: List[str], log_path: str,
                   environ: Optional[Mapping[str, str]] = None,
                   pass_fds: Sequence[int] = ()) -> bool:
    """Start ``argv`` (``argv[0]`` a path) detached, logging to ``log_path``, with
    ``environ`` (default: this process's) and the descriptors ``pass_fds`` kept open (e.g.
    a lock it inherits); False when it could not be forked. Returns once the intermediate
    process is gone, without waiting for the program."""
    env = dict(os.environ if environ is None else environ)
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        return True
    code = 1
    try:
        os.setsid()
        if os.fork():
            code = 0
            return False  # unreachable for callers: the finally clause exits
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        keep = sorted(fd for fd in pass_fds if fd > 2)
        start = 3
        for fd in keep:
            os.closerange(start, fd)
            os.set_inheritable(fd, True)
            start = fd + 1
        os.closerange(start, _max_fd())
        os.execve(argv[0], argv, env)
    except BaseException:  # never fall back into the caller's code in a forked copy
        pass
    finally:
        os._exit(code)


def _max_fd() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (ValueError, OSError):
        return 65536
