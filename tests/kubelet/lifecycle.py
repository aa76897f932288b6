"""A prepared pod and its containers' runs, and the pod status they add up to.

:class:`PodServices` is what a pod worker needs from its kubelet (API, hosts registry,
directories, node facts); :func:`prepare_pod` turns a manifest into :class:`ContainerRun`
objects, each one container's successive processes and the state a kubelet reports for it;
:func:`pod_status` assembles the ``status`` a kubelet writes.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from tests.kubelet.addresses import HostsRegistry, reported_ip
from tests.kubelet.env import container_argv, resolve_env
from tests.kubelet.fields import PodContext
from tests.kubelet.podspec import PodFiles, container_mounts, identity, pod_hostname, \
    runtime_env
from tests.kubelet.memory_cgroups import CONTAINER_PATH as CGROUP_CONTAINER_PATH
from tests.kubelet.memory_cgroups import MemoryCgroup, memory_limit_bytes
from tests.kubelet.memory_cgroups import available as memory_cgroups_available
from tests.kubelet.runner import ContainerProcess, ContainerSpec, Mount
from tests.kubelet.volumes import VolumeDirs, materialise_volumes
from tests.kubelet.status import conditions, container_status, pod_phase, rfc3339, running, \
    termination_message, terminated, waiting

LOG_TAIL_BYTES = 8192


class PodServices(NamedTuple):
    """What the kubelet gives each pod worker."""

    api: Any                              # KubeApi or a fake with the same methods
    hosts: HostsRegistry
    root_dir: str                         # <root>: pods/, logs/
    memory_dir: str                       # tmpfs-backed directory for Memory emptyDirs
    volume_dir: Optional[str]             # where PVC/NFS/hostPath volumes map
    server: Tuple[str, int]               # the API server's host and port
    host_ip: Callable[[str], str]         # node name -> reported node address
    allocatable: Mapping[str, str]
    on_worker_done: Callable[[Any], None]
    #: How long a deleted pod waits for its SIGTERM: each node's kubelet hears of a deletion
    #: on its own, so a job's pods get theirs at different times, in any order.
    sigterm_delay_s: Callable[[Dict[str, Any]], float] = lambda pod: 0.0
    #: Whether containers with a memory limit run in a memory cgroup of their own
    #: (:mod:`tests.kubelet.memory_cgroups`).
    memory_cgroups: bool = False

    def pod_dir(self, uid: str) -> str:
        """The pod's private files (volumes, hosts, specs)."""
        return os.path.join(self.root_dir, "pods", uid)

    def memory_pod_dir(self, uid: str) -> str:
        """The pod's Memory emptyDirs."""
        return os.path.join(self.memory_dir, uid)

    def pod_files(self, uid: str) -> PodFiles:
        """Where the pod's /etc/hosts and /etc/hostname live."""
        return PodFiles(os.path.join(self.pod_dir(uid), "hosts"),
                        os.path.join(self.pod_dir(uid), "hostname"))

    def log_path(self, namespace: str, name: str, uid: str, container: str) -> str:
        """A container's stdout+stderr, kept after the pod is gone (like /var/log/pods)."""
        return os.path.join(self.root_dir, "logs", f"{namespace}_{name}_{uid}",
                            f"{container}.log")

    def event(self, pod: Dict[str, Any], kind: str, reason: str, message: str) -> None:
        """Record an event about ``pod`` (best effort)."""
        meta = pod["metadata"]
        now = rfc3339(time.time())
        node = (pod.get("spec") or {}).get("nodeName", "")
        self.api.create_event({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                               "namespace": meta["namespace"], "uid": meta["uid"]},
            "type": kind, "reason": reason, "message": message, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": "kubelet", "host": node},
            "reportingComponent": "kubelet", "reportingInstance": node})


class ContainerRun:
    """One container of a pod: its current process and the state to report."""

    def __init__(self, container: Dict[str, Any], spec: ContainerSpec,
                 termination_file: str, initial_reason: str) -> None:
        self.container = container
        self.spec = spec
        self.termination_file = termination_file
        self.process: Optional[ContainerProcess] = None
        self.state: Dict[str, Any] = waiting(initial_reason)
        self.last_state: Dict[str, Any] = {}
        self.restart_count = 0
        self.exit_code: Optional[int] = None
        self.finished = False
        self.restart_at: Optional[float] = None
        self._recorded = False
        self.cgroup: Optional[MemoryCgroup] = None

    def start(self, services: PodServices) -> None:
        """Start (or restart) the container's process."""
        if self.process is not None:
            self.restart_count += 1
            self.last_state = self.state
        with open(self.termination_file, "w"):
            pass
        os.chmod(self.termination_file, 0o666)
        self._recorded = False
        self.exit_code = None
        spec = self.spec
        limit = memory_limit_bytes(self.container)
        if services.memory_cgroups and limit and memory_cgroups_available():
            self.cgroup = MemoryCgroup(limit)
            spec = spec._replace(memory_cgroup=self.cgroup.path, mounts=list(spec.mounts) + [
                Mount(self.cgroup.path, CGROUP_CONTAINER_PATH, False)])
        self.process = ContainerProcess(spec)
        self.state = running(self.process.started_at)

    def check_exit(self, reason: Optional[str] = None) -> bool:
        """Record the process's exit once; True when it was recorded now."""
        process = self.process
        if process is None or self._recorded:
            return False
        code = process.poll()
        if code is None:
            return False
        process.reap_leftovers()
        self._recorded = True
        self.exit_code = code
        if self.cgroup is not None:
            # containerd's reason whenever the container's cgroup counted an OOM kill.
            if self.cgroup.oom_kills() and not process.start_error:
                reason = reason or "OOMKilled"
            self.cgroup.remove()
            self.cgroup = None
        if process.start_error:
            message: Optional[str] = process.start_error
            reason = "StartError"
        else:
            try:
                with open(self.termination_file, "rb") as f:
                    text = f.read(4096)
            except FileNotFoundError:  # the kubelet is stopping and removed the pod's files
                text = b""
            fallback = self.container.get("terminationMessagePolicy") == \
                "FallbackToLogsOnError" and code != 0
            message = termination_message(text, _tail(self.spec.log_path) if fallback
                                          else None)
        self.state = terminated(code, reason, process.started_at, time.time(), message)
        return True


def _tail(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - LOG_TAIL_BYTES))
            return f.read()
    except OSError:
        return b""


class PreparedPod:
    """A pod whose volumes, files and container specs are ready."""

    def __init__(self, init_runs: List[ContainerRun], runs: List[ContainerRun]) -> None:
        self.init_runs = init_runs
        self.runs = runs
        self.initialized = not init_runs

    def all_runs(self) -> List[ContainerRun]:
        """Init containers, then containers."""
        return self.init_runs + self.runs


def privileges(container: Mapping[str, Any]) -> Dict[str, Any]:
    """What the container's ``securityContext`` takes away from its processes, as
    :class:`ContainerSpec` fields: privilege escalation (no_new_privs) and capabilities."""
    security = container.get("securityContext") or {}
    dropped = (security.get("capabilities") or {}).get("drop") or []
    return {"no_new_privileges": security.get("allowPrivilegeEscalation") is False,
            "drop_capabilities": tuple(str(name) for name in dropped)}


def prepare_pod(services: PodServices, pod: Dict[str, Any], address: str) -> PreparedPod:
    """Materialise the pod's volumes and files and resolve every container (PrepareError
    when that cannot be done, or not yet)."""
    meta, spec = pod["metadata"], pod["spec"]
    uid, namespace = meta["uid"], meta.get("namespace", "default")
    pod_dir = services.pod_dir(uid)
    for sub in ("termination", "specs"):
        os.makedirs(os.path.join(pod_dir, sub), exist_ok=True)
    context = PodContext(pod, address, services.host_ip(spec.get("nodeName", "")),
                         services.allocatable)
    dirs = VolumeDirs(pod_dir, services.memory_pod_dir(uid), services.volume_dir)
    sites = materialise_volumes(context, services.api, dirs)
    files = services.pod_files(uid)
    hostname = pod_hostname(pod)
    services.hosts.write_hosts_file(files.hosts, namespace, spec.get("subdomain") or "", uid)
    with open(files.hostname, "w") as f:
        f.write(hostname + "\n")

    def make_run(container: Dict[str, Any], initial_reason: str) -> ContainerRun:
        name = container["name"]
        user, group, groups = identity(pod, container)
        env = resolve_env(context, container, services.api,
                          runtime_env(hostname, user, services.server))
        termination_file = os.path.join(pod_dir, "termination", name)
        log_path = services.log_path(namespace, meta["name"], uid, name)
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        container_spec = ContainerSpec(
            name=name, argv=container_argv(container, env), env=env, hostname=hostname,
            working_dir=container.get("workingDir") or "/",
            mounts=container_mounts(container, sites, files, termination_file, env),
            uid=user, gid=group, groups=groups, log_path=log_path,
            spec_path=os.path.join(pod_dir, "specs", f"{name}.json"),
            **privileges(container))
        return ContainerRun(container, container_spec, termination_file, initial_reason)

    init = spec.get("initContainers") or []
    return PreparedPod([make_run(c, "PodInitializing") for c in init],
                       [make_run(c, "PodInitializing" if init else "ContainerCreating")
                        for c in spec.get("containers") or []])


def pod_status(worker: Any, waiting_reason: Optional[str], waiting_message: Optional[str],
               final: bool) -> Dict[str, Any]:
    """The status of ``worker``'s pod, as a kubelet writes it; ``final``: the pod has ended
    (Succeeded when every container exited 0, else Failed)."""
    pod, prepared = worker.pod, worker.prepared
    spec, uid = pod["spec"], worker.uid
    init_containers = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    Entry = Tuple[Dict[str, Any], Dict[str, Any], int, Dict[str, Any]]
    if prepared is None:
        main_reason = "PodInitializing" if init_containers else "ContainerCreating"
        init: List[Entry] = [(c, waiting(waiting_reason or "PodInitializing", waiting_message),
                              0, {}) for c in init_containers]
        main: List[Entry] = [(c, waiting(waiting_reason or main_reason, waiting_message), 0, {})
                             for c in containers]
        init_done, restarting = False, False
    else:
        init = [(r.container, r.state, r.restart_count, r.last_state)
                for r in prepared.init_runs]
        main = [(r.container, r.state, r.restart_count, r.last_state) for r in prepared.runs]
        init_done = prepared.initialized
        restarting = any(run.restart_at is not None for run in prepared.all_runs())
    states = [entry[1] for entry in main]
    if final:
        ok = init_done and all(s.get("terminated", {}).get("exitCode") == 0 for s in states)
        phase = "Succeeded" if ok else "Failed"
    elif prepared is None:
        phase = "Pending"
    else:
        phase = pod_phase(init_done, states, restarting)
    ready = phase == "Running" and all("running" in s for s in states)
    ip = reported_ip(worker.address)
    host_ip = worker.services.host_ip(spec.get("nodeName", ""))
    return {
        "phase": phase, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": rfc3339(worker.start_time),
        "conditions": conditions((pod.get("status") or {}).get("conditions") or [],
                                 time.time(), prepared is not None, init_done, ready),
        "initContainerStatuses": [container_status(c, uid, state, count, last)
                                  for c, state, count, last in init] or None,
        "containerStatuses": [container_status(c, uid, state, count, last)
                              for c, state, count, last in main],
    }
