"""The detached supervisor of one local job (or one job array).

Forked by sbatch with the job's lock held (``sbatch --wait`` waits on that lock). It loops:
pending elements that are eligible and fit are started (their CPUs/GPUs reserved atomically),
running ones are watched; when an element's node 0 exits, its result and steps go into the
database. It exits when nothing is pending or running — which releases the lock.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import IO, Any, Dict, List, Mapping

from parsers.records import CANCELLED, PENDING
from sbatch_k8s import jobdb
from sbatch_k8s.backends.local.capacity import try_reserve
from sbatch_k8s.backends.local.layout import job_dir_of, write_private
from sbatch_k8s.backends.local.nodes import ElementRun, start_element
from sbatch_k8s.backends.local.waiting import NEVER, eligibility, hold_lock
from translators.config import ClusterConfig
from translators.storage import ENVIRONMENT_KEY

POLL_MIN_S = 0.01
POLL_MAX_S = 0.5


def spawn_supervisor(environ: Mapping[str, str], job_id: int,
                     config: ClusterConfig) -> IO[bytes]:
    """Fork the supervisor of ``job_id``; returns the lock handle sbatch may wait on."""
    directory = job_dir_of(environ, job_id)
    lock = hold_lock(os.path.join(directory, "lock"))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return lock
    code = 0
    try:
        os.setsid()
        log = os.open(os.path.join(directory, "supervisor.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        Supervisor(dict(environ), job_id, config).run()
    except BaseException as e:  # the supervisor must never return into sbatch's code
        sys.stderr.write(f"supervisor of job {job_id} failed: {type(e).__name__}: {e}\n")
        code = 1
    finally:
        os._exit(code)


class Supervisor:
    """Runs the elements of one submission to their end."""

    def __init__(self, environ: Dict[str, str], job_id: int, config: ClusterConfig) -> None:
        self.environ = environ
        self.job_id = job_id
        self.config = config
        self.conn = jobdb.connect(environ)
        self.base_dir = job_dir_of(environ, job_id)
        with open(os.path.join(self.base_dir, "job.json")) as f:
            self.template: Dict[str, Any] = json.load(f)
        self.pending: List[int] = [r["job_id"] for r in jobdb.select_jobs(
            self.conn, "job_id=? OR array_job_id=?", (job_id, job_id))]
        self.running: Dict[int, ElementRun] = {}

    def _limit(self) -> int:
        row = jobdb.get_job(self.conn, self.job_id)
        limit = row["array_max_running"] if row is not None else None
        return int(limit) if limit else len(self.pending) + len(self.running)

    def _try_start(self, now: float) -> bool:
        """Start what may start; True when something changed."""
        changed = False
        limit = self._limit()
        for job_id in list(self.pending):
            if len(self.running) >= limit:
                break
            row = jobdb.get_job(self.conn, job_id)
            if row is None or row["state"] != PENDING:
                self.pending.remove(job_id)
                changed = True
                continue
            ok, reason = eligibility(self.conn, row, now)
            if not ok:
                if reason == NEVER and row["kill_on_invalid_dep"]:
                    jobdb.update_job(self.conn, job_id, state=CANCELLED, reason=reason,
                                     end_time=now)
                elif reason != row["reason"]:
                    jobdb.update_job(self.conn, job_id, reason=reason)
                break
            gpu_ids = try_reserve(self.conn, job_id, row["cpus"], row["gpus"] or 0,
                                  row["node_count"], self.config.local)
            if gpu_ids is None:
                if row["reason"] != "Resources":
                    jobdb.update_job(self.conn, job_id, reason="Resources")
                break
            self.pending.remove(job_id)
            self.running[job_id] = self._start(row, gpu_ids)
            changed = True
        return changed

    def _start(self, row: Any, gpu_ids: List[List[int]]) -> ElementRun:
        job_id = row["job_id"]
        directory = job_dir_of(self.environ, job_id)
        if directory != self.base_dir:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            for name in ("script", "token", ENVIRONMENT_KEY):
                shutil.copyfile(os.path.join(self.base_dir, name),
                                os.path.join(directory, name))
                os.chmod(os.path.join(directory, name), 0o600)
        desc = dict(self.template, job_id=job_id, array_job_id=row["array_job_id"],
                    array_task_id=row["array_task_id"], gpu_ids=gpu_ids)
        write_private(os.path.join(directory, "job.json"),
                      json.dumps(desc, sort_keys=True, indent=1).encode())
        return start_element(self.conn, self.environ, self.config, directory, desc)

    def _reap(self) -> bool:
        changed = False
        for job_id, run in list(self.running.items()):
            if run.poll():
                run.finish(self.conn)
                del self.running[job_id]
                changed = True
        return changed

    def run(self) -> None:
        """Supervise until every element has ended."""
        idle = 0
        while self.pending or self.running:
            now = time.time()
            changed = self._reap()
            changed = self._try_start(now) or changed
            idle = 0 if changed else idle + 1
            time.sleep(min(POLL_MIN_S * (1.3 ** idle), POLL_MAX_S))
        self.conn.close()
