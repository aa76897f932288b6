"""Pod addresses and the /etc/hosts files that make pods reachable by name.

Every pod the test kubelet runs shares this machine's network stack, so each gets its own
loopback address ``127.10.x.y`` to bind and to be reached at. Peers find each other by name
through a generated /etc/hosts, as they would through a headless Service's DNS: a pod with a
``spec.subdomain`` lists every pod of that ``(namespace, subdomain)`` group. Addresses are
reserved in advance (an Indexed Job's ``<job>-0 … <job>-<completions-1>``), but a name is
published as a cluster DNS publishes it: only once its pod exists, and ``dns_delay_s`` after
that (a real DNS learns a pod's name after the kubelet has reported its IP and the endpoints
controller has listed it: a process starting with its container may look a peer, or its own
``<host>.<subdomain>``, up too early and get nothing). What a real kubelet writes into the
pod's own /etc/hosts — ``<ip> <host>.<subdomain>.<ns>.svc.cluster.local <host>`` — is there
from the start. Published names are appended to every group member's file in place (append
only, so a reader never sees a half-written file).

Several test kubelets may run on one machine (one per test cluster); each claims whole blocks
``127.10.x.0/24`` by binding an abstract Unix socket named after the block, which the kernel
releases when the process ends, so two kubelets never hand out the same address.

The API server never sees these addresses: the endpoints controller rejects loopback pod IPs,
so ``status.podIP`` reports :func:`reported_ip` (``10.10.x.y``) instead.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Dict, List, Optional, Set, Tuple

BLOCK_PREFIX = "127.10"
REPORTED_PREFIX = "10.10"
LOCK_NAME = "sbatch-k8s-test-kubelet-block-{block}"
HOSTS_HEADER = (
    "# Written by the sbatch-k8s test kubelet.\n"
    "127.0.0.1\tlocalhost\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n"
)
GroupKey = Tuple[str, str]          # (namespace, subdomain)


class AddressesExhausted(Exception):
    """Every 127.10.x.0/24 block is taken by this or other test kubelets."""


def reported_ip(address: str) -> str:
    """The non-loopback IP reported in ``status.podIP`` for pod address ``127.10.x.y``."""
    return REPORTED_PREFIX + address[len(BLOCK_PREFIX):]


def hosts_line(address: str, hostname: str, subdomain: str, namespace: str) -> str:
    """One /etc/hosts line for a published name: what the cluster DNS answers for it (the
    full name, the short ``<host>.<subdomain>``, the bare host name)."""
    if not subdomain:
        return f"{address}\t{hostname}\n"
    fqdn = f"{hostname}.{subdomain}.{namespace}.svc.cluster.local"
    return f"{address}\t{fqdn} {hostname}.{subdomain} {hostname}\n"


def own_line(address: str, hostname: str, subdomain: str, namespace: str) -> str:
    """The pod's own line, as a real kubelet writes it: no short ``<host>.<subdomain>``."""
    if not subdomain:
        return f"{address}\t{hostname}\n"
    return f"{address}\t{hostname}.{subdomain}.{namespace}.svc.cluster.local {hostname}\n"


class AddressPool:
    """Loopback addresses ``127.10.x.y`` (y in 1..254), block by block, claimed machine-wide."""

    def __init__(self) -> None:
        self._locks: List[socket.socket] = []
        self._free: List[str] = []
        self._mutex = threading.Lock()

    def allocate(self) -> str:
        """A free address; claims a new block when the claimed ones are used up."""
        with self._mutex:
            if not self._free:
                self._claim_block()
            return self._free.pop(0)

    def release(self, address: str) -> None:
        """Give ``address`` back for reuse."""
        with self._mutex:
            self._free.append(address)

    def close(self) -> None:
        """Release every claimed block."""
        with self._mutex:
            for lock in self._locks:
                lock.close()
            self._locks.clear()
            self._free.clear()

    def _claim_block(self) -> None:
        for block in range(256):
            lock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                lock.bind("\0" + LOCK_NAME.format(block=block))
            except OSError:
                lock.close()
                continue
            self._locks.append(lock)
            self._free.extend(f"{BLOCK_PREFIX}.{block}.{y}" for y in range(1, 255))
            return
        raise AddressesExhausted("every 127.10.x.0/24 block is claimed by a test kubelet")


class _Group:
    """The names of one ``(namespace, subdomain)`` and the hosts files that list them."""

    def __init__(self) -> None:
        self.addresses: Dict[str, str] = {}      # hostname -> address, in insertion order
        self.pods: Dict[str, str] = {}           # pod uid -> hostname
        self.published: List[str] = []          # names the DNS answers, in order
        self.pending: Set[str] = set()           # names waiting for their DNS delay
        self.files: Dict[str, int] = {}          # hosts file path -> published names written


class HostsRegistry:
    """Pod addresses by ``(namespace, subdomain, hostname)`` and the hosts files listing them.

    A pod without a subdomain is a group of its own (keyed by its uid), listing only itself.
    A group lives while any of its pods exists; then its addresses return to the pool.
    """

    def __init__(self, pool: AddressPool, dns_delay_s: float = 0.0) -> None:
        self._pool = pool
        self.dns_delay_s = dns_delay_s
        self._groups: Dict[GroupKey, _Group] = {}
        self._mutex = threading.RLock()

    @staticmethod
    def group_key(namespace: str, subdomain: str, uid: str) -> GroupKey:
        """The group of a pod: its namespace and subdomain, or its own uid without one."""
        return (namespace, subdomain) if subdomain else (namespace, "\0" + uid)

    def add_pod(self, namespace: str, subdomain: str, uid: str, hostname: str,
                reserve: Tuple[str, ...] = ()) -> str:
        """Register a pod (idempotent) and the peer hostnames to ``reserve``; its address."""
        with self._mutex:
            key = self.group_key(namespace, subdomain, uid)
            group = self._groups.setdefault(key, _Group())
            group.pods[uid] = hostname
            for name in (hostname,) + tuple(reserve):
                if name not in group.addresses:
                    group.addresses[name] = self._pool.allocate()
            if subdomain and hostname not in group.published and hostname not in group.pending:
                group.pending.add(hostname)
                if self.dns_delay_s > 0:
                    timer = threading.Timer(self.dns_delay_s, self._publish,
                                            (key, group, hostname))
                    timer.daemon = True
                    timer.start()
                else:
                    self._publish(key, group, hostname)
            return group.addresses[hostname]

    def _publish(self, key: GroupKey, group: _Group, hostname: str) -> None:
        """The DNS now answers ``hostname`` (unless its group is gone meanwhile)."""
        with self._mutex:
            if self._groups.get(key) is not group or hostname not in group.pending:
                return
            group.pending.discard(hostname)
            group.published.append(hostname)
            self._append_new_entries(key, group)

    def remove_pod(self, namespace: str, subdomain: str, uid: str) -> None:
        """Forget a pod that no longer exists; free the group's addresses with its last pod."""
        with self._mutex:
            key = self.group_key(namespace, subdomain, uid)
            group = self._groups.get(key)
            if group is None or group.pods.pop(uid, None) is None or group.pods:
                return
            for address in group.addresses.values():
                self._pool.release(address)
            del self._groups[key]

    def address_of(self, namespace: str, subdomain: str, uid: str,
                   hostname: str) -> Optional[str]:
        """The address registered for ``hostname`` in the pod's group, if any."""
        with self._mutex:
            group = self._groups.get(self.group_key(namespace, subdomain, uid))
            return None if group is None else group.addresses.get(hostname)

    def write_hosts_file(self, path: str, namespace: str, subdomain: str, uid: str) -> None:
        """Create the pod's /etc/hosts at ``path``; kept up to date while the group lives."""
        with self._mutex:
            key = self.group_key(namespace, subdomain, uid)
            group = self._groups[key]
            hostname = group.pods.get(uid, "")
            own = "" if not hostname else own_line(
                group.addresses[hostname], hostname,
                "" if subdomain.startswith("\0") else subdomain, namespace)
            with open(path, "w") as f:
                f.write(HOSTS_HEADER + own)
            os.chmod(path, 0o644)
            group.files[path] = 0
            self._append_new_entries(key, group)

    def forget_hosts_file(self, path: str) -> None:
        """Stop updating ``path`` (its pod is gone)."""
        with self._mutex:
            for group in self._groups.values():
                group.files.pop(path, None)

    def _append_new_entries(self, key: GroupKey, group: _Group) -> None:
        namespace, subdomain = key
        subdomain = "" if subdomain.startswith("\0") else subdomain
        entries = [(name, group.addresses[name]) for name in group.published]
        for path, written in list(group.files.items()):
            if written == len(entries):
                continue
            text = "".join(hosts_line(address, name, subdomain, namespace)
                           for name, address in entries[written:])
            try:
                with open(path, "a") as f:
                    f.write(text)
            except OSError:
                del group.files[path]
                continue
            group.files[path] = len(entries)
