"""In-memory object store with a global resourceVersion counter and watch fan-out.

Like etcd under a kube-apiserver: every write takes the next revision (one counter for all
resources, so ``resourceVersion`` strings compare across kinds), and each write is an event
(``ADDED``/``MODIFIED``/``DELETED``) kept in a bounded history so a watch can resume from a
recent revision (older ones get 410 Expired, as a compacted etcd does).

Stored dicts are never mutated in place: writers store new dicts, readers get copies. One
re-entrant lock (:attr:`Store.lock`) serialises writes; the semantic layer holds it across a
read-modify-write so compare-and-swap on ``resourceVersion`` is exact.
"""

from __future__ import annotations

import collections
import json
import queue
import threading
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, List, Optional, Tuple

from tests.apiserver import errors

Obj = Dict[str, Any]


def clone(obj: Any) -> Any:
    """A deep copy of JSON data (faster than ``copy.deepcopy`` for plain dicts and lists)."""
    return json.loads(json.dumps(obj))


@dataclass(frozen=True)
class Event:
    """One write: revision, storage key (``group/plural``), type, new and previous object."""

    rv: int
    key: str
    type: str
    obj: Obj
    old: Optional[Obj]

    @property
    def namespace(self) -> str:
        """The object's namespace ('' when cluster-scoped)."""
        return self.obj.get("metadata", {}).get("namespace", "")


@dataclass(eq=False)
class Subscription:
    """A watcher's queue of events for one storage key (or all keys when ``key`` is None)."""

    key: Optional[str]
    namespace: Optional[str]
    events: "queue.SimpleQueue[Optional[Event]]" = field(default_factory=queue.SimpleQueue)

    def wants(self, event: Event) -> bool:
        """True when the event is of this subscription's resource and namespace."""
        return ((self.key is None or event.key == self.key)
                and (not self.namespace or event.namespace == self.namespace))

    def next(self, timeout_s: float) -> Optional[Event]:
        """The next event, or None after ``timeout_s`` or when the store closed."""
        try:
            return self.events.get(timeout=max(timeout_s, 0.0))
        except queue.Empty:
            return None


class Store:
    """Objects by storage key, then ``(namespace, name)``; see the module docstring."""

    def __init__(self, first_rv: int = 1000, history: int = 50_000) -> None:
        self.lock = threading.RLock()
        self._objects: Dict[str, Dict[Tuple[str, str], Obj]] = {}
        self._rv = first_rv
        self._history: Deque[Event] = collections.deque(maxlen=history)
        self._subscriptions: List[Subscription] = []
        self.closed = False

    @property
    def rv(self) -> int:
        """The latest revision."""
        return self._rv

    def get(self, key: str, namespace: str, name: str) -> Optional[Obj]:
        """A copy of one object, or None."""
        with self.lock:
            found = self._objects.get(key, {}).get((namespace, name))
            return clone(found) if found is not None else None

    def list(self, key: str, namespace: Optional[str] = None) -> List[Obj]:
        """Copies of the objects of a key (of one namespace when given), by namespace, name."""
        with self.lock:
            table = self._objects.get(key, {})
            picked = [table[k] for k in sorted(table) if not namespace or k[0] == namespace]
            return clone(picked)

    def peek(self, key: str) -> List[Obj]:
        """The stored objects of a key themselves, uncopied: read-only, for the control loops
        (stored dicts are replaced on write, never mutated, so a reader's view stays whole)."""
        with self.lock:
            table = self._objects.get(key, {})
            return [table[k] for k in sorted(table)]

    def keys(self) -> List[str]:
        """Storage keys that hold at least one object."""
        with self.lock:
            return [k for k, v in self._objects.items() if v]

    def put(self, key: str, obj: Obj) -> Obj:
        """Store ``obj`` (taken over, not copied) under a new revision; return a copy."""
        with self.lock:
            meta = obj["metadata"]
            where = (meta.get("namespace", ""), meta["name"])
            table = self._objects.setdefault(key, {})
            old = table.get(where)
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            table[where] = obj
            self._publish(Event(self._rv, key, "MODIFIED" if old else "ADDED", obj, old))
            return clone(obj)

    def remove(self, key: str, namespace: str, name: str,
               final: Optional[Obj] = None) -> Optional[Obj]:
        """Remove an object; the DELETED event carries it (or ``final``, its last state when
        an update removed it) at a new revision. Returns a copy."""
        with self.lock:
            old = self._objects.get(key, {}).pop((namespace, name), None)
            if old is None:
                return None
            self._rv += 1
            last = final if final is not None else old
            gone = dict(last, metadata=dict(last["metadata"], resourceVersion=str(self._rv)))
            self._publish(Event(self._rv, key, "DELETED", gone, old))
            return clone(gone)

    def _publish(self, event: Event) -> None:
        self._history.append(event)
        for sub in self._subscriptions:
            if sub.wants(event):
                sub.events.put(event)

    def subscribe(self, key: Optional[str], namespace: Optional[str],
                  since_rv: Optional[int]) -> Tuple[Subscription, List[Event]]:
        """Start receiving events; also return the kept events after ``since_rv``.

        Raises 410 Expired when ``since_rv`` is older than the kept history.
        """
        with self.lock:
            sub = Subscription(key, namespace)
            replay: List[Event] = []
            if since_rv is not None and since_rv < self._rv:
                oldest = self._history[0].rv if self._history else self._rv + 1
                if since_rv < oldest - 1:
                    raise errors.expired(since_rv, oldest)
                replay = [e for e in self._history if e.rv > since_rv and sub.wants(e)]
            self._subscriptions.append(sub)
            return sub, replay

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering events to ``sub``."""
        with self.lock:
            if sub in self._subscriptions:
                self._subscriptions.remove(sub)

    def close(self) -> None:
        """Wake every subscriber with the end marker (None); used at shutdown."""
        with self.lock:
            self.closed = True
            for sub in self._subscriptions:
                sub.events.put(None)
            self._subscriptions.clear()
