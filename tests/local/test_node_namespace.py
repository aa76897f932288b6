"""A local node's own hostname and node directory (``sbatch_k8s.runtime.agent.node_namespace``),
as root and as an unprivileged user (a user namespace mapping only its own ids), in real
processes: the hostname is the node's name and resolves to its address, the node's spool
is at /tmp/sbatch-k8s for its processes only, and they keep their uid and gid."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import pytest

from tests.local.harness import REPO

PROBE = r"""
import json, os, socket, subprocess, sys
sys.path.insert(0, sys.argv[1])
from sbatch_k8s.runtime.agent import node_namespace
why = node_namespace.enter("127.0.0.9", sys.argv[2])
with open("/tmp/sbatch-k8s/mark", "w") as f:
    f.write("here")
child = subprocess.run(["sh", "-c", "hostname; id -u; id -g; cat /tmp/sbatch-k8s/mark"],
                       capture_output=True, text=True).stdout.split()
print(json.dumps({"why": why, "child": child,
                  "resolved": socket.gethostbyname(socket.gethostname())}))
"""


def _probe(spool: Path, user: int = 0) -> Dict[str, Any]:
    """Run :data:`PROBE` (as ``user`` through util-linux's setpriv, every capability and
    supplementary group dropped)."""
    become = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user \
        else []
    done = subprocess.run([*become, sys.executable, "-c", PROBE, str(REPO), str(spool)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="the root path needs root")
def test_as_root(tmp_path: Path) -> None:
    shown = _probe(tmp_path)
    assert shown == {"why": None, "child": ["127.0.0.9", "0", "0", "here"],
                     "resolved": "127.0.0.9"}
    assert (tmp_path / "mark").read_text() == "here"          # the node's own spool
    assert socket.gethostname() != "127.0.0.9"                # the machine's is untouched


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="the test becomes another user (needs root and setpriv)")
def test_as_an_unprivileged_user() -> None:
    nobody = 65534
    # the user's own spool, where it can reach it (pytest's directories are root's alone)
    spool = Path(tempfile.mkdtemp(prefix="node-namespace-"))
    try:
        os.chown(spool, nobody, nobody)
        shown = _probe(spool, nobody)
        if shown["why"] is not None and "unshare" in shown["why"]:
            pytest.skip(f"unprivileged user namespaces are not available: {shown['why']}")
        assert shown == {"why": None, "child": ["127.0.0.9", str(nobody), str(nobody), "here"],
                         "resolved": "127.0.0.9"}
        assert (spool / "mark").read_text() == "here"
    finally:
        shutil.rmtree(spool, ignore_errors=True)
