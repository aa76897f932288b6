"""A checker of the Kubernetes Pod Security Standards, written from the standard's rules
(https://kubernetes.io/docs/concepts/security/pod-security-standards/), independent of the
code that renders the pods.

Each control is a function from a pod (``metadata`` + ``spec``) to its violations, one
line each naming the field; :data:`BASELINE_CONTROLS` are the baseline profile's,
:data:`RESTRICTED_CONTROLS` what the restricted profile adds. :func:`violations` checks a pod
against a profile; :func:`pods_in` finds every pod template in rendered manifests (a Job's,
a JobSet's child Jobs', an operator's replica specs'), wherever it is nested.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Mapping, Sequence, Tuple

Pod = Mapping[str, Any]
Control = Callable[[Pod], List[str]]

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
#: Capabilities baseline lets a container add (Docker's default set).
BASELINE_CAPABILITIES = frozenset((
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"))
#: Capabilities restricted lets a container add (after dropping ALL).
RESTRICTED_CAPABILITIES = frozenset(("NET_BIND_SERVICE",))
SAFE_SYSCTLS = frozenset((
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"))
SELINUX_TYPES = frozenset(("", "container_t", "container_init_t", "container_kvm_t",
                           "container_engine_t"))
APPARMOR_TYPES = frozenset(("RuntimeDefault", "Localhost"))
SECCOMP_TYPES = frozenset(("RuntimeDefault", "Localhost"))
#: The only volume types restricted admits.
RESTRICTED_VOLUME_TYPES = frozenset((
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret"))
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _spec(pod: Pod) -> Mapping[str, Any]:
    return pod.get("spec") or {}


def _pod_security(pod: Pod) -> Mapping[str, Any]:
    return _spec(pod).get("securityContext") or {}


def containers(pod: Pod) -> Iterator[Tuple[str, Mapping[str, Any]]]:
    """``(field path, container)`` for every container, init and ephemeral container."""
    for kind in CONTAINER_LISTS:
        for i, container in enumerate(_spec(pod).get(kind) or []):
            yield f"spec.{kind}[{i}]", container


def _security(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return container.get("securityContext") or {}


def _contexts(pod: Pod) -> Iterator[Tuple[str, Mapping[str, Any]]]:
    """The pod's securityContext and every container's, with their paths."""
    yield "spec.securityContext", _pod_security(pod)
    for path, container in containers(pod):
        yield f"{path}.securityContext", _security(container)


# Baseline controls.
def host_process(pod: Pod) -> List[str]:
    """HostProcess: ``windowsOptions.hostProcess`` false or unset, pod and containers."""
    return [f"{path}.windowsOptions.hostProcess must not be true"
            for path, security in _contexts(pod)
            if (security.get("windowsOptions") or {}).get("hostProcess")]


def host_namespaces(pod: Pod) -> List[str]:
    """Host namespaces: ``hostNetwork``, ``hostPID``, ``hostIPC`` false or unset."""
    return [f"spec.{field} must not be true" for field in ("hostNetwork", "hostPID", "hostIPC")
            if _spec(pod).get(field)]


def privileged_containers(pod: Pod) -> List[str]:
    """Privileged containers: ``privileged`` false or unset."""
    return [f"{path}.securityContext.privileged must not be true"
            for path, container in containers(pod) if _security(container).get("privileged")]


def _added_capabilities(pod: Pod, allowed: frozenset) -> List[str]:
    found = []
    for path, container in containers(pod):
        for capability in (_security(container).get("capabilities") or {}).get("add") or []:
            if capability not in allowed:
                found.append(f"{path}.securityContext.capabilities.add must not add "
                             f"{capability}")
    return found


def baseline_capabilities(pod: Pod) -> List[str]:
    """Capabilities: nothing added beyond the default set."""
    return _added_capabilities(pod, BASELINE_CAPABILITIES)


def host_path_volumes(pod: Pod) -> List[str]:
    """HostPath volumes: none."""
    return [f"spec.volumes[{i}] ({volume.get('name')}) must not be a hostPath volume"
            for i, volume in enumerate(_spec(pod).get("volumes") or []) if "hostPath" in volume]


def host_ports(pod: Pod) -> List[str]:
    """Host ports: ``hostPort`` unset or 0."""
    return [f"{path}.ports[{i}].hostPort must not be set"
            for path, container in containers(pod)
            for i, port in enumerate(container.get("ports") or []) if port.get("hostPort")]


def apparmor(pod: Pod) -> List[str]:
    """AppArmor: profile type unset, RuntimeDefault or Localhost; the legacy annotations
    ``runtime/default`` or ``localhost/*``."""
    found = [f"{path}.appArmorProfile.type must not be {profile.get('type')}"
             for path, security in _contexts(pod)
             for profile in [security.get("appArmorProfile")]
             if profile and profile.get("type") not in APPARMOR_TYPES]
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    for key, value in annotations.items():
        if key.startswith(APPARMOR_ANNOTATION) and value != "runtime/default" \
                and not value.startswith("localhost/"):
            found.append(f"metadata.annotations[{key}] must not be {value}")
    return found


def selinux(pod: Pod) -> List[str]:
    """SELinux: a container type only, no custom user or role."""
    found = []
    for path, security in _contexts(pod):
        options = security.get("seLinuxOptions") or {}
        if options.get("type", "") not in SELINUX_TYPES:
            found.append(f"{path}.seLinuxOptions.type must not be {options['type']}")
        found.extend(f"{path}.seLinuxOptions.{field} must not be set"
                     for field in ("user", "role") if options.get(field))
    return found


def proc_mount(pod: Pod) -> List[str]:
    """/proc mount type: Default or unset."""
    return [f"{path}.securityContext.procMount must be Default"
            for path, container in containers(pod)
            if _security(container).get("procMount", "Default") != "Default"]


def baseline_seccomp(pod: Pod) -> List[str]:
    """Seccomp: never Unconfined."""
    return [f"{path}.seccompProfile.type must not be Unconfined"
            for path, security in _contexts(pod)
            if (security.get("seccompProfile") or {}).get("type") == "Unconfined"]


def sysctls(pod: Pod) -> List[str]:
    """Sysctls: only the safe set."""
    return [f"spec.securityContext.sysctls: {item.get('name')} is not a safe sysctl"
            for item in _pod_security(pod).get("sysctls") or []
            if item.get("name") not in SAFE_SYSCTLS]


# Restricted controls (in addition to baseline's).
def volume_types(pod: Pod) -> List[str]:
    """Volume types: only configMap, csi, downwardAPI, emptyDir, ephemeral,
    persistentVolumeClaim, projected, secret."""
    found = []
    for i, volume in enumerate(_spec(pod).get("volumes") or []):
        kinds = [k for k in volume if k != "name"]
        bad = [k for k in kinds if k not in RESTRICTED_VOLUME_TYPES]
        if bad or not kinds:
            found.append(f"spec.volumes[{i}] ({volume.get('name')}) must not be of type "
                         f"{', '.join(bad or ['(none)'])}")
    return found


def privilege_escalation(pod: Pod) -> List[str]:
    """Privilege escalation: ``allowPrivilegeEscalation`` false in every container."""
    return [f"{path}.securityContext.allowPrivilegeEscalation must be false"
            for path, container in containers(pod)
            if _security(container).get("allowPrivilegeEscalation") is not False]


def running_as_non_root(pod: Pod) -> List[str]:
    """Running as non-root: ``runAsNonRoot`` true on the pod, or on every container; a
    container may not set it false."""
    pod_level = _pod_security(pod).get("runAsNonRoot")
    found = []
    if pod_level is False:
        found.append("spec.securityContext.runAsNonRoot must not be false")
    for path, container in containers(pod):
        own = _security(container).get("runAsNonRoot")
        if own is False or (own is None and pod_level is not True):
            found.append(f"{path}.securityContext.runAsNonRoot must be true (or the pod's)")
    return found


def running_as_non_root_user(pod: Pod) -> List[str]:
    """Running as non-root user: ``runAsUser`` unset or non-zero, pod and containers."""
    return [f"{path}.runAsUser must not be 0" for path, security in _contexts(pod)
            if security.get("runAsUser") == 0]


def restricted_seccomp(pod: Pod) -> List[str]:
    """Seccomp: RuntimeDefault or Localhost on the pod, or on every container; a container
    may not set another type."""
    pod_type = (_pod_security(pod).get("seccompProfile") or {}).get("type")
    found = []
    if pod_type is not None and pod_type not in SECCOMP_TYPES:
        found.append(f"spec.securityContext.seccompProfile.type must not be {pod_type}")
    for path, container in containers(pod):
        own = (_security(container).get("seccompProfile") or {}).get("type")
        if own is not None and own not in SECCOMP_TYPES:
            found.append(f"{path}.securityContext.seccompProfile.type must not be {own}")
        elif own is None and pod_type not in SECCOMP_TYPES:
            found.append(f"{path}.securityContext.seccompProfile must be RuntimeDefault or "
                         "Localhost (or the pod's)")
    return found


def restricted_capabilities(pod: Pod) -> List[str]:
    """Capabilities: every container drops ALL and adds at most NET_BIND_SERVICE."""
    found = _added_capabilities(pod, RESTRICTED_CAPABILITIES)
    for path, container in containers(pod):
        dropped = (_security(container).get("capabilities") or {}).get("drop") or []
        if "ALL" not in dropped:
            found.append(f"{path}.securityContext.capabilities.drop must include ALL")
    return found


BASELINE_CONTROLS: Tuple[Control, ...] = (
    host_process, host_namespaces, privileged_containers, baseline_capabilities,
    host_path_volumes, host_ports, apparmor, selinux, proc_mount, baseline_seccomp, sysctls)
RESTRICTED_CONTROLS: Tuple[Control, ...] = BASELINE_CONTROLS + (
    volume_types, privilege_escalation, running_as_non_root, running_as_non_root_user,
    restricted_seccomp, restricted_capabilities)
PROFILES: Dict[str, Tuple[Control, ...]] = {
    "baseline": BASELINE_CONTROLS, "restricted": RESTRICTED_CONTROLS}


def violations(pod: Pod, profile: str = "restricted") -> List[str]:
    """Every violation of ``profile`` (``baseline`` or ``restricted``) by ``pod``."""
    return [line for control in PROFILES[profile] for line in control(pod)]


def pods_in(manifests: Sequence[Mapping[str, Any]]) -> List[Tuple[str, Pod]]:
    """``(where, pod template)`` for every pod template in ``manifests``: any mapping whose
    ``spec`` has ``containers``, found wherever the workload nests it."""
    found: List[Tuple[str, Pod]] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, Mapping):
            spec = node.get("spec")
            if isinstance(spec, Mapping) and "containers" in spec:
                found.append((where, node))
                return
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    for manifest in manifests:
        walk(manifest, f"{manifest.get('kind')}/{(manifest.get('metadata') or {}).get('name')}")
    return found
