"""The control-loop thread: reconcile when the store changes, and at least every poll.

Each loop subscribes to the store (all resources), wakes on an event of the storage keys it
cares about, lets a short burst of further events collect (``settle_s``), then reconciles the
whole state. The poll is a backstop for time-driven work (deadlines, TTLs). A failing
reconcile prints its traceback and the loop carries on, as a real controller requeues.
"""

from __future__ import annotations

import abc
import sys
import threading
import time
import traceback
from typing import Iterable, Optional

from tests.apiserver import errors
from tests.apiserver.registry import Api
from tests.apiserver.resources import Resource


class Loop(threading.Thread, metaclass=abc.ABCMeta):
    """Base class: subclasses define :meth:`reconcile` and the keys they watch."""

    keys: Iterable[str] = ()
    poll_s = 0.5
    settle_s = 0.005

    def __init__(self, api: Api) -> None:
        super().__init__(name=f"emulated-{type(self).__name__}", daemon=True)
        self.api = api
        self._stopping = threading.Event()
        self.passes = 0

    def resource(self, group: str, version: str, plural: str) -> Resource:
        """A served resource row (these loops only use built-in ones)."""
        row = self.api.resources.lookup(group, version, plural)
        assert row is not None, f"{group}/{version}/{plural} is not served"
        return row

    def stop(self) -> None:
        """Ask the loop to end (it finishes its current pass)."""
        self._stopping.set()

    def run(self) -> None:
        store = self.api.store
        watched = set(self.keys)
        sub, _ = store.subscribe(None, None, None)
        try:
            dirty = True
            while not self._stopping.is_set() and not store.closed:
                if dirty:
                    self._reconcile_safely()
                deadline = time.monotonic() + self.poll_s
                dirty = False
                while not dirty and not self._stopping.is_set():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        dirty = True
                        break
                    event = sub.next(remaining)
                    if event is None:
                        if store.closed:
                            return
                        continue
                    dirty = not watched or event.key in watched
                if dirty:
                    time.sleep(self.settle_s)
                    while not sub.events.empty():
                        if sub.events.get_nowait() is None:
                            return
        finally:
            store.unsubscribe(sub)

    def _reconcile_safely(self) -> None:
        try:
            self.reconcile()
        except errors.ApiError as error:
            if error.code not in (404, 409):
                print(f"{self.name}: {error.code} {error.message}", file=sys.stderr)
        except Exception:  # noqa: BLE001 (a controller survives its bugs; the trace shows)
            if not self.api.store.closed:
                traceback.print_exc()
        self.passes += 1

    @abc.abstractmethod
    def reconcile(self) -> None:
        """Bring the world one step closer to the desired state."""


def wait_for_pass(loop: Loop, timeout_s: float = 5.0) -> Optional[int]:
    """Block until ``loop`` completes one more pass (tests); None on timeout."""
    start = loop.passes
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if loop.passes > start:
            return loop.passes
        time.sleep(0.01)
    return None
