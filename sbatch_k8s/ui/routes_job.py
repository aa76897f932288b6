"""Endpoints of one job (``{job}``: ``12``, ``12_3``, ``12_[4-9]``), the caller's own unless
an operator asks (another user's job is unknown here, as to sacct).

==================================  =================================================
``GET  /api/jobs/{job}``             record, steps, why it waits, dependencies, actions
``GET  /api/jobs/{job}/nodes``       its nodes (pods) and their states
``GET  /api/jobs/{job}/logs``        the logs it has: each node's, its output files
``GET  /api/jobs/{job}/logs/{key}``  one log, byte for byte (a download)
``GET  …/logs/{key}/live``           one log as events: what it holds, then what comes
``GET  /api/jobs/{job}/logs.zip``    every log in one zip
``GET  /api/jobs/{job}/events``      what happened, in time order
``GET  /api/jobs/{job}/yaml``        its objects (locally: its description)
``GET  /api/jobs/{job}/script``      the batch script as submitted
``GET  /api/jobs/{job}/samples``     resource use over time, per node (or why none)
``GET  /api/jobs/{job}/resubmission``  what "submit again" runs
``POST /api/jobs/{job}/{action}``    cancel (``{"step": …}``), hold, release, requeue,
                                     resubmit
==================================  =================================================
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Callable, Dict, Optional

from aiohttp import web

from parsers.job_records import JobRecord
from sbatch_k8s.ui.app import console_of, in_thread, json_response, refused
from sbatch_k8s.ui.job_detail import job_json
from sbatch_k8s.ui.sse import sse_message, sse_response
from sbatch_k8s.inspection.values import Unavailable
from sbatch_k8s.ui.views import to_json

#: A log event carries at most this much (what came meanwhile waits for the next one).
LOG_EVENT_BYTES = 1 << 18
#: Followed log bytes held for a slow page before the reader thread waits.
LOG_QUEUE_CHUNKS = 256
UNKNOWN_JOB = "Invalid job id specified"


async def _record(request: web.Request) -> Optional[JobRecord]:
    return await in_thread(console_of(request).source.find, request.match_info["job"])


def _with_record(handler: Callable[[web.Request, JobRecord], Any]) -> Callable[..., Any]:
    """The handler, given the job's record (404 in Slurm's words when unknown)."""
    async def wrapped(request: web.Request) -> web.StreamResponse:
        record = await _record(request)
        if record is None:
            return refused(404, UNKNOWN_JOB)
        return await handler(request, record)
    return wrapped


def _available(value: Any, key: str) -> Dict[str, Any]:
    """``{key: value}``, or the :class:`Unavailable`'s ``{"available": false, "why": …}``."""
    if isinstance(value, Unavailable):
        return to_json(value)
    return {"available": True, key: value}


async def job(request: web.Request, record: JobRecord) -> web.Response:
    source = console_of(request).source
    record = await in_thread(source.with_history, record)
    running = await in_thread(source.running_steps, record)
    return json_response(job_json(record, running, int(time.time())))


async def nodes(request: web.Request, record: JobRecord) -> web.Response:
    return json_response(to_json(await in_thread(console_of(request).source.nodes, record)))


async def logs(request: web.Request, record: JobRecord) -> web.Response:
    sources = await in_thread(console_of(request).source.log_sources, record)
    return json_response(to_json(sources))


async def _handle(request: web.Request, record: JobRecord):  # type: ignore[no-untyped-def]
    source = console_of(request).source
    key = request.match_info["key"]
    found = [s for s in await in_thread(source.log_sources, record) if s.key == key]
    handle = await in_thread(source.log, record, key)
    return (found[0] if found else None), handle


async def log_file(request: web.Request, record: JobRecord) -> web.StreamResponse:
    """One log's bytes as they are, as a download."""
    described, handle = await _handle(request, record)
    if described is None or handle is None:
        return refused(404, f"job {record.job_id_text} has no log {request.match_info['key']}"
                            + (f": {described.why}" if described is not None else ""))
    response = web.StreamResponse(headers={
        "Content-Type": "application/octet-stream",
        "Content-Disposition": f'attachment; filename="{record.job_id_text}-'
                               f'{described.file_name}"'})
    await response.prepare(request)
    chunks = handle.chunks()
    while True:
        chunk = await in_thread(next, chunks, None)
        if chunk is None:
            break
        await response.write(chunk)
    await response.write_eof()
    return response


async def log_live(request: web.Request, record: JobRecord) -> web.StreamResponse:
    """One log as events (``{"offset", "text"}``), then ``end`` once it is complete."""
    import codecs

    described, handle = await _handle(request, record)
    if handle is None:
        return refused(404, described.why if described is not None else "no such log")
    loop = asyncio.get_running_loop()
    queue: "asyncio.Queue[Optional[bytes]]" = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for chunk in handle.follow(stop):
                while queue.qsize() > LOG_QUEUE_CHUNKS and not stop.is_set():
                    stop.wait(0.05)     # the page is slower than the log: wait for it
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
        finally:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:        # the console is closing
                pass
    thread = threading.Thread(target=pump, name="console-log", daemon=True)
    response = await sse_response(request)
    thread.start()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    offset = 0
    try:
        ended = False
        while not ended:
            chunk = await queue.get()
            pieces = []
            while chunk is not None:
                pieces.append(chunk)
                if sum(map(len, pieces)) >= LOG_EVENT_BYTES or queue.empty():
                    break
                chunk = queue.get_nowait()
            ended = chunk is None
            data = b"".join(pieces)
            if data:
                await sse_message(response, {"offset": offset, "bytes": len(data),
                                             "text": decoder.decode(data)})
                offset += len(data)
        await sse_message(response, {"offset": offset}, event="end")
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        stop.set()
    return response


async def logs_zip(request: web.Request, record: JobRecord) -> web.StreamResponse:
    """Every available log of the job in one zip (``<job>/<log file>``)."""
    from sbatch_k8s.ui.log_archive import write_archive

    source = console_of(request).source
    archive = await in_thread(write_archive, source, record)
    try:
        response = web.StreamResponse(headers={
            "Content-Type": "application/zip",
            "Content-Disposition": f'attachment; filename="job-{record.job_id_text}-logs.zip"'})
        await response.prepare(request)
        while True:
            data = await in_thread(archive.read, 1 << 20)
            if not data:
                break
            await response.write(data)
        await response.write_eof()
        return response
    finally:
        archive.close()


async def events(request: web.Request, record: JobRecord) -> web.Response:
    source = console_of(request).source
    record = await in_thread(source.with_history, record)
    found = await in_thread(source.events, record)
    return json_response({"events": to_json(found)})


async def yaml_text(request: web.Request, record: JobRecord) -> web.Response:
    return json_response(_available(await in_thread(console_of(request).source.yaml, record),
                                    "text"))


async def script(request: web.Request, record: JobRecord) -> web.Response:
    return json_response(_available(
        await in_thread(console_of(request).source.script, record), "text"))


async def samples(request: web.Request, record: JobRecord) -> web.Response:
    return json_response(to_json(console_of(request).source.samples(record)))


async def resubmission(request: web.Request, record: JobRecord) -> web.Response:
    from sbatch_k8s.ui.jobs_source.submission import command_text

    found = await in_thread(console_of(request).source.resubmission, record)
    if isinstance(found, Unavailable):
        return json_response(to_json(found))
    return json_response({"available": True, "submission": to_json(found),
                          "command": command_text(found)})


async def act(request: web.Request, record: JobRecord) -> web.Response:
    """One action; its result in Slurm's words (HTTP 200 either way: a refusal is an
    answer, not a failure of the request)."""
    console = console_of(request)
    source = console.source
    action = request.match_info["action"]
    if action == "resubmit":
        found = await in_thread(source.resubmission, record)
        if isinstance(found, Unavailable):
            return json_response({"ok": False, "message": found.why})
        result: Any = await in_thread(source.submit, found.script, found.script_name,
                                      list(found.argv), found.work_dir)
    else:
        body = await request.json() if request.can_read_body else {}
        body = body if isinstance(body, dict) else {}
        step = str(body["step"]) if body.get("step") not in (None, "") else None
        whole = bool(body.get("whole_array"))
        verbs = {"cancel": lambda: source.cancel(record, step, whole),
                 "hold": lambda: source.hold(record),
                 "release": lambda: source.release(record),
                 "requeue": lambda: source.requeue(record)}
        if action not in verbs:
            return refused(404, f"no action {action}")
        result = await in_thread(verbs[action])
    console.feed.poke()
    return json_response(to_json(result))


def add_routes(app: web.Application) -> None:
    job_path = "/api/jobs/{job:[0-9]+(_[0-9]+|_\\[[^/]+\\])?}"
    app.router.add_get(job_path, _with_record(job))
    app.router.add_get(job_path + "/nodes", _with_record(nodes))
    app.router.add_get(job_path + "/logs", _with_record(logs))
    app.router.add_get(job_path + "/logs.zip", _with_record(logs_zip))
    app.router.add_get(job_path + "/logs/{key}", _with_record(log_file))
    app.router.add_get(job_path + "/logs/{key}/live", _with_record(log_live))
    app.router.add_get(job_path + "/events", _with_record(events))
    app.router.add_get(job_path + "/yaml", _with_record(yaml_text))
    app.router.add_get(job_path + "/script", _with_record(script))
    app.router.add_get(job_path + "/samples", _with_record(samples))
    app.router.add_get(job_path + "/resubmission", _with_record(resubmission))
    app.router.add_post(job_path + "/{action}", _with_record(act))
