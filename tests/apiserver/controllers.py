"""Start the control loops of the emulated control plane."""

from __future__ import annotations

from typing import Any, List

from tests.apiserver.registry import Api


def start_controllers(api: Api) -> List[Any]:
    """Start every loop; returns them (each has ``stop()`` and ``join(timeout)``)."""
    return []
