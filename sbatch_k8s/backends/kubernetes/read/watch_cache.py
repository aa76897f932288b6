"""The watch cache of the warm command server: squeue and scontrol with no API call.

**Where it lives.** The command server (:mod:`sbatch_k8s.server`) holds one
:class:`WatchCache`: per (cluster, namespace) a :class:`.reflector.Reflector` for the job
records (ConfigMaps ``sbatch-k8s.io/kind=record``), one for our pods, and one per workload
kind in use, each a thread doing LIST+WATCH. The first Kubernetes command the server runs
asks for it (:func:`.watch_journal.want`); it stops when the server exits.

**How commands read it (fork safety).** Commands are forked from the server, and threads do
not survive ``fork``: the child gets the memory but not the reflectors. So the server forks
while holding the cache's lock (:func:`os.register_at_fork`), which reflectors take for every
change: the child's copy is a whole, consistent snapshot as of its fork — copy-on-write, so
taking it costs nothing. The child never waits on that copy (nothing would move it on): it
reads it at once, or, when it is older than :func:`snapshot_max_age_s` (``squeue -i``'s
later rounds), not at all. Nothing else a reflector thread may hold at the fork is used by
the child: its HTTP connections and their pool belong to the reflector (the child connects
with a client of its own), and ``logging`` and the import lock are re-initialised by Python.
The child inherits the reflectors' sockets but never reads them; a long-lived child keeps a
dropped watch connection open at most until the server's ``timeoutSeconds`` ends it.

**Correctness never depends on it.** A reader uses a mirror only when it is synced, its watch
is connected, and it has reached every resourceVersion our own commands wrote to it
(:attr:`.reflector.Reflector.required_rv`, learnt through :mod:`.watch_journal`; before
forking a reader, the server waits up to :func:`catch_up_wait_s` for lagging mirrors). In any
other case that collection is listed from the API server as without a cache. What a cache
read would record as final is confirmed by a LIST before it is shown or written back
(:mod:`.cluster_jobs`): a mirror that lags never shows a job as finished or gone wrongly.
Writes made elsewhere (another machine, a command run with ``SBATCHK8S_SERVER=0``) reach
the cache through its watch, within the watch's latency, as they would reach a later LIST.
What the server's history lost (an API server restarted on an empty or restored etcd) leaves
the cache by a fresh LIST once the mirror sees the server's resourceVersion below its own,
and whatever else happened unseen within :func:`.reflector.relist_after_s` (a LIST at least
that often).
"""

from __future__ import annotations

from parsers.vocabulary import RECORD_SELECTOR
import os
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, JOB, POD, WORKLOADS, Kind
from sbatch_k8s.backends.kubernetes.read.reflector import Reflector, rv_number

MANAGED_SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"
#: How long the server holds back a reader while a mirror catches up with our writes (or
#: takes its first LIST), unless ``$SBATCHK8S_CACHE_WAIT_S`` says otherwise.
CATCH_UP_WAIT_S = 1.0
#: The ``User-Agent`` of the mirrors' LISTs and WATCHes (an audit log tells the cache's
#: background traffic from commands' requests).
USER_AGENT = "sbatch-k8s-watch-cache"
#: A forked command reads its snapshot only this soon after the fork (at least; twice the
#: catch-up wait when that is longer: a loaded machine starts commands slowly).
SNAPSHOT_MAX_AGE_S = 2.0
#: Commands that read job state (the server waits for mirrors to catch up before them).
READERS = ("squeue", "scontrol", "scancel", "sacct")

#: (server URL, context, kubeconfig path): whose view of which cluster.
ClusterId = Tuple[str, str, str]
#: (cluster, namespace, kind, selector): one mirror.
MirrorKey = Tuple[ClusterId, str, Kind, str]

#: The server's cache (in a forked command: its frozen copy); None elsewhere.
CACHE: Optional["WatchCache"] = None


def cluster_id(environ: Mapping[str, str], target: Any) -> ClusterId:
    """Which cluster a command's client talks to, and as whom (the kubeconfig's path)."""
    kubeconfig = environ.get("KUBECONFIG") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".kube", "config")
    return (str(target.server), str(target.context), kubeconfig)


def mirrors_for(namespace: str, workload_kinds: List[Kind]) -> List[Tuple[Kind, str]]:
    """The collections a namespace's cache mirrors: records, pods, Jobs (the default
    target's kind, always served: mirrored from the start, the first job's squeue is warm
    too) and the other workload kinds asked for (their CRDs may be missing)."""
    kinds = [JOB] + [kind for kind in workload_kinds if kind != JOB]
    return [(CONFIG_MAP, RECORD_SELECTOR), (POD, MANAGED_SELECTOR)] + \
        [(kind, MANAGED_SELECTOR) for kind in kinds]


def catch_up_wait_s(environ: Mapping[str, str]) -> float:
    """The bound on the server's wait before a reader (see :data:`CATCH_UP_WAIT_S`)."""
    try:
        return max(0.0, float(environ.get("SBATCHK8S_CACHE_WAIT_S", CATCH_UP_WAIT_S)))
    except ValueError:
        return CATCH_UP_WAIT_S


def snapshot_max_age_s(environ: Mapping[str, str]) -> float:
    """How old a forked command's snapshot may be when it reads it."""
    return max(SNAPSHOT_MAX_AGE_S, 2 * catch_up_wait_s(environ))


def _kind_named(text: str) -> Optional[Kind]:
    return next((k for k in WORKLOADS if f"{k.api_version} {k.kind}" == text), None)


def _connect(env: Dict[str, str], context: Optional[str]) -> Any:
    """A mirror's own client, which says it is the cache's."""
    from sbatch_k8s.backends.kubernetes.api.client import connect

    client = connect(env, context)
    client.api_client.user_agent = USER_AGENT
    return client


def _memo_for(kind: Kind) -> Optional[Callable[[Dict[str, Any]], Any]]:
    """Records are parsed once, when they arrive, not by every squeue."""
    if kind != CONFIG_MAP:
        return None
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map

    return record_from_config_map


def keep_of_record(cm: Dict[str, Any], parsed: Any) -> Dict[str, Any]:
    """What the mirror keeps of a record: all of it while the job is active (a command may
    write it back), only its metadata once final (the parsed record says the rest: a
    namespace's history then costs a fraction of the memory)."""
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    if not is_final(parsed[0]):
        return cm
    metadata = cm.get("metadata") or {}
    return {"apiVersion": cm.get("apiVersion", "v1"), "kind": cm.get("kind", "ConfigMap"),
            "metadata": {k: metadata[k] for k in ("name", "namespace", "labels",
                                                  "resourceVersion") if k in metadata}}


def labels_match(selector: str, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy an equality selector (``a=b,c=d``), the form mirrors use."""
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if labels.get(key.strip()) != value.strip():
            return False
    return True


class WatchCache:
    """The server's mirrors (see the module docstring)."""

    def __init__(self) -> None:
        self.condition = threading.Condition(threading.Lock())
        self.mirrors: Dict[MirrorKey, Reflector] = {}
        self.frozen = False
        self.forked_at = 0.0
        self.connections: Dict[ClusterId, Tuple[Dict[str, str], Optional[str]]] = {}

    # -- in the server ---------------------------------------------------------------------

    def handle(self, message: Dict[str, Any]) -> None:
        """One journal message (:mod:`.watch_journal`)."""
        if message.get("t") == "want":
            cluster = tuple(message.get("cluster") or ())
            if len(cluster) != 3:
                return
            kinds = [k for k in map(_kind_named, message.get("kinds") or []) if k]
            self.ensure(cluster, dict(message.get("env") or {}),  # type: ignore[arg-type]
                        message.get("context"), str(message.get("namespace", "")), kinds)
        elif message.get("t") == "wrote":
            rv = rv_number(message.get("rv"))
            if rv is not None:
                self.require(str(message.get("server")), str(message.get("collection")),
                             dict(message.get("labels") or {}), rv)

    def ensure(self, cluster: ClusterId, env: Dict[str, str], context: Optional[str],
               namespace: str, kinds: List[Kind]) -> None:
        """Start the mirrors of ``namespace`` on ``cluster`` that are not running yet."""
        if not namespace or self.frozen:
            return
        started = []
        with self.condition:
            self.connections.setdefault(cluster, (env, context))
            env, context = self.connections[cluster]
            for kind, selector in mirrors_for(namespace, kinds):
                key = (cluster, namespace, kind, selector)
                if key not in self.mirrors:
                    self.mirrors[key] = Reflector(
                        lambda env=env, context=context: _connect(env, context), kind,
                        namespace, selector, self.condition, _memo_for(kind),
                        keep_of_record if kind == CONFIG_MAP else None)
                    started.append(self.mirrors[key])
        for mirror in started:
            mirror.start()

    def require(self, server: str, collection: str, labels: Mapping[str, str],
                rv: int) -> None:
        """A command wrote ``collection`` at ``rv``: the mirrors that see that object must
        reach ``rv`` before a reader trusts them. A workload of a kind not mirrored yet in a
        mirrored namespace starts that kind's mirror (sbatch of a new target)."""
        with self.condition:
            namespaces = set()
            for (cluster, namespace, _, selector), mirror in self.mirrors.items():
                if cluster[0] != server:
                    continue
                namespaces.add((cluster, namespace))
                if mirror.collection_path == collection and labels_match(selector, labels):
                    mirror.required_rv = max(mirror.required_rv, rv)
            connections = dict(self.connections)
        if not labels_match(MANAGED_SELECTOR, labels):
            return
        for cluster, namespace in namespaces:
            kinds = [k for k in WORKLOADS if k.collection_path(namespace) == collection]
            if kinds and cluster in connections:
                env, context = connections[cluster]
                self.ensure(cluster, env, context, namespace, kinds)

    def wait_caught_up(self, timeout_s: float = CATCH_UP_WAIT_S) -> bool:
        """Wait (bounded) until every connected mirror has reached what our commands wrote,
        and every starting one has its first LIST."""
        deadline = time.monotonic() + timeout_s
        with self.condition:
            while True:
                lagging = [m for m in self.mirrors.values() if m.live and m.rv < m.required_rv
                           or not m.synced and not m.last_error]
                remaining = deadline - time.monotonic()
                if not lagging:
                    return True
                if remaining <= 0:
                    return False
                self.condition.wait(remaining)

    def stop(self) -> None:
        """End every mirror (the server is exiting)."""
        with self.condition:
            mirrors = list(self.mirrors.values())
        for mirror in mirrors:
            mirror.stop()
        for mirror in mirrors:
            mirror.join(2.0)

    # -- fork --------------------------------------------------------------------------------

    def before_fork(self) -> None:
        self.condition.acquire()

    def after_fork_in_parent(self) -> None:
        self.condition.release()

    def after_fork_in_child(self) -> None:
        """The child's copy: frozen (no thread moves it), with a lock nobody holds. A
        command's own children keep its fork time (their copy is no fresher)."""
        self.condition = threading.Condition(threading.Lock())
        for mirror in self.mirrors.values():
            mirror.condition = self.condition
        if not self.frozen:
            self.frozen = True
            self.forked_at = time.monotonic()

    # -- in a forked command -----------------------------------------------------------------

    def mirror(self, cluster: ClusterId, namespace: str, kind: Kind,
               selector: str) -> Optional[Reflector]:
        """The frozen mirror a command may read now, or None (then it lists)."""
        age_s = time.monotonic() - self.forked_at
        if not self.frozen or age_s > snapshot_max_age_s(os.environ):
            return None
        found = self.mirrors.get((cluster, namespace, kind, selector))
        return found if found is not None and found.usable() else None

    def has(self, cluster: ClusterId, namespace: str, kind: Kind, selector: str) -> bool:
        """Whether the server runs that mirror at all (usable or not)."""
        return (cluster, namespace, kind, selector) in self.mirrors


_hooked = False


def install() -> WatchCache:
    """In the server: create the cache and hook it into ``fork`` (hooks are registered once a
    process, and act on whichever cache is installed)."""
    global CACHE, _hooked
    cache = WatchCache()
    CACHE = cache
    if not _hooked:
        os.register_at_fork(before=lambda: CACHE and CACHE.before_fork(),
                            after_in_parent=lambda: CACHE and CACHE.after_fork_in_parent(),
                            after_in_child=lambda: CACHE and CACHE.after_fork_in_child())
        _hooked = True
    return cache


def snapshot() -> Optional[WatchCache]:
    """The frozen cache of a command forked by the server, or None."""
    cache = CACHE
    return cache if cache is not None and cache.frozen else None
