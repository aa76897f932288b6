"""Talking to a running local job's node 0 from the login side (scancel, srun's Ctrl-C)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from typing import Any, Dict

from parsers.job_records import RUNNING
from sbatch_k8s import jobdb
from sbatch_k8s.runtime.protocol import ProtocolError, read_token
from sbatch_k8s.runtime.srun.launch import ask

CONTROL_TIMEOUT_S = 10.0
#: How long a job just marked RUNNING may take before its node 0 listens, and how often it
#: is asked again meanwhile.
START_WAIT_S, START_RETRY_S = 30.0, 0.2


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


def send_while_running(conn: sqlite3.Connection, job_id: int, message: Dict[str, Any]) -> bool:
    """Send ``message`` to the running job's node 0, asking again while a node 0 that was
    just started does not listen yet; False once the job is no longer RUNNING (or node 0
    never answered within :data:`START_WAIT_S`)."""
    deadline = time.monotonic() + START_WAIT_S
    while True:
        row = jobdb.get_job(conn, job_id)
        if row is None or row["state"] != RUNNING:
            return False
        if send_to_node0(row, message):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(START_RETRY_S)
