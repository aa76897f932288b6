"""Who may use the console: its token, its own address, its own user — over real sockets."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess

import pytest

from tests.ui.harness import RunningConsole


def test_the_url_s_token_sets_the_cookie_and_nothing_answers_without_it(
        console: RunningConsole) -> None:
    assert console.request("GET", "/api/session", cookie=False)[0] == 403
    status, _, body = console.request("GET", "/?token=wrong", cookie=False)
    assert status == 403 and b"wrong token" in body
    status, headers, _ = console.request("GET", f"/?token={console.token}", cookie=False)
    assert status == 302 and headers["location"] == "/"
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    status, _, page = console.request("GET", "/")
    assert status == 200 and f'content="{console.token}"'.encode() in page
    assert console.get("/api/session")["identity"]["backend"] == "local"


def test_a_change_needs_the_token_header_and_the_console_s_own_host(
        console: RunningConsole) -> None:
    status, _, body = console.request("POST", "/api/lint", {"script": "#!/bin/sh\n"},
                                      token_header=False)
    assert status == 403 and b"needs the console's token" in body
    status, _, body = console.request("GET", "/api/session", host="evil.example:80")
    assert status == 403 and b"its own address" in body
    assert console.request("GET", "/api/session", host=f"localhost:{console.port}")[0] == 200


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused_even_with_the_token(console: RunningConsole) -> None:
    """The kernel says whose socket connects: uid 65534 with the right cookie is refused."""
    client = (
        "import http.client, sys\n"
        f"c = http.client.HTTPConnection('127.0.0.1', {console.port}, timeout=30)\n"
        f"c.request('GET', '/api/session', headers={{'Cookie': {console.cookie!r}}})\n"
        "r = c.getresponse(); sys.stdout.write(str(r.status) + ' ' + r.read().decode())\n")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 another user may run")
    done = subprocess.run([python, "-c", client], capture_output=True, text=True, cwd="/",
                          timeout=60, preexec_fn=lambda: os.setuid(65534))
    status, _, body = done.stdout.partition(" ")
    assert status == "403", done
    assert json.loads(body)["error"] == "this console serves the user who started it only"
    assert console.request("GET", "/api/session")[0] == 200


def test_it_listens_on_the_loopback_address_only(console: RunningConsole) -> None:
    listening = open("/proc/net/tcp").read().splitlines()[1:]
    ours = [line.split() for line in listening
            if line.split()[1].endswith(f":{console.port:04X}") and line.split()[3] == "0A"]
    assert [fields[1] for fields in ours] == [f"0100007F:{console.port:04X}"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_ends_it_quietly(console: RunningConsole, signum: int) -> None:
    """While a page follows the live table: exit 0, nothing on stderr."""
    live = console.events("/api/jobs/live")
    next(live)
    os.killpg(console.process.pid, signum)
    assert console.process.wait(30) == 0
    assert console.process.stderr is not None and console.process.stderr.read() == ""
