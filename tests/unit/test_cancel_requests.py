"""scancel's requests on Kubernetes: the annotation's format, the pod's downward-API file, and
node 0's watch of that file (real files, a real event loop)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Dict, List

import pytest

from sbatch_k8s.runtime.cluster.cancel_requests import (
    ANNOTATION,
    MAX_REQUESTS,
    REQUEUE,
    REQUESTS_FILE,
    REQUESTS_KEY,
    cancel_message,
    read_requests,
    target_of,
    watch_requests,
    with_request,
)
from parsers.vocabulary import CONTROL_DIR
from tests.unit.translators.support import container, pod_spec, render_script, script


def test_translators_and_runtime_agree_on_the_file_and_the_annotation() -> None:
    from parsers.vocabulary import SCANCEL_REQUESTS
    from translators.storage import CONTROL_DIR as TRANSLATED_DIR
    from parsers.vocabulary import CONTROL_KEY

    assert (SCANCEL_REQUESTS, TRANSLATED_DIR, CONTROL_KEY) == (ANNOTATION, CONTROL_DIR,
                                                               REQUESTS_KEY)
    result = render_script(script())
    volumes = {v["name"]: v for v in pod_spec(result)["volumes"]}
    mounts = {m["name"]: m for m in container(result)["volumeMounts"]}
    assert volumes["sbatch-k8s-control"]["downwardAPI"] == {"items": [{
        "path": REQUESTS_KEY,
        "fieldRef": {"fieldPath": f"metadata.annotations['{ANNOTATION}']"}}]}
    mount = mounts["sbatch-k8s-control"]
    assert os.path.join(mount["mountPath"], REQUESTS_KEY) == REQUESTS_FILE
    assert mount["readOnly"] is True


@pytest.mark.parametrize("batch, full, step, target, message", [
    (False, False, None, "steps", {"batch": False, "full": False}),
    (True, False, None, "batch", {"batch": True, "full": False}),
    (False, True, None, "full", {"batch": False, "full": True}),
    (True, True, None, "full", {"batch": False, "full": True}),
    (False, False, 3, "step", {"batch": False, "full": False, "step": 3}),
])
def test_targets_become_node_zeros_cancel_message(batch: bool, full: bool, step: Any,
                                                  target: str, message: Dict[str, Any]
                                                  ) -> None:
    assert target_of(batch, full, step) == target
    request = read_requests(with_request(None, 10, target, step))[0]
    assert cancel_message(request) == dict(message, type="cancel", signal=10)


def test_requests_are_numbered_in_order_and_capped() -> None:
    text = None
    for n in range(MAX_REQUESTS + 5):
        text = with_request(text, 10 + n % 2, "steps")
    requests = read_requests(text)
    assert len(requests) == MAX_REQUESTS
    assert [r["seq"] for r in requests] == list(range(6, MAX_REQUESTS + 6))
    step_cancel = read_requests(with_request(text, None, "step", 0))[-1]
    assert step_cancel == {"seq": MAX_REQUESTS + 6, "signal": None, "target": "step",
                           "step": 0}


def test_requeue_request_ends_the_whole_job_saying_so() -> None:
    """scontrol requeue's request: no signal, node 0 ends the job (its line then says
    ``DUE TO JOB REQUEUE``)."""
    (request,) = read_requests(with_request(None, None, REQUEUE))
    assert request == {"seq": 1, "signal": None, "target": "requeue"}
    assert cancel_message(request) == {"type": "cancel", "signal": None, "batch": False,
                                       "full": False, "requeue": True}


@pytest.mark.parametrize("text", [
    "", "not json", "{}", '[1, "x", null]',
    '[{"seq": 1, "signal": 10, "target": "nodes"}]',
    '[{"seq": "1", "signal": 10, "target": "steps"}]',
    '[{"seq": 1, "signal": 10, "target": "step"}]',
    '[{"seq": 1, "signal": null, "target": "steps"}]',
])
def test_malformed_annotations_hold_no_request(text: str) -> None:
    assert read_requests(text) == []
    assert read_requests(with_request(text, 12, "batch")) == [
        {"seq": 1, "signal": 12, "target": "batch"}]


def _rewrite(path: str, text: str) -> None:
    """As a kubelet does: a new file renamed over the old one."""
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def test_node_zero_carries_out_each_new_request_once(tmp_path: Any) -> None:
    path = str(tmp_path / REQUESTS_KEY)
    delivered: List[Dict[str, Any]] = []

    async def scenario() -> None:
        loop = asyncio.get_event_loop()
        first = with_request(None, 10, "steps")
        _rewrite(path, first)                  # present before the watch starts: carried out
        watch = asyncio.ensure_future(watch_requests(path, delivered.append, poll_s=0.01))

        async def until(count: int) -> None:
            deadline = loop.time() + 30
            while len(delivered) < count and loop.time() < deadline:
                await asyncio.sleep(0.01)

        await until(1)
        second = with_request(with_request(first, 12, "batch"), None, "step", 2)
        second = with_request(second, None, "step", 2)      # cancelled once only
        _rewrite(path, second)
        await until(3)
        _rewrite(path, second)                 # rewritten, nothing new
        _rewrite(path, "garbage")              # an edit by hand: ignored
        _rewrite(path, with_request(second, 15, "full"))
        await until(4)
        await asyncio.sleep(0.05)
        watch.cancel()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert [(m["signal"], m["batch"], m["full"], m.get("step")) for m in delivered] == [
        (10, False, False, None), (12, True, False, None), (None, False, False, 2),
        (15, False, True, None)]
    assert json.loads(open(path).read())[-1]["seq"] == 5
