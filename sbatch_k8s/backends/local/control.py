"""Talking to a running local job's node 0 from the login side (scancel, srun's Ctrl-C)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from typing import Any, Dict

from sbatch_k8s.runtime.protocol import ProtocolError, read_token
from sbatch_k8s.runtime.srun import ask

CONTROL_TIMEOUT_S = 10.0


def send_to_node0(row: sqlite3.Row, message: Dict[str, Any]) -> bool:
    """Send ``message`` to the job's node 0 agent; False when it cannot be reached."""
    if not row["port"] or not row["batch_host"]:
        return False
    token = read_token(os.path.join(row["job_dir"], "token"))

    async def exchange() -> Dict[str, Any]:
        return await asyncio.wait_for(
            ask(row["batch_host"], int(row["port"]), token, message), CONTROL_TIMEOUT_S)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(exchange())
        return True
    except (OSError, ProtocolError, asyncio.TimeoutError):
        return False
    finally:
        loop.close()
