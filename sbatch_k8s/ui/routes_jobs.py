"""Endpoints of the console as a whole: who it acts as, the job table (once, or live), the
cluster, and submitting (lint as one types, then sbatch).

==========================  ===================================================
``GET /api/session``         who, which backend and cluster, the table's columns
``GET /api/jobs``            the table once (squeue's filters as query fields)
``GET /api/jobs/live``       the table as server-sent events: rows put, keys removed
``GET /api/cluster``         sinfo's listing, each node's CPUs/GPUs and jobs
``POST /api/lint``           ``sbatch --k8s-lint`` of a script and options
``POST /api/submit``         ``sbatch`` of a script, options, working directory
==========================  ===================================================
"""

from __future__ import annotations

import time
from typing import Any, Dict, Tuple

from aiohttp import web

from sbatch_k8s.ui.app import console_of, in_thread, json_response, refused
from sbatch_k8s.ui.job_table import columns_json, filter_argv, table_rows
from sbatch_k8s.ui.sse import sse_message, sse_response
from sbatch_k8s.ui.views import to_json

#: A message event every this many seconds keeps idle connections (and proxies) open.
KEEPALIVE_S = 15.0


async def session(request: web.Request) -> web.Response:
    console = console_of(request)
    identity = await in_thread(console.source.identity)
    return json_response({"identity": to_json(identity), "columns": columns_json(),
                          "interval_s": console.feed.interval_s})


def _checked_filters(request: web.Request) -> Tuple[list, list]:
    """squeue's and sacct's argv for the query's filters, each read by its parser now
    (a bad value is refused before anything is listed)."""
    source = console_of(request).source
    squeue, sacct = filter_argv(request.query)
    request["command"] = "squeue"
    source.squeue_selection([], squeue, int(time.time()))
    request["command"] = "sacct"
    source.sacct_window(sacct, int(time.time()))
    source.sacct_selection([], sacct, int(time.time()))
    return squeue, sacct


async def jobs(request: web.Request) -> web.Response:
    """The table once, as the live feed would first send it."""
    source = console_of(request).source
    squeue, sacct = await in_thread(_checked_filters, request)

    def table() -> Dict[str, Any]:
        now = int(time.time())
        start, end = source.sacct_window(sacct, now)
        active = source.squeue_selection(source.active_records(now), squeue, now)
        history = source.sacct_selection(source.history_records(start, max(end, now + 1)),
                                         sacct, now)
        return {"now": now, "columns": columns_json(), "rows": table_rows(active, history, now)}
    return json_response(await in_thread(table))


async def jobs_live(request: web.Request) -> web.StreamResponse:
    """The table, then its changes at every look, until the page goes."""
    import asyncio

    feed = console_of(request).feed
    squeue, sacct = await in_thread(_checked_filters, request)
    response = await sse_response(request)
    subscription = feed.subscribe(squeue, sacct)
    try:
        while True:
            try:
                message = await asyncio.wait_for(feed.next_message(subscription),
                                                 KEEPALIVE_S)
            except asyncio.TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            await sse_message(response, message)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        feed.unsubscribe(subscription)
    return response


async def cluster(request: web.Request) -> web.Response:
    from sbatch_k8s.ui.cluster_view import cluster_json

    source = console_of(request).source

    def view() -> Dict[str, Any]:
        now = int(time.time())
        return cluster_json(source.partitions(), source.jobs_on_nodes(now), now)
    return json_response(await in_thread(view))


async def _form(request: web.Request) -> Dict[str, str]:
    data = await request.json()
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(text="a JSON object is expected")
    return {str(k): "" if v is None else str(v) for k, v in data.items()}


async def lint(request: web.Request) -> web.Response:
    from sbatch_k8s.ui.jobs_source.submission import options_argv

    form = await _form(request)
    request["command"] = "sbatch"
    result = await in_thread(console_of(request).source.lint, form.get("script", ""),
                             options_argv(form.get("options", "")))
    return json_response(to_json(result))


async def submit(request: web.Request) -> web.Response:
    from sbatch_k8s.ui.jobs_source.submission import options_argv

    console = console_of(request)
    form = await _form(request)
    request["command"] = "sbatch"
    if not form.get("script", "").strip():
        return refused(400, "sbatch: error: the script is empty")
    work_dir = form.get("work_dir") or console.source.work_dir
    result = await in_thread(console.source.submit, form["script"],
                             form.get("script_name", ""), options_argv(form.get("options", "")),
                             work_dir)
    console.feed.poke()
    return json_response(to_json(result), 200 if result.ok else 422)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/session", session)
    app.router.add_get("/api/jobs", jobs)
    app.router.add_get("/api/jobs/live", jobs_live)
    app.router.add_get("/api/cluster", cluster)
    app.router.add_post("/api/lint", lint)
    app.router.add_post("/api/submit", submit)
