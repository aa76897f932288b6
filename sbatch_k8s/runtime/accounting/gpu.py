"""GPU memory per process and utilisation per GPU from ``nvidia-smi`` (absent tool or GPU: no
figures, no error). Utilisation is the device's (``utilization.gpu``: the share of the last
sample period a kernel ran), attributed to the tasks that see that GPU."""

from __future__ import annotations

import shutil
import subprocess
from typing import Dict, List, Mapping, Tuple

QUERY = ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv"]
UTIL_QUERY = ["nvidia-smi", "--query-gpu=index,utilization.gpu",
              "--format=csv,noheader,nounits"]
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


def parse_utilisation(text: str) -> Dict[int, float]:
    """``{gpu index: percent}`` from ``nvidia-smi --query-gpu=index,utilization.gpu
    --format=csv,noheader,nounits`` output (``[N/A]`` and bad lines skipped)."""
    found: Dict[int, float] = {}
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 2 and fields[0].isdigit():
            try:
                found[int(fields[0])] = float(fields[1])
            except ValueError:
                continue
    return found


def _ask(query: List[str], timeout_s: float) -> str:
    """nvidia-smi's output for ``query``; "" when it is absent or fails."""
    if shutil.which(query[0]) is None:
        return ""
    try:
        done = subprocess.run(query, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""


def gpu_memory_by_pid(timeout_s: float = 5.0) -> Dict[int, int]:
    """Current GPU memory per pid, or ``{}`` when nvidia-smi is absent or fails."""
    return parse_compute_apps(_ask(QUERY, timeout_s))


def gpu_utilisation_by_index(timeout_s: float = 5.0) -> Dict[int, float]:
    """Current utilisation per GPU index, or ``{}`` when nvidia-smi is absent or fails."""
    return parse_utilisation(_ask(UTIL_QUERY, timeout_s))


def visible_gpus(environ: Mapping[str, str]) -> Tuple[int, ...]:
    """The GPU indices a task sees (``CUDA_VISIBLE_DEVICES``; none when unset or not
    indices)."""
    text = environ.get("CUDA_VISIBLE_DEVICES", "")
    return tuple(int(part) for part in text.split(",") if part.strip().isdigit())
