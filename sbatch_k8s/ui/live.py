"""The live job table: one poller per console, one diff per open page.

:class:`JobFeed` reads the jobs every ``interval_s`` while a page listens (none: no reads):
squeue's view and sacct's history for each window a page asks for. Each page's
:class:`Subscription` applies its own filters (squeue's and sacct's options) to every new
look and gets only what changed since its last message: the rows to add or replace, the
keys to remove. :meth:`JobFeed.poke` makes the next look happen now (after an action of the
console's own, so the page shows it without waiting a period).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from parsers.job_records import JobRecord
from sbatch_k8s.ui.job_table import table_rows
from sbatch_k8s.ui.jobs_source import JobsSource


@dataclass
class Look:
    """One look at the jobs: when, squeue's records, sacct's per window start."""

    now: int
    active: List[JobRecord]
    history: Dict[int, List[JobRecord]]
    took_s: float = 0.0


@dataclass
class Subscription:
    """One page's filters, window and what it was last sent."""

    squeue_argv: List[str]
    sacct_argv: List[str]
    window: Tuple[int, int]
    sent: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    seen: int = 0


def rows_for(source: JobsSource, look: Look, subscription: Subscription
             ) -> List[Dict[str, Any]]:
    """The table a subscription's filters make of one look."""
    active = source.squeue_selection(look.active, subscription.squeue_argv, look.now)
    history = look.history.get(subscription.window[0], [])
    history = source.sacct_selection(history, subscription.sacct_argv, look.now)
    return table_rows(active, history, look.now)


def diff(sent: Dict[str, Dict[str, Any]], rows: Sequence[Dict[str, Any]]
         ) -> Tuple[List[Dict[str, Any]], List[str]]:
    """What changed from ``sent`` to ``rows``: rows to put, keys to remove."""
    current = {row["key"]: row for row in rows}
    put = [row for key, row in current.items() if sent.get(key) != row]
    removed = [key for key in sent if key not in current]
    return put, removed


class JobFeed:
    """Polls the jobs while pages listen, and wakes them at each new look."""

    def __init__(self, source: JobsSource, interval_s: float) -> None:
        self.source = source
        self.interval_s = interval_s
        self.look: Optional[Look] = None
        self.looks = 0
        self.subscriptions: List[Subscription] = []
        self._changed = asyncio.Condition()
        self._poke = asyncio.Event()
        self.error: Optional[str] = None

    def subscribe(self, squeue_argv: List[str], sacct_argv: List[str]) -> Subscription:
        """A page's filters (already checked by their parsers)."""
        now = int(time.time())
        subscription = Subscription(squeue_argv, sacct_argv,
                                    self.source.sacct_window(sacct_argv, now))
        self.subscriptions.append(subscription)
        self._poke.set()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self.subscriptions:
            self.subscriptions.remove(subscription)

    def poke(self) -> None:
        """Look again now."""
        self._poke.set()

    def _take(self, windows: Sequence[Tuple[int, int]]) -> Look:
        """One look (in a worker thread): squeue's records, sacct's per window."""
        started = time.monotonic()
        now = int(time.time())
        active = self.source.active_records(now)
        history = {start: self.source.history_records(start, max(end, now + 1))
                   for start, end in set(windows)}
        return Look(now, active, history, time.monotonic() - started)

    async def run(self) -> None:
        """Look every period while pages listen (at once when poked)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                await asyncio.wait_for(self._poke.wait(), self.interval_s)
            except asyncio.TimeoutError:
                pass
            self._poke.clear()
            if not self.subscriptions:
                continue
            windows = [s.window for s in self.subscriptions]
            try:
                look = await loop.run_in_executor(None, self._take, windows)
                self.error = None
            except Exception as e:  # shown on the page; the next period tries again
                self.error = f"{type(e).__name__}: {e}"
                look = None
            async with self._changed:
                self.look = look or self.look
                self.looks += 1
                self._changed.notify_all()

    async def next_message(self, subscription: Subscription) -> Dict[str, Any]:
        """The subscription's next message: its first table, then what changed."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.looks > subscription.seen)
            look, error = self.look, self.error
            subscription.seen = self.looks
        if look is None or subscription.window[0] not in look.history:
            return {"error": error} if error else {"put": [], "remove": []}
        loop = asyncio.get_running_loop()
        rows = await loop.run_in_executor(None, rows_for, self.source, look, subscription)
        put, removed = diff(subscription.sent, rows)
        subscription.sent = {row["key"]: row for row in rows}
        return {"now": look.now, "put": put, "remove": removed, "look_s": look.took_s,
                "error": error, "count": len(rows)}
