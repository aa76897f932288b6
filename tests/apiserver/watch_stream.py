"""Watch: a chunked stream of ``{"type", "object"}`` lines, one per matching change.

Semantics of the real server: no ``resourceVersion`` (or ``0``) starts with a synthetic
``ADDED`` per existing object; a revision resumes after it (410 ``Expired`` as an ``ERROR``
event when it is older than the kept history). A revision the server never reached (a
client's from before the server restarted on an empty store) is served as the real watch
cache serves it: only events newer than it, and no bookmark before it — silence, until the
store's counter passes it (seen on a real v1.28 API server). Selectors apply to both the old
and the new state, so an object that starts matching arrives as ``ADDED`` and one that stops
matching as ``DELETED`` (carrying its previous content at the new resourceVersion).
``timeoutSeconds`` ends the stream; ``allowWatchBookmarks`` adds ``BOOKMARK`` events while
idle. The stream also ends when the cluster stops.

:func:`drop_watches` breaks every open stream of a store as a network failure or an API
server restart would: the connection closes mid-stream, without the chunked terminator, so
the client sees an error rather than a clean end (what a watch cache must reconnect from).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Callable, Dict, List, Optional

from tests.apiserver import errors
from tests.apiserver.resources import Resource
from tests.apiserver.store import Event, Obj, Store, Subscription

DEFAULT_TIMEOUT_S = 1800.0
BOOKMARK_EVERY_S = 2.0

#: Open streams by store (``id(store)``): the subscriptions :func:`drop_watches` breaks.
_open: Dict[int, List[Subscription]] = {}
_dropped: "set[int]" = set()
_open_lock = threading.Lock()


def open_watches(store: Store) -> int:
    """How many watch streams of ``store`` are open now."""
    with _open_lock:
        return len(_open.get(id(store), []))


def drop_watches(store: Store) -> int:
    """Break every open watch stream of ``store`` (see the module docstring); how many."""
    with _open_lock:
        subs = list(_open.get(id(store), []))
        _dropped.update(id(sub) for sub in subs)
    for sub in subs:
        sub.events.put(None)
    return len(subs)


def _track(store: Store, sub: Subscription, add: bool) -> None:
    with _open_lock:
        subs = _open.setdefault(id(store), [])
        if add:
            subs.append(sub)
            return
        if sub in subs:
            subs.remove(sub)
        if not subs:
            _open.pop(id(store), None)
        _dropped.discard(id(sub))


def _was_dropped(sub: Subscription) -> bool:
    with _open_lock:
        return id(sub) in _dropped


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


def _event_line(kind: str, res: Resource, event: Event) -> bytes:
    """An event as a watcher sees it. An object that stopped matching the selector comes as
    DELETED with its previous content at the event's resourceVersion, as the real server's
    watch cache sends it (the new state is not the watcher's business)."""
    obj = event.obj
    if kind == "DELETED" and event.type != "DELETED" and event.old is not None:
        obj = dict(event.old, metadata=dict(event.old.get("metadata") or {},
                                            resourceVersion=str(event.rv)))
    return _line(kind, res, obj)


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
    _track(store, sub, True)
    floor = since or 0          # nothing at or before the revision asked for
    try:
        for obj in initial:
            if matches(obj):
                write(_line("ADDED", res, obj))
        for event in replay:
            kind = translate(event, matches)
            if kind:
                write(_event_line(kind, res, event))
        last_sent = time.monotonic()
        while not store.closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = sub.next(min(remaining, BOOKMARK_EVERY_S / 2 if bookmarks else 1.0))
            if _was_dropped(sub):
                raise ConnectionResetError("watch dropped")
            if event is None:
                if bookmarks and time.monotonic() - last_sent >= BOOKMARK_EVERY_S:
                    write(_bookmark(store, res, sub, floor))
                    last_sent = time.monotonic()
                continue
            if event.rv <= floor:
                continue
            kind = translate(event, matches)
            if kind:
                write(_event_line(kind, res, event))
                last_sent = time.monotonic()
    finally:
        store.unsubscribe(sub)
        _track(store, sub, False)


def _bookmark(store: Store, res: Resource, sub: object, floor: int) -> bytes:
    """A BOOKMARK at the current revision (taken under the lock, so no event is skipped);
    none before the revision the watch began at."""
    with store.lock:
        queue_empty = getattr(sub, "events").empty()
        rv = store.rv
    if not queue_empty or rv < floor:
        return b""
    return json.dumps({"type": "BOOKMARK", "object": {
        "kind": res.kind, "apiVersion": res.api_version,
        "metadata": {"resourceVersion": str(rv)}}}).encode() + b"\n"
