"""Watch: a chunked stream of ``{"type", "object"}`` lines, one per matching change.

Semantics of the real server: no ``resourceVersion`` (or ``0``) starts with a synthetic
``ADDED`` per existing object; a revision resumes after it (410 ``Expired`` as an ``ERROR``
event when it is older than the kept history). Selectors apply to both the old and the new
state, so an object that starts matching arrives as ``ADDED`` and one that stops matching as
``DELETED``. ``timeoutSeconds`` ends the stream; ``allowWatchBookmarks`` adds ``BOOKMARK``
events while idle. The stream also ends when the cluster stops.
"""

from __future__ import annotations

import json
import time
from typing import Callable, Dict, Optional

from tests.apiserver import errors
from tests.apiserver.resources import Resource
from tests.apiserver.store import Event, Obj, Store

DEFAULT_TIMEOUT_S = 1800.0
BOOKMARK_EVERY_S = 2.0


def translate(event: Event, matches: Callable[[Obj], bool]) -> Optional[str]:
    """The event type a selector-filtered watcher sees, or None when it sees nothing."""
    now = matches(event.obj)
    before = event.old is not None and matches(event.old)
    if event.type == "DELETED":
        return "DELETED" if before else None
    if event.type == "ADDED":
        return "ADDED" if now else None
    if now and before:
        return "MODIFIED"
    if now:
        return "ADDED"
    return "DELETED" if before else None


def _line(kind: str, res: Resource, obj: Obj) -> bytes:
    dressed = dict(obj, apiVersion=res.api_version, kind=res.kind)
    return json.dumps({"type": kind, "object": dressed}).encode() + b"\n"


def serve(store: Store, res: Resource, namespace: Optional[str], query: Dict[str, str],
          matches: Callable[[Obj], bool], write: Callable[[bytes], None]) -> None:
    """Write watch events through ``write`` until timeout, shutdown or a broken connection."""
    rv_text = query.get("resourceVersion", "")
    since = int(rv_text) if rv_text not in ("", "0") and rv_text.isdigit() else None
    timeout_s = float(query.get("timeoutSeconds") or DEFAULT_TIMEOUT_S)
    deadline = time.monotonic() + timeout_s
    bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1", "t")
    try:
        with store.lock:
            initial = [] if since is not None else store.list(res.key, namespace or None)
            sub, replay = store.subscribe(res.key, namespace or None, since)
    except errors.ApiError as error:
        write(json.dumps({"type": "ERROR", "object": error.status()}).encode() + b"\n")
        return
    try:
        for obj in initial:
            if matches(obj):
                write(_line("ADDED", res, obj))
        for event in replay:
            kind = translate(event, matches)
            if kind:
                write(_line(kind, res, event.obj))
        last_sent = time.monotonic()
        while not store.closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = sub.next(min(remaining, BOOKMARK_EVERY_S / 2 if bookmarks else 1.0))
            if event is None:
                if bookmarks and time.monotonic() - last_sent >= BOOKMARK_EVERY_S:
                    write(_bookmark(store, res, sub))
                    last_sent = time.monotonic()
                continue
            kind = translate(event, matches)
            if kind:
                write(_line(kind, res, event.obj))
                last_sent = time.monotonic()
    finally:
        store.unsubscribe(sub)


def _bookmark(store: Store, res: Resource, sub: object) -> bytes:
    """A BOOKMARK at the current revision (taken under the lock, so no event is skipped)."""
    with store.lock:
        queue_empty = getattr(sub, "events").empty()
        rv = store.rv
    if not queue_empty:
        return b""
    return json.dumps({"type": "BOOKMARK", "object": {
        "kind": res.kind, "apiVersion": res.api_version,
        "metadata": {"resourceVersion": str(rv)}}}).encode() + b"\n"
