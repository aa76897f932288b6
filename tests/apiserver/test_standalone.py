"""``python -m tests.apiserver``: serves, writes a kubeconfig, stops on SIGTERM; bookmarks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kubernetes import client, config, watch

ROOT = Path(__file__).resolve().parents[2]


def test_standalone_server(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--kubeconfig-out",
                             str(kubeconfig)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        api = config.new_client_from_config(config_file=str(kubeconfig))
        assert api.configuration.host == url
        names = {n.metadata.name for n in client.CoreV1Api(api).list_namespace().items}
        assert {"default", "kube-system", "kube-node-lease"} <= names
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def test_bookmarks_while_idle(core: Any) -> None:
    started = time.monotonic()
    stream = watch.Watch()
    seen = []
    for event in stream.stream(core.list_namespaced_config_map, "default",
                               allow_watch_bookmarks=True, timeout_seconds=120):
        seen.append(event["type"])
        if event["type"] == "BOOKMARK":
            stream.stop()
    # a BOOKMARK arrived (it stopped the loop), and before the stream's end
    assert seen == ["BOOKMARK"] and time.monotonic() - started < 110
    assert int(stream.resource_version) > 0
