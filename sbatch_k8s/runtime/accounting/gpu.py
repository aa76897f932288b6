"""GPU memory per process from ``nvidia-smi`` (absent tool or GPU: no figures, no error)."""

from __future__ import annotations

import shutil
import subprocess
from typing import Dict

QUERY = ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv"]
_UNITS = {"kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "b": 1}


def parse_compute_apps(text: str) -> Dict[int, int]:
    """``{pid: used bytes}`` from ``nvidia-smi --query-compute-apps=pid,used_memory
    --format=csv`` output (header line first; values like ``1234 MiB``; bad lines skipped)."""
    used: Dict[int, int] = {}
    for line in text.splitlines()[1:]:
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 2 or not fields[0].isdigit():
            continue
        amount, _, unit = fields[1].partition(" ")
        if not amount.isdigit() or unit.lower() not in _UNITS:
            continue
        pid = int(fields[0])
        used[pid] = used.get(pid, 0) + int(amount) * _UNITS[unit.lower()]
    return used


def gpu_memory_by_pid(timeout_s: float = 5.0) -> Dict[int, int]:
    """Current GPU memory per pid, or ``{}`` when nvidia-smi is absent or fails."""
    if shutil.which(QUERY[0]) is None:
        return {}
    try:
        done = subprocess.run(QUERY, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    if done.returncode != 0:
        return {}
    return parse_compute_apps(done.stdout.decode("utf-8", "replace"))
