"""A test kubelet: Kubernetes nodes whose pods run as local processes on this machine.

``python -m tests.kubelet --kubeconfig PATH --nodes N`` or, in tests::

    with TestKubelet(kubeconfig, nodes=2) as kubelet:
        ...                       # pods bound to kubelet-0 / kubelet-1 run here
        kubelet.logs("default", "hello-1234-0-abcde")

It talks to the API server only through the official ``kubernetes`` client and the standard
API, so it serves the project's emulated API server and a real kube-apiserver with its
controller-manager and scheduler alike. Each container runs in its own mount and UTS
namespace (``unshare``), with the pod's hostname, volumes bind-mounted at their paths, and an
/etc/hosts that resolves the pod's peers (same subdomain) to their ``127.10.x.y`` addresses.
Modules: ``kubelet`` (watch, dispatch), ``worker`` (one pod's life), ``lifecycle`` (prepared
pod, status), ``runner`` + ``podinit`` (the process in its namespaces), ``env``, ``fields``,
``volumes``, ``podspec`` (from manifest to process), ``addresses`` (addresses, hosts files),
``nodes`` (registration, heartbeats), ``cri_log`` (containers' output written as containerd
writes it, CRI format and all, and rotated as a kubelet rotates it), ``log_reading`` +
``log_server`` (the logs served over HTTPS for the API server's ``pods/log``, followed across
rotations as a 1.28 kubelet follows them), ``api`` (the calls made).
"""

from tests.kubelet.kubelet import TestKubelet

__all__ = ["TestKubelet"]
