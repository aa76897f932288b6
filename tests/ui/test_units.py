"""The console's pieces one by one: access checks (over a real loopback connection), the
table's filters and rows, the live feed's difference, why a job waits, actions offered."""

from __future__ import annotations

import os
import socket

import pytest

from parsers.job_records import JobRecord, StepRecord
from sbatch_k8s.ui import access
from sbatch_k8s.ui.job_detail import actions, dependency_ids, job_json
from sbatch_k8s.ui.job_table import COLUMNS, filter_argv, table_rows
from sbatch_k8s.ui.live import diff
from sbatch_k8s.ui.reasons import REASONS, pending_sentence

NOW = 1_700_000_000


def record(**changes: object) -> JobRecord:
    values = dict(job_id=12, name="train", user="alice", uid=1234, group="alice", gid=1234,
                  partition="gpu", state="PENDING", submit_time=NOW - 60, node_count=2,
                  cpus=8)
    values.update(changes)
    return JobRecord(**values)  # type: ignore[arg-type]


def test_the_kernel_says_whose_loopback_socket_connects() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        address = server.getsockname()
        with socket.create_connection(address) as client:
            peer = client.getsockname()
            assert access.socket_owner(peer, address) == os.getuid()
            assert access.peer_is_owner(peer, address)
            assert not access.peer_is_owner(peer, address, uid=os.getuid() + 1)
            assert access.socket_owner((peer[0], peer[1] + 1), address) is None
    assert not access.peer_is_owner(None, address)


def test_tokens_hosts() -> None:
    token = access.new_token()
    assert len(token) == 32 and token != access.new_token()
    assert access.same_token(token, token) and not access.same_token(token + "x", token)
    assert not access.same_token(None, token)
    assert access.host_allowed("127.0.0.1:8080", 8080)
    assert access.host_allowed("localhost:8080", 8080)
    for host in ("127.0.0.1:8081", "evil.example:8080", "127.0.0.1", None):
        assert not access.host_allowed(host, 8080)


def test_the_page_s_filters_are_squeue_s_and_sacct_s_options() -> None:
    assert filter_argv({}) == ([], ["--starttime=midnight"])
    squeue, sacct = filter_argv({"states": "PD,R", "partitions": "gpu", "names": " a,b ",
                                 "users": "alice", "jobs": "12,13_2", "array": "1",
                                 "since": "now-2days"})
    assert squeue == ["--states=PD,R", "--partition=gpu", "--name=a,b", "--user=alice",
                      "--jobs=12,13_2", "--array"]
    assert sacct == ["--state=PD,R", "--partition=gpu", "--name=a,b", "--user=alice",
                     "--jobs=12,13_2", "--starttime=now-2days"]
    assert filter_argv({"states": "ALL"}) == (["--states=ALL"], ["--starttime=midnight"])


def test_a_job_squeue_still_shows_is_not_repeated_from_the_history() -> None:
    running = record(state="RUNNING", start_time=NOW - 30, node_list="n[1-2]")
    done = record(job_id=11, state="COMPLETED", start_time=NOW - 600, end_time=NOW - 500)
    rows = table_rows([running], [done, record(state="RUNNING")], NOW)
    assert [(r["key"], r["source"]) for r in rows] == [("12", "squeue"), ("11", "sacct")]
    assert rows[0]["cells"]["state"] == "RUNNING" and rows[0]["cells"]["time"] == "0:30"
    assert rows[1]["cells"]["time"] == "00:01:40" and rows[1]["st"] == "CD"
    assert set(rows[0]["cells"]) == {c.key for c in COLUMNS}


def test_the_live_feed_sends_only_what_changed() -> None:
    a, b, c = ({"key": k, "state": "R"} for k in "abc")
    sent = {"a": a, "b": b}
    changed = dict(b, state="CD")
    assert diff(sent, [a, changed, c]) == ([changed, c], [])
    assert diff(sent, [a]) == ([], ["b"])
    assert diff(sent, [a, b]) == ([], [])


@pytest.mark.parametrize("reason", sorted(REASONS))
def test_every_pending_reason_is_one_sentence(reason: str) -> None:
    sentence = pending_sentence(record(reason=reason, dependency="afterok:7",
                                       begin_time=NOW + 3600, array_throttle=4))
    assert sentence.startswith("Waiting for ") and sentence.endswith(".")
    assert "; it starts when " in sentence and "{" not in sentence


def test_why_it_waits_says_what_it_asks_for() -> None:
    """Memory is the whole job's: 4G per node on 2 nodes."""
    assert pending_sentence(record(reason="Resources", min_memory_mb=4096)) == (
        "Waiting for free resources: it asks for 2 node(s), 8 CPU(s), 8G of memory and "
        "partition gpu has not that much free now; it starts when running jobs end and "
        "free enough of it (or submit it asking for less).")
    assert pending_sentence(record(reason="QOSMaxJobsPerUserLimit")) == (
        "Pending (QOSMaxJobsPerUserLimit).")
    assert pending_sentence(record(state="RUNNING")) == ""


def test_the_buttons_offered_follow_the_state() -> None:
    held = actions(record(reason="JobHeldUser"))
    assert held["release"] and not held["hold"] and held["cancel"]
    waiting = actions(record(reason="Priority"))
    assert waiting["hold"] and not waiting["release"]
    done = actions(record(state="COMPLETED"))
    assert not done["cancel"] and not done["hold"] and done["requeue"] and done["resubmit"]


def test_a_job_s_page_lists_steps_and_dependencies() -> None:
    step = StepRecord(step_id="0", name="python", state="RUNNING", start_time=NOW - 5)
    job = record(state="RUNNING", dependency="afterok:7:9,afterany:8", start_time=NOW - 9)
    shown = job_json(job, [step], NOW)
    assert shown["depends_on"] == [7, 8, 9]
    assert [(s["id"], s["cancellable"]) for s in shown["steps"]] == [("12.0", True)]
    assert shown["scontrol"].startswith("JobId=12 JobName=train")
    assert dependency_ids(record(dependency="")) == []


def test_resource_points_per_node_from_the_steps_usage() -> None:
    """CPU % over the time since a node's last point (the job's start for its first), memory
    held now in MiB, one point per node only when its figures changed, a bounded history."""
    from parsers.job_records import JobRecord, StepRecord
    from parsers.step_usage import StepUsage
    from sbatch_k8s.ui.samples import NO_GPU_MEMORY, NO_GPU_UTILISATION, SampleHistory

    def job(cpu0: float, cpu1: float, rss: int, end: object = None) -> JobRecord:
        tasks = [{"node": "n0", "task": 0, "cpu": cpu0, "rss_now": rss},
                 {"node": "n1", "task": 1, "cpu": cpu1, "rss_now": 2 * rss}]
        step = StepRecord("0", "work", "RUNNING", usage=StepUsage.from_tasks(tasks))
        return JobRecord(5, "j", "u", 1, "g", 1, "p", "RUNNING", start_time=100,
                         end_time=end, steps=(step,))

    history = SampleHistory(limit=3)
    first = history.observe(job(5.0, 1.0, 100 << 20), now=110.0)
    assert first is not None and first["notes"] == [NO_GPU_UTILISATION, NO_GPU_MEMORY]
    assert [s["node"] for s in first["series"]] == ["n0", "n1"]
    assert first["series"][0]["points"] == [[110.0, {"rss_mb": 100.0,
                                                     "cpu": 50.0}]]
    same = history.observe(job(5.0, 1.0, 100 << 20), now=115.0)   # nothing new: no point
    assert same is not None and len(same["series"][0]["points"]) == 1
    later = history.observe(job(15.0, 1.0, 50 << 20), now=120.0)
    assert later is not None
    assert later["series"][0]["points"][-1] == [120.0, {"rss_mb": 50.0,
                                                         "cpu": 100.0}]
    assert len(later["series"][1]["points"]) == 2                  # n1's RSS changed
    for tick in range(5):
        history.observe(job(20.0 + tick, 1.0, 1 << 20), now=130.0 + tick)
    assert len(history.observe(job(30.0, 1.0, 1 << 20), now=200.0)["series"][0]["points"]) == 3
    unsampled = JobRecord(6, "j", "u", 1, "g", 1, "p", "RUNNING",
                          steps=(StepRecord("0", "work", "RUNNING"),))
    assert history.observe(unsampled, now=1.0) is None


def test_resource_points_sum_the_steps_and_follow_nodes_runs_and_ends() -> None:
    """An ended step keeps its final CPU in the node's sum; a node first seen in a later step
    starts from the job's start; a finished job's first point stands at its end, a later one
    never before the node's previous point; a requeued run starts a new chart; only the
    jobs looked at last are kept."""
    from parsers.job_records import JobRecord, StepRecord
    from parsers.step_usage import StepUsage
    from sbatch_k8s.ui.samples import SampleHistory

    def step(step_id: str, state: str, *tasks: tuple) -> StepRecord:
        figures = [{"node": node, "task": i, "cpu": cpu, "rss_now": rss}
                   for i, (node, cpu, rss) in enumerate(tasks)]
        return StepRecord(step_id, "s", state, usage=StepUsage.from_tasks(figures))

    def job(*steps: StepRecord, job_id: int = 7, start: int = 1000,
            end: object = None) -> JobRecord:
        return JobRecord(job_id, "j", "u", 1, "g", 1, "p", "RUNNING" if end is None else
                         "COMPLETED", start_time=start, end_time=end, steps=steps)

    def points(answer: object, node: str) -> list:
        assert isinstance(answer, dict)
        return next(s["points"] for s in answer["series"] if s["node"] == node)

    history = SampleHistory()
    batch = step("batch", "RUNNING", ("a", 2.0, 10 << 20))
    first = history.observe(job(batch, step("0", "RUNNING", ("a", 4.0, 30 << 20))), 1010.0)
    assert points(first, "a") == [[1010.0, {"rss_mb": 40.0, "cpu": 60.0}]]
    assert [s["node"] for s in first["series"]] == ["a"]
    # step 0 ended (its memory freed, its CPU kept); step 1 runs on a and on a new node b
    second = history.observe(job(
        step("batch", "RUNNING", ("a", 3.0, 10 << 20)),
        step("0", "COMPLETED", ("a", 5.0, 0)),
        step("1", "RUNNING", ("a", 1.0, 5 << 20), ("b", 3.0, 1 << 20))), 1020.0)
    assert points(second, "a")[-1] == [1020.0, {"rss_mb": 15.0,
                                                "cpu": 30.0}]      # (3+5+1 - 6) / 10 s
    assert points(second, "b") == [[1020.0, {"rss_mb": 1.0,
                                             "cpu": 15.0}]]         # 3 / 20 s since start
    # ended at 1025, seen at 1100: the point stands at the end, over 1020..1025
    done = history.observe(job(step("batch", "COMPLETED", ("a", 13.0, 0)),
                               step("0", "COMPLETED", ("a", 5.0, 0)),
                               step("1", "COMPLETED", ("a", 1.0, 0), ("b", 3.0, 0)),
                               end=1025), 1100.0)
    assert points(done, "a")[-1] == [1025.0, {"rss_mb": 0.0, "cpu": 200.0}]
    assert points(done, "b")[-1][0] == 1025.0 and "cpu" in points(done, "b")[-1][1]
    # a record that lagged: its last running figures were seen after the end
    lagged = SampleHistory()
    lagged.observe(job(step("batch", "RUNNING", ("a", 1.0, 1 << 20)), job_id=8), 1030.0)
    late = lagged.observe(job(step("batch", "COMPLETED", ("a", 4.0, 0)), job_id=8,
                              end=1025), 1040.0)
    assert [p[0] for p in points(late, "a")] == [1030.0, 1040.0]
    # requeued: a new start time, a new chart
    again = history.observe(job(step("batch", "RUNNING", ("a", 1.0, 1 << 20)), start=2000),
                            2010.0)
    assert points(again, "a") == [[2010.0, {"rss_mb": 1.0, "cpu": 10.0}]]
    # the job looked at least recently is forgotten first
    few = SampleHistory(jobs=2)
    for job_id in (1, 2, 1, 3):
        few.observe(job(batch, job_id=job_id), 1010.0 + job_id)
    busier = step("batch", "RUNNING", ("a", 9.0, 10 << 20))
    assert len(points(few.observe(job(busier, job_id=1), 1020.0), "a")) == 2
    assert len(points(few.observe(job(busier, job_id=2), 1020.0), "a")) == 1   # forgotten


def test_gpu_memory_is_charted_once_a_node_shows_some() -> None:
    """No GPU memory seen: the points leave it out and a note says so; once a node shows
    some, every point carries it (0 before) and the note goes."""
    from parsers.job_records import JobRecord, StepRecord
    from parsers.step_usage import StepUsage
    from sbatch_k8s.ui.samples import NO_GPU_UTILISATION, SampleHistory

    def job(gpu_bytes: int) -> JobRecord:
        tasks = [{"node": "g", "task": 0, "cpu": 1.0 + gpu_bytes, "gpu_now": gpu_bytes}]
        step = StepRecord("0", "train", "RUNNING", usage=StepUsage.from_tasks(tasks))
        return JobRecord(9, "j", "u", 1, "g", 1, "p", "RUNNING", start_time=0, steps=(step,))

    history = SampleHistory()
    before = history.observe(job(0), 10.0)
    assert before is not None and set(before["series"][0]["points"][0][1]) == {"cpu",
                                                                                "rss_mb"}
    after = history.observe(job(512 << 20), 20.0)
    assert after is not None and after["notes"] == [NO_GPU_UTILISATION]
    assert [v["gpu_mem_mb"] for _, v in after["series"][0]["points"]] == [0.0, 512.0]


def test_a_copied_output_file_downloads_under_its_own_name() -> None:
    """Node 0's pod log carries the job's output file on a cluster: its download keeps the
    file's name, as the local backend's (read in place) does."""
    from sbatch_k8s.inspection.values import NODE_LOG, OUTPUT_FILE, LogSource

    copied = LogSource("stdout", "Output (StdOut)", OUTPUT_FILE, "pod/job-12-0 (decoded)",
                       copy_of="/home/u/slurm-12.out")
    in_place = LogSource("stdout", "Output (StdOut)", OUTPUT_FILE, "/home/u/slurm-12.out")
    assert copied.file_name == in_place.file_name == "slurm-12.out"
    assert LogSource("node-1", "Node 1", NODE_LOG, "pod/job-12-1").file_name == "node-1.log"
