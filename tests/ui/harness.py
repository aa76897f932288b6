"""The console as a user starts it: ``sbatch-k8s ui --no-browser`` as a real process, and an
HTTP client that holds its cookie as a browser would.

:class:`RunningConsole` starts the command of this checkout in a cluster's environment
(:class:`tests.local.harness.LocalSlurm` or its Kubernetes sibling), reads the URL it
prints, opens it once (the token sets the cookie) and then talks to it over real loopback
sockets: JSON requests, downloads, and server-sent event streams read line by line.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
URL_LINE = re.compile(r"open (http://127\.0\.0\.1:(\d+)/\?token=(\S+))")


class RunningConsole:
    """``sbatch-k8s ui`` of this checkout, running for one test."""

    def __init__(self, env: Dict[str, str], cwd: Path, *args: str) -> None:
        env = dict(env, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sbatch_k8s.tool", "ui", "--no-browser", "--port", "0",
             *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.url, self.port, self.token = self._read_url()
        self.cookie = ""
        status, headers, _ = self.request("GET", f"/?token={self.token}", cookie=False)
        assert status == 302, status
        self.cookie = headers["set-cookie"].split(";")[0]

    def _read_url(self) -> Tuple[str, int, str]:
        assert self.process.stdout is not None
        lines: List[str] = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            lines.append(line)
            found = URL_LINE.search(line)
            if found:
                return found.group(1), int(found.group(2)), found.group(3)
        self.stop()
        raise AssertionError(f"the console printed no URL: {''.join(lines)!r} "
                             f"{self.process.stderr.read() if self.process.stderr else ''}")

    def request(self, method: str, path: str, body: Any = None, cookie: bool = True,
                token_header: bool = True, host: Optional[str] = None,
                timeout: float = 120) -> Tuple[int, Dict[str, str], bytes]:
        """One request; status, headers (lower-case names) and body."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Host": host or f"127.0.0.1:{self.port}"}
        if cookie and self.cookie:
            headers["Cookie"] = self.cookie
        if token_header and method != "GET":
            headers["X-Console-Token"] = self.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, payload

    def get(self, path: str) -> Any:
        """A JSON answer (its status must be 200)."""
        status, _, payload = self.request("GET", path)
        assert status == 200, (status, payload[:500])
        return json.loads(payload)

    def post(self, path: str, body: Any = None) -> Tuple[int, Any]:
        status, _, payload = self.request("POST", path, body if body is not None else {})
        return status, json.loads(payload)

    def events(self, path: str, timeout: float = 120) -> Iterator[Tuple[str, Any]]:
        """A server-sent event stream: (event name, data) as they come."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}",
                                                 "Cookie": self.cookie})
        response = connection.getresponse()
        assert response.status == 200, (response.status, response.read()[:500])
        name, data = "message", []
        try:
            while True:
                line = response.readline()
                if not line:
                    return
                text = line.decode("utf-8").rstrip("\n")
                if text.startswith("event: "):
                    name = text[len("event: "):]
                elif text.startswith("data: "):
                    data.append(text[len("data: "):])
                elif text == "" and data:
                    yield name, json.loads("\n".join(data))
                    name, data = "message", []
        finally:
            connection.close()

    def stop(self) -> None:
        """Ctrl-C, as a user stops it; killed if it does not end."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(20)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def wait_for(predicate: Any, timeout: float = 60.0, interval: float = 0.2) -> Any:
    """Poll until ``predicate()`` is truthy; its value (AssertionError on timeout)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


#: A batch script whose task on node 1 writes to node 1's own log (the runtime process's
#: stderr: a pod's container log, the local node's log file), one line a second (HOLD: what
#: it does before its last line, see :func:`node1_script`).
NODE1_LOG = r"""#!/bin/bash
#SBATCH -N 2
echo batch starts
srun -N1 -r1 python3 -c '
import os, time
pid = os.getpid()
while pid > 1:
    argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    if b"node" in argv and any(b"runtime" in a for a in argv):
        break
    pid = int(next(l for l in open(f"/proc/{pid}/status") if l.startswith("PPid:")).split()[1])
with open(f"/proc/{pid}/fd/2", "w") as log:
    for i in range(LINES):
HOLD        print(f"node-one line {i}", file=log, flush=True)
        time.sleep(1)
'
echo batch ends
"""


def node1_script(lines: int, stop: Optional[Path] = None) -> str:
    """:data:`NODE1_LOG` writing ``lines`` lines; with ``stop``, its last line only once
    that file exists (at most 120 s): the job runs until a test saw what it looks for."""
    hold = ("        if i == LINES - 1:\n"
            "            end = time.time() + 120\n"
            "            while time.time() < end and not os.path.exists(\"STOP\"):\n"
            "                time.sleep(0.2)\n") if stop is not None else ""
    return NODE1_LOG.replace("HOLD", hold).replace("LINES", str(lines)) \
        .replace("STOP", str(stop))


#: Python that holds ~100 MB and keeps one core busy until the file STOP exists (at most
#: SECONDS seconds): a test stops it once it saw what it looks for, however slow the machine.
BURN_PY = """python3 -c '
import os, time
held = b"x" * (100 << 20)
end = time.time() + SECONDS
while time.time() < end and not os.path.exists("STOP"):
    for _ in range(100000):
        pass
'
"""


def burn_script(stop: Path, seconds: int = 120, header: str = "", launcher: str = "") -> str:
    """A batch script that runs :data:`BURN_PY` until ``stop`` exists (at most ``seconds``):
    itself, or through ``launcher`` (``srun``: a task a node), after ``#SBATCH`` lines in
    ``header``."""
    body = BURN_PY.replace("SECONDS", str(seconds)).replace("STOP", str(stop))
    return f"#!/bin/sh\n{header}{launcher + ' ' if launcher else ''}{body}"
