"""A container's memory limit as a real node enforces it: a memory cgroup of its own.

On a real node each container runs in a memory cgroup limited to ``resources.limits.memory``:
a process that goes over is SIGKILLed by the kernel's cgroup OOM killer, which counts the kill
(cgroup v1: ``oom_kill`` in ``memory.oom_control``), and the container sees its own cgroup at
``/sys/fs/cgroup/memory``. containerd then reports the container's end with reason
``OOMKilled`` whenever that count is not zero — even when the main process lived on and
exited 0.

The test kubelet does the same where this machine offers it (cgroup v1's memory controller,
writable: root) and the kubelet was asked to (``TestKubelet(memory_cgroups=True)``): one
cgroup per container under :data:`PARENT`, joined by podinit before the exec and
bind-mounted at ``/sys/fs/cgroup/memory`` inside the container's mount namespace.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from typing import Any, Mapping, Optional

MEMORY_ROOT = "/sys/fs/cgroup/memory"
PARENT = "sbatch-k8s-test-kubelet"
#: Where a container sees its own cgroup (what the runtime reads its OOM count from).
CONTAINER_PATH = "/sys/fs/cgroup/memory"
_UNITS = {"": 1, "k": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4,
          "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4}


def available(root: str = MEMORY_ROOT) -> bool:
    """Whether this process can make memory cgroups here (cgroup v1, root)."""
    return os.path.isfile(os.path.join(root, "memory.limit_in_bytes")) and \
        os.access(root, os.W_OK)


def memory_limit_bytes(container: Mapping[str, Any]) -> Optional[int]:
    """``resources.limits.memory`` in bytes (None without one)."""
    text = str(((container.get("resources") or {}).get("limits") or {}).get("memory") or "")
    found = re.fullmatch(r"(\d+)([kMGT]i?)?", text)
    if not found:
        return None
    return int(found.group(1)) * _UNITS[found.group(2) or ""]


class MemoryCgroup:
    """One container's memory cgroup, created limited to ``limit_bytes``."""

    def __init__(self, limit_bytes: int, root: str = MEMORY_ROOT) -> None:
        self.path = os.path.join(root, PARENT, uuid.uuid4().hex[:16])
        os.makedirs(self.path)
        with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit_bytes))
        try:    # no swap on top of the limit, as a kubelet sets it
            with open(os.path.join(self.path, "memory.memsw.limit_in_bytes"), "w") as f:
                f.write(str(limit_bytes))
        except OSError:
            pass

    def oom_kills(self) -> int:
        """The kernel's count of OOM kills in this cgroup."""
        try:
            with open(os.path.join(self.path, "memory.oom_control")) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (retried briefly)."""
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)
