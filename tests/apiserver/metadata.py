"""Object metadata rules shared by create, update and delete: timestamps, names, generation."""

from __future__ import annotations

import datetime
import random
import time
from typing import Any, Dict, Optional

Obj = Dict[str, Any]

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def rfc3339(when_s: Optional[float] = None) -> str:
    """A Kubernetes timestamp, second precision, UTC (``2024-05-01T12:00:00Z``)."""
    moment = datetime.datetime.fromtimestamp(time.time() if when_s is None else when_s,
                                             tz=datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    """Seconds since the epoch of a Kubernetes timestamp."""
    return datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def random_suffix(length: int = 5) -> str:
    """Random characters as ``generateName`` and the Job controller append."""
    return "".join(random.choice(NAME_ALPHABET) for _ in range(length))


def body_of(obj: Obj) -> Obj:
    """Everything but metadata and status: what a change of bumps ``generation``."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def carry_over(old: Obj, new: Obj) -> None:
    """Keep the fields clients cannot change on update (uid, creation, deletion, generation)."""
    keep = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
            "generation", "namespace", "name")
    meta = new.setdefault("metadata", {})
    for key in keep:
        if key in old["metadata"]:
            meta[key] = old["metadata"][key]
        else:
            meta.pop(key, None)
    if "generation" in meta and body_of(old) != body_of(new):
        meta["generation"] = int(meta["generation"]) + 1
