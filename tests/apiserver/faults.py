"""Fault injection: make matching requests fail, stall or lose their connection.

A fault matches on HTTP method, a regular expression searched in the URL path and, when
given, one searched in its decoded query (``labelSelector=…``), fires
``times`` times (None: forever) and then does one of: answer ``status`` with a Status body
(429 adds ``Retry-After``), sleep ``delay_s`` first (to trip client timeouts; with no status
the request then proceeds normally), or ``reset`` the TCP connection without an answer.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import List, Optional

from tests.apiserver import errors


@dataclass
class Fault:
    """One injected fault; ``hits`` counts how often it fired."""

    method: Optional[str]
    path: str
    status: Optional[int]
    times: Optional[int]
    body_message: str
    delay_s: float
    reset: bool
    retry_after_s: int
    query: str = ""
    hits: int = 0

    def matches(self, method: str, path: str, query: str = "") -> bool:
        """True when the fault applies to this request and has firings left."""
        return ((self.method is None or self.method.upper() == method)
                and re.search(self.path, path) is not None
                and (not self.query or re.search(self.query, query) is not None)
                and (self.times is None or self.hits < self.times))

    def error(self) -> Optional[errors.ApiError]:
        """The error to answer with, or None (delay only / reset)."""
        if self.status is None:
            return None
        message = self.body_message or f"injected fault ({self.status})"
        return errors.ApiError(self.status, errors.reason_for_code(self.status), message, {})


class Faults:
    """The active faults, checked by the HTTP layer before anything else."""

    def __init__(self) -> None:
        self._faults: List[Fault] = []
        self._lock = threading.Lock()

    def add(self, method: Optional[str] = None, path: str = "", status: Optional[int] = 500,
            times: Optional[int] = 1, body_message: str = "", delay_s: float = 0.0,
            reset: bool = False, retry_after_s: int = 1, query: str = "") -> Fault:
        """Inject a fault (see the module docstring); returns it for inspection."""
        if reset:
            status = None
        fault = Fault(method, path, status, times, body_message, delay_s, reset, retry_after_s,
                      query)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str, query: str = "") -> Optional[Fault]:
        """The first matching fault, counted as fired; None when none matches (``query``:
        the request's, decoded)."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, query):
                    fault.hits += 1
                    return fault
        return None
