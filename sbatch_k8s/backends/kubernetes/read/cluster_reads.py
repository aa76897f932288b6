"""Where the read path (:mod:`.cluster_jobs`) gets a collection: a LIST from the API server,
or, in a command forked by the warm command server, that server's watch cache.

:func:`reads_for` picks: :class:`CachedReads` when the command runs under a server that keeps
a cache, :class:`LiveReads` otherwise. A cached read of a collection whose mirror is not
usable (not running yet, not synced, its watch reconnecting, behind a write of ours, or a
snapshot too old) lists that collection from the API server instead, and asks the server to
start the mirrors it lacks: the first such command pays the LISTs, the next ones none.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Mapping, Set, Tuple

from sbatch_k8s.backends.kubernetes.api.client import KubeClient
from sbatch_k8s.backends.kubernetes.api.kinds import WORKLOADS, Kind

#: A listed object and what the mirror derived from it when it arrived (None: nothing).
Item = Tuple[Dict[str, Any], Any]

_TERM = re.compile(r"^\s*(!?)\s*([A-Za-z0-9._/-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9._-]*)|"
                   r"\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def _terms(selector: str) -> List[str]:
    """A selector's terms: commas outside parentheses separate them."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(selector):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return [t for t in terms if t.strip()]


def label_filter(selector: str) -> Callable[[Mapping[str, str]], bool]:
    """A label selector (``a=b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``)
    as the API server applies it; ValueError on one it would refuse."""
    checks: List[Callable[[Mapping[str, str]], bool]] = []
    for term in _terms(selector):
        found = _TERM.match(term)
        if not found:
            raise ValueError(f"unable to parse requirement: {term.strip()!r}")
        negated, key, op, value, set_op, values = found.groups()
        if op in ("=", "=="):
            checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif op == "!=":
            checks.append(lambda labels, k=key, v=value: labels.get(k) != v)
        elif set_op:
            chosen = frozenset(v.strip() for v in values.split(",") if v.strip())
            inside = set_op == "in"
            checks.append(lambda labels, k=key, c=chosen, i=inside:
                          (k in labels and labels[k] in c) == i)
        else:
            checks.append(lambda labels, k=key, n=bool(negated): (k in labels) != n)
    return lambda labels: all(check(labels) for check in checks)


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


class LiveReads:
    """Every collection from the API server (one LIST each)."""

    cached = False

    def __init__(self, client: KubeClient) -> None:
        self.client = client

    def items(self, kind: Kind, namespace: str, selector: str, mirror_selector: str
              ) -> List[Item]:
        """The objects of ``kind`` in ``namespace`` matching ``selector``; a mirror of
        ``mirror_selector`` (a superset) may answer instead."""
        found, _ = self.client.list(kind, namespace, selector)
        for obj in found:  # list items carry no kind on a real API server: put it back
            obj.setdefault("kind", kind.kind)
            obj.setdefault("apiVersion", kind.api_version)
        return [(obj, None) for obj in found]


class CachedReads(LiveReads):
    """Collections from the frozen watch cache where usable, else from the API server."""

    cached = True

    def __init__(self, client: KubeClient, cache: Any, cluster: Tuple[str, str, str],
                 environ: Mapping[str, str]) -> None:
        super().__init__(client)
        self.cache = cache
        self.cluster = cluster
        self.environ = environ
        self.listed: List[str] = []
        self._asked: Set[Tuple[str, Tuple[str, ...]]] = set()

    def items(self, kind: Kind, namespace: str, selector: str, mirror_selector: str
              ) -> List[Item]:
        mirror = self.cache.mirror(self.cluster, namespace, kind, mirror_selector)
        if mirror is None:
            if not self.cache.has(self.cluster, namespace, kind, mirror_selector):
                self._want(namespace, [kind] if kind in WORKLOADS else [])
            self.listed.append(kind.plural)
            return super().items(kind, namespace, selector, mirror_selector)
        if selector == mirror_selector:
            return list(mirror.objects.values())
        match = label_filter(selector)
        return [item for item in mirror.objects.values() if match(labels_of(item[0]))]

    def _want(self, namespace: str, kinds: List[Kind]) -> None:
        from sbatch_k8s.backends.kubernetes.read.watch_journal import want

        names = tuple(f"{k.api_version} {k.kind}" for k in kinds)
        if (namespace, names) in self._asked:
            return
        self._asked.add((namespace, names))
        want(list(self.cluster), self.environ, self.client.target.context, namespace,
             list(names))


def reads_for(client: KubeClient) -> LiveReads:
    """Cached reads in a command forked by a server that keeps a cache, else live ones."""
    from sbatch_k8s.backends.kubernetes.read import watch_cache

    cache = watch_cache.snapshot()
    if cache is None:
        return LiveReads(client)
    environ: Mapping[str, str] = os.environ
    return CachedReads(client, cache, watch_cache.cluster_id(environ, client.target), environ)


def memo_or(item: Item, parse: Callable[[Dict[str, Any]], Any]) -> Any:
    """What the mirror derived from ``item`` (an exception it raised is raised again), or
    ``parse`` of the object when nothing was."""
    obj, memo = item
    if memo is None:
        return parse(obj)
    if isinstance(memo, Exception):
        raise memo
    return memo
