"""``sbatch-k8s controller``: the reconcile pass every command runs, run continuously.

Optional — everything works without it (node 0 releases the jobs waiting for it, and any
command reconciles what was missed) — but with it a dependent job starts as soon as the
cluster shows its upstream ended, whoever ended it (a deadline, a lost node, scancel), a
``--begin`` time is honoured to within :data:`INTERVAL_S` with nobody typing anything, and a
job whose node 0 never reported is recorded before Kubernetes deletes its pods.

One process per cluster is the leader (a ``coordination.k8s.io`` Lease,
:mod:`.leader`); the others stand by. Each keeps LIST+WATCH mirrors of the job records and
our pods in every namespace it serves (:class:`..read.reflector.Reflector`): any change wakes the
leader, which runs :func:`..read.cluster_jobs.cluster_records` over the active jobs — the join that
writes final states back and ends with the release pass (:mod:`.dependencies`). It also runs
it every :data:`INTERVAL_S` (begin times, and changes a broken watch missed).
"""

from __future__ import annotations

from parsers.vocabulary import RECORD_SELECTOR
import logging
import os
import socket
import threading
import time
from typing import Callable, Iterable, List, Optional, Tuple

from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, POD
from sbatch_k8s.backends.kubernetes.control.leader import RENEW_EVERY_S, LeaseElector
from sbatch_k8s.backends.kubernetes.read.reflector import Reflector

LEASE_NAME = "sbatch-k8s-controller"
INTERVAL_S = 2.0
#: After a change wakes it, the leader waits this long for the changes that come with it.
SETTLE_S = 0.05
MANAGED_SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"

LOG = logging.getLogger("sbatch-k8s.controller")


def identity() -> str:
    """This candidate's name in the Lease: host and process."""
    return f"{socket.gethostname()}-{os.getpid()}"


def reconcile_once(client: KubeClient, namespaces: Iterable[str]) -> int:
    """One pass over every namespace; how many active jobs it looked at."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import cluster_records

    looked = 0
    for namespace in sorted(set(namespaces)):
        try:
            looked += len(cluster_records(client, [namespace], int(time.time()), True))
        except KubeError as e:
            LOG.warning("namespace %s: %s", namespace, e)
    return looked


class Controller:
    """The loop of the module docstring; :meth:`run` until :meth:`stop`."""

    def __init__(self, connect: Callable[[], KubeClient], namespaces: Iterable[str],
                 lease_namespace: str, interval_s: float = INTERVAL_S,
                 name: Optional[str] = None) -> None:
        self.connect = connect
        self.namespaces = sorted(set(namespaces))
        self.client = connect()
        self.elector = LeaseElector(self.client, lease_namespace, LEASE_NAME,
                                    name or identity())
        self.interval_s = interval_s
        self.condition = threading.Condition()
        self.passes = 0
        self._stop = threading.Event()
        self._mirrors: List[Reflector] = []

    def _mark(self) -> Tuple[int, ...]:
        return tuple(m.rv for m in self._mirrors)

    def stop(self) -> None:
        self._stop.set()
        with self.condition:
            self.condition.notify_all()

    def run(self) -> None:
        """Stand by or lead until stopped; the Lease is given up on the way out."""
        for namespace in self.namespaces:
            for kind, selector in ((CONFIG_MAP, RECORD_SELECTOR), (POD, MANAGED_SELECTOR)):
                self._mirrors.append(Reflector(self.connect, kind, namespace, selector,
                                               self.condition).start())
        seen: Optional[Tuple[int, ...]] = None
        last_pass = renew_due = 0.0
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= renew_due:
                    was = self.elector.leading
                    if self.elector.try_acquire_or_renew() != was:
                        LOG.info("%s the lease", "holding" if self.elector.leading else "lost")
                    renew_due = now + RENEW_EVERY_S
                mark = self._mark()
                if self.elector.leading and (mark != seen or now - last_pass >= self.interval_s):
                    if mark != seen:
                        self._stop.wait(SETTLE_S)
                        mark = self._mark()
                    seen, last_pass = mark, time.monotonic()
                    reconcile_once(self.client, self.namespaces)
                    self.passes += 1
                    continue
                with self.condition:
                    if self._mark() == seen or not self.elector.leading:
                        self.condition.wait(min(self.interval_s, RENEW_EVERY_S))
        finally:
            for mirror in self._mirrors:
                mirror.stop()
            self.elector.release()
