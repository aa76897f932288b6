"""``sbatch-k8s logs|events|yaml`` and ``scontrol show job -d`` on the local backend, with real
jobs: each node's log read, followed and written to files byte for byte against the node
process's own log file; the runtime's events; the job's description; Slurm's detail lines."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Tuple

import pytest

from tests.local.harness import REPO, LocalSlurm, job_id_of, run_tool, tool_argv, tool_env
from tests.ui.harness import node1_script

pytestmark = pytest.mark.slow

#: How the detail lines of ``scontrol show job -d`` begin (the rest is the plain record).
DETAILS = ("   DerivedExitCode=", "   JOB_GRES=", "     ")
#: A step on node 1 that writes its lines into node 1's own log (the runtime's stderr).
NODE1_LINES = "".join(f"node-one line {i}\n" for i in range(3))


def _node_log(slurm: LocalSlurm, job: int, index: int) -> bytes:
    return (slurm.state / "jobs" / str(job) / f"node-{index}.log").read_bytes()


def _submit(slurm: LocalSlurm, *args: str) -> int:
    done = slurm.run("sbatch", *args)
    assert done.returncode == 0, done.stderr
    return job_id_of(done.stdout)


def _wait_ended(slurm: LocalSlurm, job: int) -> None:
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", str(job)).stdout.strip() == "",
                   timeout=60, interval=0.2)


def test_node_one_log_read_followed_and_written_byte_exact(slurm: LocalSlurm) -> None:
    """``logs --node 1`` of a 2-node job, ``-f`` from before it starts to its end, ``-o DIR``
    with one file per node equal to the node processes' logs, one stderr line each."""
    slurm.script("two.sh", node1_script(3))
    job = _submit(slurm, "two.sh")
    following = subprocess.Popen(tool_argv("logs", "-f", str(job), "--node", "1"),
                                 cwd=slurm.work, env=tool_env(slurm), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
    out, err = following.communicate(timeout=90)
    assert following.returncode == 0 and err == b"", err
    assert out == NODE1_LINES.encode()        # the whole log, as it came, to the job's end
    _wait_ended(slurm, job)
    assert _node_log(slurm, job, 1) == NODE1_LINES.encode()
    by_index = run_tool(slurm, "logs", str(job), "--node", "1")
    by_name = run_tool(slurm, "logs", str(job), "--node", "127.0.0.3")
    assert by_index.stdout == by_name.stdout == NODE1_LINES.encode(), by_index.stderr
    written = run_tool(slurm, "logs", str(job), "-o", "logs")
    assert written.returncode == 0, written.stderr
    lines = written.stderr.decode().splitlines()
    assert [re.sub(r"\(\d+ bytes", "(N bytes", line) for line in lines] == [
        f"sbatch-k8s logs: wrote logs/node-{i}.log (N bytes, Node {i} (127.0.0.{i + 2}))"
        for i in range(2)], lines
    for index in range(2):
        assert (slurm.work / "logs" / f"node-{index}.log").read_bytes() == \
            _node_log(slurm, job, index)
    batch = run_tool(slurm, "logs", f"{job}.batch")
    assert batch.returncode == 0 and batch.stdout == _node_log(slurm, job, 0)


def _following(pid: int, log: Path) -> bool:
    """Whether ``logs -f`` (process ``pid``) has got to following: node 0's ``log`` open, or
    asleep between its looks for a node 0 not started yet (``time.sleep``'s wait channel).
    Not a fixed time: a loaded machine may still be importing, and Python's SIGINT handler
    is installed from its first instant (SigCgt says nothing), so a Ctrl-C there is a
    KeyboardInterrupt traceback."""
    proc = Path(f"/proc/{pid}")
    try:
        if (proc / "wchan").read_text() == "hrtimer_nanosleep":
            return True
        return any(os.readlink(fd) == str(log) for fd in (proc / "fd").iterdir())
    except OSError:     # it ended, or a descriptor closed meanwhile
        return False


def _followed_then_interrupted(slurm: LocalSlurm, job: int) -> Tuple[int, bytes, bytes]:
    """``logs -f JOB`` until it follows (at most 120 s), then Ctrl-C: its exit status, stdout
    and stderr."""
    following = subprocess.Popen(tool_argv("logs", "-f", str(job)), cwd=slurm.work,
                                 env=tool_env(slurm), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
    log = slurm.state / "jobs" / str(job) / "node-0.log"
    slurm.wait_for(lambda: following.poll() is not None or _following(following.pid, log),
                   timeout=120)
    following.send_signal(signal.SIGINT)
    out, err = following.communicate(timeout=60)
    return following.returncode, out, err


def test_follow_stops_cleanly_on_ctrl_c(slurm: LocalSlurm) -> None:
    job = _submit(slurm, "--wrap", "sleep 60")
    code, _, err = _followed_then_interrupted(slurm, job)
    assert code == 130 and b"Traceback" not in err, err
    slurm.run("scancel", str(job))


def test_pending_job_followed_until_ctrl_c_and_read_in_one_line(slurm: LocalSlurm) -> None:
    """A job with no nodes yet (held here; under load, any job just submitted): ``-f`` waits
    for node 0, Ctrl-C stops it; a plain read says in one line that there is no log yet."""
    job = _submit(slurm, "--hold", "--wrap", "true")
    read = run_tool(slurm, "logs", str(job))
    assert read.returncode == 1 and read.stderr.decode() == (
        f"sbatch-k8s logs: error: Node 0 of job {job} has no log: "
        "the job has no nodes (yet)\n"), read.stderr
    written = run_tool(slurm, "logs", str(job), "-o", "logs")
    assert (written.returncode, written.stderr.decode()) == (
        1, f"sbatch-k8s logs: error: job {job} has no node logs: the job has no nodes "
           "(yet)\n")
    assert not (slurm.work / "logs").exists()
    assert _followed_then_interrupted(slurm, job) == (130, b"", b"")
    slurm.run("scancel", str(job))


@pytest.mark.parametrize("args, line", [
    (["logs", "0"], "sbatch-k8s logs: error: Invalid job id specified"),
    (["logs", "x.1"], "sbatch-k8s logs: error: Invalid job id specified"),
    (["logs", "999"], "sbatch-k8s logs: error: Invalid job id specified"),
    (["events", "12.0"], "sbatch-k8s events: error: Invalid job id specified"),
    (["yaml", "999"], "sbatch-k8s yaml: error: Invalid job id specified"),
])
def test_bad_job_ids_in_slurms_words(slurm: LocalSlurm, args: list, line: str) -> None:
    done = run_tool(slurm, *args)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (1, b"", line + "\n")


def test_what_a_log_cannot_do_is_one_line(slurm: LocalSlurm) -> None:
    job = _submit(slurm, "-N2", "--wrap", "srun true")
    _wait_ended(slurm, job)
    for args, said in [
        ([f"{job}.0"], f"a node's log is not divided by step: {job}.0 cannot be shown alone"),
        ([str(job), "--since", "10"], "--since is not available here: the local backend's "
                                      "logs carry no times"),
        ([str(job), "--since", "bogus"], "--since: Invalid time specification (pos=0): bogus"),
        ([str(job), "--node", "2"], f"job {job} has no node 2 (its nodes: 127.0.0.[2-3])"),
        ([f"{job}.batch", "--node", "1"], f"the batch step of job {job} runs on node 0 only"),
        ([str(job), "-f", "-o", "d"], "-o writes the logs as they are now; it does not follow"),
    ]:
        done = run_tool(slurm, "logs", *args)
        text = done.stderr.decode()
        assert done.returncode == 1 and text.count("\n") == 1 and \
            text.startswith(f"sbatch-k8s logs: error: {said}"), (args, text)


def test_events_are_the_records_and_the_runtimes_in_time_order(slurm: LocalSlurm) -> None:
    job = _submit(slurm, "-N2", "--wrap", "srun hostname; srun -N1 bash -c 'exit 3'; "
                                          "srun -N1 bash -c 'kill -9 $$'; true")
    _wait_ended(slurm, job)
    done = run_tool(slurm, "events", str(job))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].split() == ["TIME", "TYPE", "REASON", "OBJECT", "SOURCE", "MESSAGE"]
    rows = [re.split(r"\s{3,}", line, maxsplit=5) for line in lines[1:]]
    assert [r[2] for r in rows][:2] == ["Submitted", "Started"]
    assert [r[2] for r in rows][-1] == "Ended"
    assert sorted(r[3] for r in rows if r[2] == "NodeUp") == ["node 127.0.0.2",
                                                              "node 127.0.0.3"]
    ended = {r[3]: r[5] for r in rows if r[2] == "StepEnded"}
    assert ended[f"step {job}.0"] == "COMPLETED, exit code 0:0"
    assert ended[f"step {job}.1"] == "FAILED, exit code 3:0"
    assert ended[f"step {job}.2"].endswith("exit code 0:9"), ended
    assert [r[5] for r in rows if r[2] == "Signal"] == ["its tasks ended by SIGKILL"]
    assert {r[4] for r in rows} == {"record", "runtime"}
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)


def test_yaml_is_the_description_without_the_environment(slurm: LocalSlurm) -> None:
    job = _submit(slurm, "-J", "described", "--export=ALL,MY_TOKEN=hunter2-secret",
                  "--wrap", "true")
    _wait_ended(slurm, job)
    shown = run_tool(slurm, "yaml", str(job))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert "job_name: described\n" in text and f"job_id: {job}\n" in text
    assert "hunter2" not in text and "environment" not in text.split(":")[0::2]
    as_json = json.loads(run_tool(slurm, "yaml", str(job), "-o", "json").stdout)
    assert as_json["job_name"] == "described" and "environment" not in as_json


def test_scontrol_show_job_details(slurm: LocalSlurm) -> None:
    """Slurm's -d lines (``-N3 -n5 --mem-per-cpu=100``: real Slurm 22.05 gives the first
    node 3 CPUs), then each node's log; ``-d`` before ``show``, after it, and interactive."""
    job = _submit(slurm, "-N3", "-n5", "--mem-per-cpu=100", "--wrap", "sleep 30")
    slurm.wait_for(lambda: "R" == slurm.run("squeue", "-h", "-o", "%t", "-j",
                                            str(job)).stdout.strip(), timeout=30)
    directory = slurm.state / "jobs" / str(job)
    expected = [
        "   DerivedExitCode=0:0",
        "   JOB_GRES=(null)",
        "     Nodes=127.0.0.2 CPU_IDs=0-2 Mem=300 GRES=",
        "     Nodes=127.0.0.[3-4] CPU_IDs=0 Mem=100 GRES=",
    ] + [f"     Node=127.0.0.{i + 2} Log={directory}/node-{i}.log" for i in range(3)]
    for argv in (["-d", "show", "job", str(job)], ["show", "job", str(job), "--details"]):
        shown = slurm.run("scontrol", *argv).stdout.splitlines()
        assert [line for line in shown if line.startswith(DETAILS)] == expected, shown
        assert not any(line.startswith(DETAILS) for line in _plain(slurm, job))
        assert shown.index("   JOB_GRES=(null)") == \
            next(i for i, line in enumerate(shown) if line.startswith("   Socks/Node=")) + 1
    typed = slurm.run("scontrol", stdin=f"details\nshow job {job}\n").stdout
    assert "     Nodes=127.0.0.2 CPU_IDs=0-2 Mem=300 GRES=" in typed
    one = slurm.run("scontrol", "-d", "-o", "show", "job", str(job)).stdout
    assert "CoreSpec=* JOB_GRES=(null)   Nodes=127.0.0.2 CPU_IDs=0-2 Mem=300 GRES=   Nodes=" \
        in one, one
    slurm.run("scancel", str(job))


def _plain(slurm: LocalSlurm, job: int) -> list:
    return slurm.run("scontrol", "show", "job", str(job)).stdout.splitlines()


def test_the_tools_help_lists_the_commands() -> None:
    done = subprocess.run(tool_argv("--help"), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    for name in ("logs", "events", "yaml"):
        assert re.search(rf"^  {name}\s", done.stdout, re.M), done.stdout
