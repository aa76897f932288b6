"""``sbatch-k8s logs JOB[.STEP] [--node N|NAME] [-f] [--since T] [-o DIR]``: a node's log.

A node's log is what its runtime process writes: on a cluster the node's pod's container log
(node 0's read through the stream decoder when it carries the job's output files: those
bytes and the runtime's messages, without the stream's records), locally the node process's
log in the job's directory. The batch step's output files are ``sattach``'s and the files
themselves; the console shows both (:mod:`sbatch_k8s.inspection`).

* ``--node``: node index (``0`` = the batch host, the default) or node name;
* ``-f``: follow the log until the job ends (waiting for a node still starting); Ctrl-C stops;
* ``--since``: only what was written from then on (:func:`~parsers.report_options.timespec.
  parse_since`); on a cluster only, where the API server keeps each line's time;
* ``-o DIR``: every node's log (``--node``: that one) written to ``DIR/node-<i>.log``, one
  line on stderr per file written, one error line per log that cannot be read (exit 1);
* ``JOB.batch`` is node 0's log (the batch step runs there); a node's log is not divided by
  step, so other steps are refused in one line.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Tuple

import click

from sbatch_k8s.tool.job_argument import (
    CommandError,
    fail_with,
    find_record,
    parse_job_argument,
)

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from sbatch_k8s.inspection.file_logs import LogHandle
    from sbatch_k8s.inspection.inspector import JobInspector
    from sbatch_k8s.inspection.values import LogSource

COMMAND = "logs"
#: How often a followed node that has no log yet is looked at again.
WAIT_S = 1.0
#: The exit status after Ctrl-C, as a shell reports SIGINT.
INTERRUPTED = 130


def _node_sources(inspector: "JobInspector", record: "JobRecord") -> List["LogSource"]:
    from sbatch_k8s.inspection.values import NODE_LOG

    return [s for s in inspector.log_sources(record) if s.kind == NODE_LOG]


def _node_index(wanted: str, inspector: "JobInspector", record: "JobRecord") -> int:
    """``--node``'s value (an index, or a node's name as the job's node list or its pods
    name it) → the node's index."""
    from parsers.values.hostlist import expand_hostlist

    count = max(record.node_count, 1)
    if wanted.isascii() and wanted.isdigit() and int(wanted) < count:
        return int(wanted)
    names = {node.name: node.index for node in inspector.nodes(record)}
    try:
        listed = expand_hostlist(record.node_list) if record.node_list else []
    except ValueError:
        listed = []
    names.update((name, index) for index, name in enumerate(listed))
    if wanted in names and names[wanted] < count:
        return names[wanted]
    shown = record.node_list or f"{count} node(s)"
    raise CommandError(f"job {record.job_id_text} has no node {wanted} (its nodes: {shown})")


def _chosen_index(step: Optional[str], node: Optional[str], inspector: "JobInspector",
                  record: "JobRecord") -> Optional[int]:
    """The one node whose log is asked for (None: every node's, with ``-o``)."""
    index = _node_index(node, inspector, record) if node is not None else None
    if step is None:
        return index
    if step != "batch":
        raise CommandError(f"a node's log is not divided by step: {record.job_id_text}.{step} "
                           "cannot be shown alone (see --node)")
    if index not in (None, 0):
        raise CommandError(f"the batch step of job {record.job_id_text} runs on node 0 only")
    return 0


def _write(out: Callable[[bytes], None], chunks: Iterable[bytes]) -> int:
    written = 0
    for chunk in chunks:
        out(chunk)
        written += len(chunk)
    return written


def _said_lost(handle: "LogHandle", title: str) -> int:
    """One error line when bytes of the log never came back; the exit status."""
    from sbatch_k8s.user_messages import print_error

    if not handle.lost:
        return 0
    print_error(f"sbatch-k8s {COMMAND}", f"{title}: {handle.lost} bytes were rotated away "
                                         "before they could be read")
    return 1


def _stdout(chunk: bytes) -> None:
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def _available_source(inspector: "JobInspector", record: "JobRecord", index: int,
                      wait: bool, ended: Callable[[], bool],
                      current: Callable[[], "JobRecord"]) -> Tuple["JobRecord", "LogSource"]:
    """The job's record and node ``index``'s log source, once available (``wait``: until
    the job ends; a pending job has no nodes yet, so its record is read again each time)."""
    while True:
        sources = _node_sources(inspector, record)
        source = sources[index] if index < len(sources) else None
        if source is not None and source.available:
            return record, source
        if not wait or ended():
            why = source.why if source is not None else "the job has no nodes (yet)"
            title = source.title if source is not None else f"Node {index}"
            raise CommandError(f"{title} of job {record.job_id_text} has no log: {why}")
        time.sleep(WAIT_S)
        record = current()


def _open(inspector: "JobInspector", record: "JobRecord", source: "LogSource",
          ended: Callable[[], bool], since: Optional[int]) -> "LogHandle":
    from sbatch_k8s.inspection.file_logs import SinceUnavailable

    try:
        return inspector.open_log(record, source, ended, since)
    except SinceUnavailable as e:
        raise CommandError(f"--since is not available here: {e}") from e


def _write_all(inspector: "JobInspector", record: "JobRecord", directory: str,
               only: Optional[int], ended: Callable[[], bool], since: Optional[int]) -> int:
    """``-o DIR``: each node's log to a file; the exit status (1 after any log missing)."""
    from sbatch_k8s.user_messages import print_error

    sources = _node_sources(inspector, record)
    if not sources:
        raise CommandError(f"job {record.job_id_text} has no node logs: the job has no nodes "
                           "(yet)")
    os.makedirs(directory, exist_ok=True)
    code = 0
    for index, source in enumerate(sources):
        if only is not None and index != only:
            continue
        if not source.available:
            print_error(f"sbatch-k8s {COMMAND}", f"{source.title}: not written: {source.why}")
            code = 1
            continue
        path = os.path.join(directory, source.file_name)
        handle = _open(inspector, record, source, ended, since)
        with open(path, "wb") as f:
            size = _write(f.write, handle.chunks())
        sys.stderr.write(f"sbatch-k8s {COMMAND}: wrote {path} ({size} bytes, "
                         f"{source.title})\n")
        code = max(code, _said_lost(handle, source.title))
    return code


def _follow(handle: "LogHandle", title: str) -> int:
    """Copy the followed log to stdout until it ends or Ctrl-C."""
    stop = threading.Event()
    try:
        _write(_stdout, handle.follow(stop))
    except KeyboardInterrupt:
        stop.set()
        return INTERRUPTED
    except BrokenPipeError:
        stop.set()
        return 0
    return _said_lost(handle, title)


def _logs(job: str, node: Optional[str], follow: bool, since_text: Optional[str],
          output_dir: Optional[str]) -> int:
    from parsers.formats.messages import BareError
    from parsers.report_options.timespec import parse_since
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.inspection.inspector import JobInspector
    from sbatch_k8s.inspection.job_lookup import has_ended

    wanted = parse_job_argument(job)
    if follow and output_dir is not None:
        raise CommandError("-o writes the logs as they are now; it does not follow (-f)")
    try:
        since = parse_since(since_text, int(time.time())) if since_text is not None else None
    except BareError as e:
        raise CommandError(f"--since: {e.lines[0]}") from e
    backend = open_backend(os.environ)
    record = find_record(backend, wanted.job)
    inspector = JobInspector(backend)
    index = _chosen_index(wanted.step, node, inspector, record)

    def ended() -> bool:
        return has_ended(backend, record)
    if output_dir is not None:
        return _write_all(inspector, record, output_dir, index, ended, since)
    if follow:
        try:
            record, source = _available_source(inspector, record, index or 0, True, ended,
                                               lambda: find_record(backend, wanted.job))
        except KeyboardInterrupt:
            return INTERRUPTED
        return _follow(_open(inspector, record, source, ended, since), source.title)
    _, source = _available_source(inspector, record, index or 0, False, ended, lambda: record)
    handle = _open(inspector, record, source, ended, since)
    try:
        _write(_stdout, handle.chunks())
    except BrokenPipeError:
        return 0
    return _said_lost(handle, source.title)


@click.command(name=COMMAND)
@click.argument("job", metavar="JOB[.STEP]")
@click.option("--node", metavar="N|NAME",
              help="the node: its index (0, the batch host, by default) or its name")
@click.option("-f", "--follow", is_flag=True,
              help="follow the log until the job ends (Ctrl-C stops)")
@click.option("--since", "since", metavar="DURATION|TIME",
              help="only what was written since then: a duration as --time takes it "
                   "(10 = 10 minutes, 1:30:00) or a time as sacct -S takes it "
                   "(2026-11-28T08:00, now-1hour); on a cluster only")
@click.option("-o", "--output-dir", "output_dir", metavar="DIR",
              help="write every node's log (with --node: that one) to DIR/node-<i>.log")
def command(job: str, node: Optional[str], follow: bool, since: Optional[str],
            output_dir: Optional[str]) -> None:
    """A node's log of a job (its pod's log on a cluster, its process's log locally).

    JOB.batch is node 0's log (the batch step runs there); a node's log is not divided by
    step, so other steps are refused."""
    try:
        code = _logs(job, node, follow, since, output_dir)
    except CommandError as e:
        raise fail_with(COMMAND, e) from None
    if code:
        raise click.exceptions.Exit(code)
