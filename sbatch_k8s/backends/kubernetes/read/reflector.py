"""One LIST+WATCH mirror of a collection (one kind, namespace and label selector), kept by a
thread of the warm command server (:mod:`.watch_cache`).

The loop is client-go's reflector, reduced: LIST (its ``resourceVersion`` is where the mirror
stands), then WATCH from there with ``allowWatchBookmarks``; every event and bookmark moves
:attr:`Reflector.rv` forward. A watch that ends by its ``timeoutSeconds`` is resumed from
:attr:`rv` at once. A kind the server does not serve (404 on LIST) is mirrored as empty, and
asked again every :data:`ABSENT_RECHECK_S`.

Unlike client-go, the mirror does not trust that the server's history still holds what it
holds. An API server restarted on an empty (or restored) etcd has a history that never
issued :attr:`rv`: a real one answers a watch from such a resourceVersion with silence (it
sends only events newer than it), so a mirror resumed there would serve vanished jobs for
ever. So after a failed watch (connection lost, 5xx: what a restart looks like; the mirror is
not :attr:`live` meanwhile, and readers ask the API server) the mirror first asks for the
server's current resourceVersion (a LIST of one object); one below :attr:`rv` means another
history, and a fresh LIST (which replaces the mirror whole, even with an older
resourceVersion). A fresh LIST also comes after 410 Gone, when an event or bookmark goes
back in resourceVersion, and at the latest :func:`relist_after_s` after the last one
(bounded staleness, whatever the server did unseen).

Every change to the mirror's fields happens under the shared lock and ends with
``notify_all`` on the shared condition: the server forks commands while holding that lock,
so a command always sees a whole mirror (see :mod:`.watch_cache`).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from sbatch_k8s.backends.kubernetes.api.client import CONNECT_TIMEOUT_S, KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import Kind

#: The server ends each watch after this long (client-go picks 5–10 min); jittered.
WATCH_TIMEOUT_S = 300
#: First and largest pause between attempts after a failure.
BACKOFF_FIRST_S = 0.2
BACKOFF_MAX_S = 15.0
#: How often a kind the server does not serve is asked for again.
ABSENT_RECHECK_S = 30.0
#: A watch the server ends this soon, having sent nothing, counts as a failure (no busy loop).
SHORTEST_WATCH_S = 1.0
#: The longest a mirror goes without a fresh LIST (``$SBATCHK8S_CACHE_RELIST_S`` changes it).
RELIST_S = 300.0


def relist_after_s(environ: Mapping[str, str]) -> float:
    """How long a mirror may go on from one LIST (at least a second)."""
    try:
        return max(1.0, float(environ.get("SBATCHK8S_CACHE_RELIST_S", RELIST_S)))
    except ValueError:
        return RELIST_S


def rv_number(text: Any) -> Optional[int]:
    """A resourceVersion as a number (etcd revisions are), or None when it is not one."""
    value = str(text or "")
    return int(value) if value.isdigit() else None


class Gone(Exception):
    """The server's history does not hold the watch's resourceVersion (410 Gone, or events
    going back): a fresh LIST is needed."""


class Reflector:
    """The mirror of one collection; see the module docstring. ``memo`` derives a value
    from each stored object once, when it arrives (readers then need not); ``keep`` says
    what of the object to keep beside it (default: all of it)."""

    def __init__(self, connect: Callable[[], KubeClient], kind: Kind, namespace: str,
                 selector: str, condition: threading.Condition,
                 memo: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 keep: Optional[Callable[[Dict[str, Any], Any], Dict[str, Any]]] = None
                 ) -> None:
        self.connect = connect
        self.kind = kind
        self.namespace = namespace
        self.selector = selector
        self.condition = condition
        self.memo = memo
        self.keep = keep
        #: name → (object, memo value); replaced whole on LIST, entry by entry on events.
        self.objects: Dict[str, Tuple[Dict[str, Any], Any]] = {}
        self.rv = 0
        #: The least resourceVersion readers need (writes our own commands made).
        self.required_rv = 0
        self.synced = False
        self.live = False
        self.absent = False
        self.last_error = ""
        self.lists = 0
        self.watches = 0
        self.listed_at = 0.0
        self.relist_s = relist_after_s(os.environ)
        self._stop = threading.Event()
        self._response: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"reflector {kind.plural} {namespace}")

    @property
    def collection_path(self) -> str:
        """The collection's URL path (what a write to it is matched by)."""
        return self.kind.collection_path(self.namespace)

    def start(self) -> "Reflector":
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the loop (the open watch is shut down so the thread does not linger)."""
        self._stop.set()
        response = self._response
        if response is not None:
            try:
                response.shutdown()
            except Exception:  # already closed
                pass

    def join(self, timeout_s: float) -> None:
        self._thread.join(timeout_s)

    def usable(self) -> bool:
        """Whether the mirror may answer a reader now (caller holds the lock or the mirror
        is a forked command's frozen copy)."""
        return self.synced and self.live and self.rv >= self.required_rv

    # -- the loop --------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = BACKOFF_FIRST_S
        client: Optional[KubeClient] = None
        need_list = True
        failed = False
        while not self._stop.is_set():
            try:
                if client is None:
                    client = self.connect()
                if failed and not need_list:
                    need_list = self._history_changed(client)
                failed = False
                if need_list:
                    self._list(client)
                    need_list = False
                    if self.absent:
                        self._stop.wait(ABSENT_RECHECK_S)
                        need_list = True
                        continue
                self._watch(client)
                backoff = BACKOFF_FIRST_S
                need_list = time.monotonic() - self.listed_at >= self.relist_s
            except Gone:
                need_list = True
            except Exception as e:  # any failure: not live, back off, check the history
                self._set(live=False, last_error=str(e) or type(e).__name__)
                failed = True
                if isinstance(e, KubeError) and e.status in (401, 403):
                    client = None  # credentials may have been renewed in the kubeconfig
                self._stop.wait(backoff * (0.5 + random.random()))
                backoff = min(backoff * 2, BACKOFF_MAX_S)
        self._set(live=False)

    def _set(self, **fields: Any) -> None:
        with self.condition:
            for name, value in fields.items():
                setattr(self, name, value)
            self.condition.notify_all()

    def _list(self, client: KubeClient) -> None:
        """The mirror replaced by a LIST; its resourceVersion is the server's now, even an
        older one (a history that went back: what our commands wrote before is gone too)."""
        items, rv_text = client.list(self.kind, self.namespace, self.selector)
        self.lists += 1
        self.listed_at = time.monotonic()
        if rv_text == "":  # 404: the kind is not served
            self._set(objects={}, absent=True, synced=True, live=True, rv=0)
            return
        rv = rv_number(rv_text)
        if rv is None:
            raise KubeError(f"resourceVersion {rv_text!r} is not a number: no watch cache")
        objects = {}
        for item in items:
            item.setdefault("kind", self.kind.kind)
            item.setdefault("apiVersion", self.kind.api_version)
            objects[item["metadata"]["name"]] = self._entry(item)
        went_back = self.synced and rv < self.rv
        self._set(objects=objects, rv=rv, synced=True, live=True, absent=False, last_error="",
                  required_rv=min(self.required_rv, rv) if went_back else self.required_rv)

    def _history_changed(self, client: KubeClient) -> bool:
        """Whether the server's resourceVersion is now below the mirror's (its history is not
        the one the mirror followed): a LIST of at most one object, read from etcd."""
        query = {"limit": "1"}
        if self.selector:
            query["labelSelector"] = self.selector
        answer = client.request("GET", self.kind.collection_path(self.namespace), query)
        current = rv_number((answer.get("metadata") or {}).get("resourceVersion"))
        return current is None or current < self.rv

    def _entry(self, obj: Dict[str, Any]) -> Tuple[Dict[str, Any], Any]:
        """What the mirror holds for ``obj``: (the object or what ``keep`` keeps, memo)."""
        if self.memo is None:
            return obj, None
        try:
            memo = self.memo(obj)
        except Exception as e:  # the reader reports it as it would for a listed object
            return obj, e
        return (self.keep(obj, memo) if self.keep is not None else obj), memo

    def _watch(self, client: KubeClient) -> None:
        due_s = self.listed_at + self.relist_s - time.monotonic()
        timeout_s = max(2, int(min(WATCH_TIMEOUT_S * (1 + random.random() * 0.2), due_s)))
        query = {"watch": "true", "resourceVersion": str(self.rv),
                 "allowWatchBookmarks": "true", "timeoutSeconds": str(timeout_s)}
        if self.selector:
            query["labelSelector"] = self.selector
        self.watches += 1
        response = open_stream(client, self.kind.collection_path(self.namespace), query,
                               read_timeout_s=timeout_s + 30.0)
        self._response = response
        began, events = time.monotonic(), 0
        try:
            self._set(live=True, last_error="")
            for event in watch_events(response):
                if self._stop.is_set():
                    return
                self._apply(event)
                events += 1
        finally:
            self._response = None
            response.release_conn()
        if not events and time.monotonic() - began < SHORTEST_WATCH_S:
            raise KubeError("the API server ended the watch at once")

    def _apply(self, event: Dict[str, Any]) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone(obj.get("message", "Gone"))
            raise KubeError(str(obj.get("message") or obj), int(obj.get("code") or 0))
        rv = rv_number((obj.get("metadata") or {}).get("resourceVersion"))
        if rv is None:
            raise KubeError("watch event without a numeric resourceVersion")
        if rv < self.rv:
            raise Gone(f"the watch went back from resourceVersion {self.rv} to {rv}")
        if kind == "BOOKMARK":
            self._set(rv=max(self.rv, rv))
            return
        name = obj["metadata"]["name"]
        value = None if kind == "DELETED" else self._entry(obj)
        with self.condition:
            if value is None:
                self.objects.pop(name, None)
            else:
                self.objects[name] = value
            self.rv = max(self.rv, rv)
            self.condition.notify_all()


def open_stream(client: KubeClient, path: str, query: Dict[str, str],
                read_timeout_s: float) -> Any:
    """A streaming GET through the client's ``ApiClient`` (its auth and TLS): the open
    urllib3 response, or KubeError with the server's message (410 raises :class:`Gone`)."""
    api = client.api_client
    _, url, headers, _, _ = api.param_serialize(
        method="GET", resource_path=path, query_params=list(query.items()),
        header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
    try:
        answer = api.call_api("GET", url, header_params=headers,
                              _request_timeout=(CONNECT_TIMEOUT_S, read_timeout_s))
    except Exception as e:
        raise KubeError(f"watch {path}: {e}") from e
    response = answer.response
    if answer.status >= 300:
        body = response.data or b""
        response.release_conn()
        if answer.status == 410:
            raise Gone(body[:200].decode("utf-8", "replace"))
        raise KubeError(f"watch {path}: HTTP {answer.status}: "
                        f"{body[:200].decode('utf-8', 'replace')}", answer.status)
    return response


def watch_events(response: Any) -> Iterator[Dict[str, Any]]:
    """The events of a watch stream (one JSON document a line), as they arrive."""
    pending = b""
    for chunk in response.stream(65536, decode_content=True):
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)
    if pending.strip():
        yield json.loads(pending)
