"""Server-sent events: the console's live channel to the page (jobs, logs)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web


async def sse_message(response: web.StreamResponse, data: Any, event: str = "") -> None:
    """One server-sent event."""
    head = f"event: {event}\n" if event else ""
    await response.write(f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"
                         .encode("utf-8"))


async def sse_response(request: web.Request) -> web.StreamResponse:
    """A prepared event stream."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    return response
