"""srun's side of a step's registration with node 0 (see
:mod:`sbatch_k8s.runtime.batch_host.step_registry`)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import SlurmInputError
from sbatch_k8s.runtime.protocol import (
    ProtocolError,
    authenticate,
    decode_json,
    encode_json,
    read_frame,
)


def step_holds(request: Any, layout: Any, desc: Mapping[str, Any],
               gpus: Sequence[int]) -> Tuple[List[List[int]], List[List[int]]]:
    """What the step holds, ``[node_index, cpus, gpus]`` per node, and the GPUs it only
    shares (``--overlap``: ``[node_index, 0, gpus]``, held by nobody). CPUs: tasks ×
    cpus-per-task with ``--exact`` (implied by ``-c`` and ``--exclusive``), else the nodes'
    CPUs; GPUs: ``gpus`` (per step node, from :func:`parsers.step_gpus.step_gpu_counts`)."""
    if request.overlap:
        return [], [[i, 0, g] for i, g in zip(layout.node_indices, gpus) if g]
    exact = request.exact or request.cpus_per_task or request.exclusive
    cpt = request.cpus_per_task or 1
    cpus = desc["cpus_per_node"]
    return [[i, len(ranks) * cpt if exact else int(cpus[i]), g]
            for i, ranks, g in zip(layout.node_indices, layout.ranks, gpus)], []


class Registration:
    """A registered step: its id, and the connection that keeps it registered — over which
    node 0 also passes on ``scancel <job>.<step>``."""

    def __init__(self, step_id: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter,
                 gpu_ids: Optional[Mapping[str, List[int]]] = None) -> None:
        self.step_id = step_id
        #: The GPU ids node 0 bound for the step, by job node index (as text).
        self.gpu_ids = dict(gpu_ids or {})
        self.reader = reader
        self.writer = writer
        self.recorded = asyncio.Event()
        self.watcher: "Optional[asyncio.Future[None]]" = None

    def watch(self, on_cancel: Callable[[Optional[int]], None],
              on_job_end: Callable[[], None]) -> None:
        """While the step runs, call ``on_cancel(signal or None)`` for each scancel of it,
        and ``on_job_end()`` (then acknowledge) when node 0 says the job is ending."""
        self.watcher = asyncio.ensure_future(self._watch(on_cancel, on_job_end))

    async def _watch(self, on_cancel: Callable[[Optional[int]], None],
                     on_job_end: Callable[[], None]) -> None:
        try:
            while True:
                frame = await read_frame(self.reader)
                if frame is None:
                    return
                message = decode_json(frame[2])
                if message.get("type") == "cancel":
                    signum = message.get("signal")
                    on_cancel(None if signum is None else int(signum))
                elif message.get("type") == "job_complete":
                    on_job_end()
                    self.writer.write(encode_json({"type": "aborting"}))
                    await self.writer.drain()
                elif message.get("type") == "ok":
                    self.recorded.set()
                    return
        except (OSError, ProtocolError, asyncio.IncompleteReadError):
            return

    def report_usage(self, usage: Dict[str, Any]) -> None:
        """The step's usage so far, to node 0 (no reply; a closed connection drops it)."""
        try:
            self.writer.write(encode_json({"type": "usage", "usage": usage}))
        except (OSError, RuntimeError):
            pass

    async def end(self, result: Dict[str, Any]) -> None:
        """Record the step's end (releasing its CPUs)."""
        try:
            self.writer.write(encode_json({"type": "step_end", "result": result}))
            await self.writer.drain()
            if self.watcher is None:
                await asyncio.wait_for(read_frame(self.reader), 10)
            else:
                await asyncio.wait_for(self.recorded.wait(), 10)
        except (OSError, ProtocolError, asyncio.TimeoutError):
            sys.stderr.write(f"srun: error: could not record the end of step {self.step_id}\n")
        finally:
            if self.watcher is not None:
                self.watcher.cancel()
            self.writer.close()


async def register_step(address: str, port: int, token: bytes, job_id: int,
                        info: Dict[str, Any], holds: Sequence[List[int]],
                        immediate: bool, shared_gpus: Sequence[List[int]] = ()
                        ) -> Registration:
    """Ask node 0 for a step id (and its GPUs), waiting (as Slurm says) while the nodes are
    busy."""
    try:
        reader, writer = await asyncio.open_connection(address, port)
        await authenticate(reader, writer, token)
        writer.write(encode_json({"type": "step", "info": info, "holds": list(holds),
                                  "shared_gpus": list(shared_gpus),
                                  "immediate": immediate}))
        await writer.drain()
        waited = False
        while True:
            frame = await read_frame(reader)
            if frame is None:
                raise ProtocolError("node 0 closed the connection")
            reply = decode_json(frame[2])
            if reply["type"] == "step":
                if waited:
                    sys.stderr.write(f"srun: Step created for job {job_id}\n")
                return Registration(int(reply["step_id"]), reader, writer,
                                    reply.get("gpu_ids"))
            if reply["type"] == "busy":
                how = "still" if waited else "temporarily"
                sys.stderr.write(f"srun: Job {job_id} step creation {how} disabled, "
                                 f"retrying ({reply['reason']})\n")
                sys.stderr.flush()
                waited = True
                continue
            writer.close()
            raise SlurmInputError(f"Unable to create step for job {job_id}: "
                                  f"{reply.get('reason', 'refused')}", exit_code=1)
    except (OSError, ProtocolError) as e:
        raise SlurmInputError(f"Unable to create step for job {job_id}: {e}",
                              exit_code=1) from e
