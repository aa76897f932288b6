"""The command client: Slurm-fast commands without a Python start-up per command.

Slurm's commands answer in a few milliseconds because a daemon does the work. Here a
per-user command server (:mod:`sbatch_k8s.server`) keeps every module and grammar loaded;
each command is a tiny client that hands the server its arguments, working directory,
environment and its stdin/stdout/stderr file descriptors (``SCM_RIGHTS``) over a Unix socket
in the state directory. The server forks a child that runs the command exactly as this
process would — same files, same environment — and the client forwards signals to it and
exits with its exit code.

When there is no server (first use, after an upgrade, ``SBATCH_K8S_SERVER=0``) the client
starts one in the background and runs the command itself, so the result never depends on the
server. Only ``os``, ``sys`` and the C modules ``_socket``/``_signal`` are used here (their
Python wrappers import ``enum``, which alone costs a few milliseconds).
"""

import _signal
import _socket
import os
import sys

MAGIC = b"SBK8S1"
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def socket_path(environ):
    """The server's socket: ``<state dir>/server.sock``."""
    from sbatch_k8s.paths import state_dir

    return os.path.join(state_dir(environ), "server.sock")


def encode_request(command, argv, environ):
    """The request: NUL-separated words (no JSON: keep the client import-free)."""
    words = [MAGIC, command.encode(), PACKAGE_ROOT.encode(), os.getcwdb(),
             str(len(argv)).encode()]
    words += [os.fsencode(a) for a in argv]
    env = [k + b"=" + v for k, v in os.environb.items()] if environ is os.environ else [
        os.fsencode(f"{k}={v}") for k, v in environ.items()]
    words += [str(len(env)).encode()] + env
    body = b"\0".join(words)
    return len(body).to_bytes(4, "big") + body


def _read_line(conn, buffer):
    while b"\n" not in buffer[0]:
        data = conn.recv(4096)
        if not data:
            return None
        buffer[0] += data
    line, _, rest = buffer[0].partition(b"\n")
    buffer[0] = rest
    return line


def _forward_signals(conn):
    def forward(signum, _frame):
        try:
            conn.sendall(b"K" + str(signum).encode() + b"\n")
        except OSError:
            pass

    for name in FORWARDED:
        _signal.signal(getattr(_signal, name), forward)


def run_on_server(command, argv):
    """The command's exit code from the server, or None when it must run here."""
    if os.environ.get("SBATCH_K8S_SERVER") == "0":
        return None
    path = socket_path(os.environ)
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        start_server(path)
        return None
    try:
        fds = [0, 1, 2]
        conn.sendmsg([encode_request(command, argv, os.environ)],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, bytes(_fd_array(fds)))])
        buffer = [b""]
        started = _read_line(conn, buffer)
        if started is None or not started.startswith(b"P"):
            return None
        _forward_signals(conn)
        finished = _read_line(conn, buffer)
        if finished is None or not finished.startswith(b"X"):
            return 1
        return int(finished[1:])
    except OSError:
        return None
    finally:
        conn.close()


def _fd_array(fds):
    import array

    return array.array("i", fds)


def start_server(path):
    """Start the command server in the background (it exits by itself when idle)."""
    if os.environ.get("SBATCH_K8S_SERVER") == "0":
        return
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        pid = os.fork()
    except OSError:
        return
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        log = os.open(os.path.join(directory, "server.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.execv(sys.executable, [sys.executable, "-c",
                                  f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
                                  "from sbatch_k8s.server import main; main()", path])
    finally:
        os._exit(1)


def run(command):
    """Run ``command`` (sbatch, squeue, …) on the server, or here when it cannot."""
    argv = sys.argv[1:]
    code = run_on_server(command, argv)
    if code is not None:
        raise SystemExit(code)
    from importlib import import_module

    import_module(f"sbatch_k8s.cli.{command}").main(argv)


def sbatch():
    run("sbatch")


def srun():
    run("srun")


def squeue():
    run("squeue")


def scancel():
    run("scancel")


def sacct():
    run("sacct")


def scontrol():
    run("scontrol")


def sinfo():
    run("sinfo")
