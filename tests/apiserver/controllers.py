"""Start the control loops of the emulated control plane."""

from __future__ import annotations

from typing import Iterable, List

from tests.apiserver.garbage_collector import GarbageCollector
from tests.apiserver.loops import Loop
from tests.apiserver.registry import Api
from tests.apiserver.scheduler import Scheduler


def start_controllers(api: Api, scheduler_names: Iterable[str] = ("default-scheduler",)
                      ) -> List[Loop]:
    """Start the garbage collector, the scheduler and the Job controller; return them."""
    from tests.apiserver.job_controller import JobController
    loops: List[Loop] = [GarbageCollector(api), Scheduler(api, scheduler_names),
                         JobController(api)]
    for loop in loops:
        loop.start()
    return loops
