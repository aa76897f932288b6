"""Running jobs under the local scheduler: launching one, and taking running ones over.

A job the scheduler marked RUNNING gets its directory (array elements: a copy of the array's
script, token and private environment), its ``job.json`` with its GPU ids, and its node
processes (:func:`~sbatch_k8s.backends.local.node_processes.start_element`), started with the
submitter's settings kept in the array's ``launch.json``. Nothing else runs for it: a
running job costs its node processes, and a pending one nothing but its row.

A scheduler that starts while jobs are RUNNING in the database (its predecessor was killed)
takes them over (:func:`adopt_running`): node processes still alive are watched by pid; a
job whose nodes have all ended is recorded from what node 0 left; a job that was marked
RUNNING but never launched (no node log) goes back to PENDING — it never ran, so it is not
run twice.
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import json
import os
import shutil
import sqlite3
from typing import Any, Dict, List, Mapping

from parsers.job_records import PENDING, RUNNING
from sbatch_k8s import jobdb
from sbatch_k8s.backends.local.layout import job_dir_of, write_private
from sbatch_k8s.backends.local.node_processes import (
    LAUNCH_SETTINGS,
    ElementRun,
    NodeProcess,
    node_alive,
    start_element,
)
from parsers.vocabulary import ENVIRONMENT_KEY

LAUNCH_FILE = "launch.json"


def write_launch_settings(job_dir: str, environ: Mapping[str, str]) -> None:
    """Keep the submitter's :data:`LAUNCH_SETTINGS` beside the job (mode 0600)."""
    settings = {k: environ[k] for k in LAUNCH_SETTINGS if k in environ}
    write_private(os.path.join(job_dir, LAUNCH_FILE), json.dumps(settings).encode())


def _launch_settings(base_dir: str, environ: Mapping[str, str]) -> Dict[str, str]:
    try:
        with open(os.path.join(base_dir, LAUNCH_FILE)) as f:
            return dict(json.load(f))
    except (OSError, ValueError):  # a job submitted before launch.json existed
        return {k: environ[k] for k in LAUNCH_SETTINGS if k in environ}


def launch(conn: sqlite3.Connection, environ: Mapping[str, str], row: sqlite3.Row,
           gpu_ids: List[List[int]]) -> ElementRun:
    """Start the node processes of a job the scheduler just marked RUNNING."""
    job_id = row["job_id"]
    base_dir = job_dir_of(environ, row["array_job_id"] or job_id)
    directory = job_dir_of(environ, job_id)
    with open(os.path.join(base_dir, DESCRIPTION_KEY)) as f:
        template: Dict[str, Any] = json.load(f)
    if directory != base_dir:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        for name in ("script", "token", ENVIRONMENT_KEY):
            shutil.copyfile(os.path.join(base_dir, name), os.path.join(directory, name))
            os.chmod(os.path.join(directory, name), 0o600)
    desc = dict(template, job_id=job_id, array_job_id=row["array_job_id"],
                array_task_id=row["array_task_id"], gpu_ids=gpu_ids,
                restart_count=int(row["restarts"] or 0))
    write_private(os.path.join(directory, DESCRIPTION_KEY),
                  json.dumps(desc, sort_keys=True, indent=1).encode())
    return start_element(conn, _launch_settings(base_dir, environ), directory, desc)


def _find_nodes(directory: str, count: int) -> List[int]:
    """Pids of live node processes of the job in ``directory`` (a search of /proc, for a
    job whose pids were never recorded), in node order; [] when node 0 is not among them."""
    found: Dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        for index in range(count):
            if node_alive(int(name), os.path.join(directory, f"node-{index}")):
                found[index] = int(name)
    return [found[i] for i in sorted(found)] if 0 in found else []


def adopt_running(conn: sqlite3.Connection, environ: Mapping[str, str]
                  ) -> Dict[int, ElementRun]:
    """Take over the jobs the database says are RUNNING (see the module's docstring)."""
    runs: Dict[int, ElementRun] = {}
    for row in jobdb.select_jobs(conn, "state=?", (RUNNING,)):
        job_id = row["job_id"]
        directory = job_dir_of(environ, job_id)
        count = int(row["node_count"] or 1)
        pids = [int(p) for p in (row["node_pids"] or "").split(",") if p]
        if len(pids) != count:
            pids = _find_nodes(directory, count)
        if not pids and not os.path.exists(os.path.join(directory, "node-0.log")):
            conn.execute("UPDATE jobs SET state=?, reason='None', start_time=NULL, "
                         "gpu_ids='', node_list='', batch_host='', port=NULL "
                         "WHERE job_id=? AND state=?", (PENDING, job_id, RUNNING))
            continue
        spools = [os.path.join(directory, f"node-{i}") for i in range(count)]
        processes = [NodeProcess(pid, spool) for pid, spool in zip(pids, spools)]
        if not processes:
            processes = [NodeProcess(0, spools[0])]  # all gone: recorded at the next watch
        settings = _launch_settings(job_dir_of(environ, row["array_job_id"] or job_id), environ)
        runs[job_id] = ElementRun(job_id, directory, processes, settings)
    return runs
