"""Every endpoint of the console on the local backend, with real jobs, over real sockets.

Each answer is checked against what the Slurm commands (run beside it) and the job's own
files say: the table against squeue and sacct, a log's download against the file byte for
byte, the zip against every log, an action's refusal against Slurm's words.
"""

from __future__ import annotations

import io
import time
import zipfile
from typing import Optional, Tuple

import pytest

from tests.local.harness import LocalSlurm, job_id_of
from tests.ui.harness import RunningConsole, burn_script, node1_script, wait_for

pytestmark = pytest.mark.slow

#: What the resource charts say they leave out, on a machine with no GPU.
NOTES = ["No GPU utilisation was measured on this job's nodes (no GPU in use, or no nvidia-smi)",
         "No GPU memory was seen on this job's nodes (no GPU in use, or no nvidia-smi)"]


def _state(console: RunningConsole, job: str) -> str:
    return console.get(f"/api/jobs/{job}")["state"]


def test_submit_watch_and_read_a_two_node_job(slurm: LocalSlurm,
                                              console: RunningConsole) -> None:
    """Submitted from the console, listed live, then every view of the finished job."""
    script = node1_script(3)
    lint = console.post("/api/lint", {"script": script, "options": "-J console-job"})[1]
    assert lint["ok"] and "command line  -J console-job" in lint["report"], lint
    live = console.events("/api/jobs/live?names=console-job")
    first = next(live)[1]
    assert first["put"] == [] and first["error"] is None
    status, done = console.post("/api/submit", {"script": script, "script_name": "two.sh",
                                                "options": "-J console-job"})
    assert status == 200 and done["ok"], done
    job = str(done["job_id"])
    assert done["stdout"] == f"Submitted batch job {job}\n"
    seen = []
    for _, message in live:
        seen += [(row["key"], row["state"]) for row in message["put"]]
        if (job, "COMPLETED") in seen:
            break
    assert seen[0][0] == job and seen[0][1] in ("PENDING", "RUNNING"), seen
    shown = console.get(f"/api/jobs/{job}")
    assert shown["name"] == "console-job" and shown["node_count"] == 2
    assert f"JobId={job} JobName=console-job" in shown["scontrol"]
    assert [s["step"] for s in shown["steps"]] == ["batch", "extern", "0"]
    assert shown["steps"][2]["exit"] == "0:0"

    nodes = console.get(f"/api/jobs/{job}/nodes")
    assert [n["name"] for n in nodes] == ["127.0.0.2", "127.0.0.3"]
    sources = {s["key"]: s for s in console.get(f"/api/jobs/{job}/logs")}
    assert list(sources) == ["node-0", "node-1", "stdout"]
    out = (slurm.work / f"slurm-{job}.out").read_bytes()
    assert out == b"batch starts\nbatch ends\n"
    status, headers, body = console.request("GET", f"/api/jobs/{job}/logs/stdout")
    assert status == 200 and body == out
    assert f'filename="{job}-slurm-{job}.out"' in headers["content-disposition"]
    node1 = [data for name, data in console.events(f"/api/jobs/{job}/logs/node-1/live")]
    text = "".join(d.get("text", "") for d in node1)
    assert text == "".join(f"node-one line {i}\n" for i in range(3)), node1
    assert node1[-1] == {"offset": len(text)}
    status, _, zipped = console.request("GET", f"/api/jobs/{job}/logs.zip")
    archive = zipfile.ZipFile(io.BytesIO(zipped))
    assert sorted(archive.namelist()) == [f"job-{job}/node-0.log", f"job-{job}/node-1.log",
                                          f"job-{job}/slurm-{job}.out"]
    assert archive.read(f"job-{job}/slurm-{job}.out") == out
    assert archive.read(f"job-{job}/node-1.log").decode() == text

    events = console.get(f"/api/jobs/{job}/events")
    reasons = [e["reason"] for e in events["events"]]
    assert reasons[0] == "Submitted" and reasons[-1] == "Ended" and "StepEnded" in reasons
    assert {"NodeUp", "StepStarted"} <= set(reasons)     # the runtime's own, merged in
    assert [e["source"] for e in events["events"] if e["reason"] == "NodeUp"] == ["runtime"] * 2
    assert "job_name: console-job" in console.get(f"/api/jobs/{job}/yaml")["text"]
    assert console.get(f"/api/jobs/{job}/script") == {"available": True, "text": script}
    samples = console.get(f"/api/jobs/{job}/samples")    # the steps' usage at their end
    assert {s["node"] for s in samples["series"]} <= {"127.0.0.2", "127.0.0.3"}
    assert "127.0.0.2" in {s["node"] for s in samples["series"]}      # the batch script's
    point = samples["series"][0]["points"][0][1]
    assert set(point) == {"cpu", "rss_mb"} and point["cpu"] >= 0     # no GPU here
    assert samples["notes"] == NOTES
    again = console.get(f"/api/jobs/{job}/resubmission")
    assert again["command"].endswith("sbatch --job-name=console-job --partition=debug "
                                     "--nodes=2 two.sh")

    table = console.get("/api/jobs?names=console-job&states=all")
    assert [r["key"] for r in table["rows"]] == [job]
    squeue = slurm.run("squeue", "-h", "-t", "all", "-n", "console-job", "-o", "%i %T %D")
    row = table["rows"][0]["cells"]
    assert squeue.stdout.split() in ([], [row["job"], row["state"], row["nodes"]])


def test_resource_charts_follow_a_running_job(slurm: LocalSlurm,
                                              console: RunningConsole) -> None:
    """Sampled every second, a job burning a core while it holds 100 MB: the points the
    console adds while it looks show node 0 busy and holding the memory; a job not sampled
    (--acctg-freq=0) answers why it has no charts."""
    stop = slurm.work / "burn.stop"
    slurm.script("burn.sh", burn_script(stop))
    job = str(job_id_of(slurm.run("sbatch", "--acctg-freq=1", "burn.sh").stdout))
    wait_for(lambda: _state(console, job) == "RUNNING")
    node0 = console.get(f"/api/jobs/{job}/nodes")[0]["name"]

    def busy_points() -> Optional[Tuple[dict, list]]:
        samples = console.get(f"/api/jobs/{job}/samples")
        if samples.get("available") is False:
            return None
        points = {s["node"]: s["points"] for s in samples["series"]}.get(node0, [])
        busy = [v for _, v in points if v.get("cpu", 0) > 20 and v["rss_mb"] > 50]
        return (samples, points) if len(busy) >= 2 else None
    try:        # it burns until told to stop
        samples, points = wait_for(busy_points, timeout=120, interval=0.5)
        assert _state(console, job) == "RUNNING"
    finally:
        stop.touch()
    times = [t for t, _ in points]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert samples["notes"] == NOTES
    slurm.script("quiet.sh", "#!/bin/sh\nsleep 300\n")
    quiet = str(job_id_of(slurm.run("sbatch", "--acctg-freq=0", "quiet.sh").stdout))
    wait_for(lambda: _state(console, quiet) == "RUNNING")
    time.sleep(2)
    assert console.get(f"/api/jobs/{quiet}/samples") == {
        "available": False, "why": "no resource figures for this job yet: running steps are "
                                   "sampled every --acctg-freq seconds (30 by default, never "
                                   "with --acctg-freq=0), ended ones keep their totals"}
    slurm.run("scancel", quiet)
    wait_for(lambda: _state(console, quiet) == "CANCELLED")

    def totals() -> object:         # the ended script's, once its end is recorded
        answer = console.get(f"/api/jobs/{quiet}/samples")
        return answer if "series" in answer else None
    ended = wait_for(totals)
    end = console.get(f"/api/jobs/{quiet}")["end_time"]
    assert [p[0] for p in ended["series"][0]["points"]] == [end]



def test_actions_on_a_held_job_and_a_running_one(slurm: LocalSlurm,
                                                 console: RunningConsole) -> None:
    """Hold, a refused requeue (Slurm's words), release, cancel a step, cancel the job,
    submit it again."""
    status, done = console.post("/api/submit", {
        "script": "#!/bin/sh\nsrun sleep 300\nsleep 300\n", "script_name": "sleepy.sh",
        "options": "--hold"})       # (the job runs on once its step is cancelled)
    job = str(done["job_id"])
    shown = console.get(f"/api/jobs/{job}")
    assert (shown["state"], shown["reason"]) == ("PENDING", "JobHeldUser")
    assert shown["pending"].startswith("Waiting for a release: its user held it")
    assert shown["actions"]["release"] and not shown["actions"]["hold"]
    assert console.post(f"/api/jobs/{job}/requeue")[1] == {
        "ok": False, "message": f"Job is pending execution for job {job}"}
    assert console.post(f"/api/jobs/{job}/release")[1] == {"ok": True, "message": ""}
    wait_for(lambda: any(s["step"] == "0" and s["state"] == "RUNNING"
                         for s in console.get(f"/api/jobs/{job}")["steps"]))
    assert console.post(f"/api/jobs/{job}/cancel", {"step": "0"})[1]["ok"]
    assert console.post(f"/api/jobs/{job}/hold")[1] == {
        "ok": False, "message": f"Job has already finished for job {job}\n"
                               "slurm_suspend error: Job has already finished"}
    assert console.post(f"/api/jobs/{job}/cancel")[1]["ok"]
    wait_for(lambda: _state(console, job) == "CANCELLED")
    sacct = slurm.run("sacct", "-j", job, "-n", "-P", "-o", "JobID,State").stdout
    assert f"{job}.0|CANCELLED" in sacct and f"{job}|CANCELLED" in sacct, sacct
    finished = console.post(f"/api/jobs/{job}/cancel")[1]
    assert finished == {"ok": False, "message": f"scancel: error: Kill job error on job id "
                                                f"{job}: Job/step already completing or "
                                                "completed"}
    again = console.post(f"/api/jobs/{job}/resubmit")[1]
    assert again["ok"] and again["job_id"] == int(job) + 1, again
    assert console.get(f"/api/jobs/{again['job_id']}")["name"] == "sleepy.sh"
    assert console.post(f"/api/jobs/{again['job_id']}/cancel")[1]["ok"]


def test_refusals_in_slurm_s_words_and_nothing_half_created(slurm: LocalSlurm,
                                                             console: RunningConsole) -> None:
    status, done = console.post("/api/submit", {"script": "#!/bin/sh\ntrue\n",
                                                "options": "--nodes=zero"})
    assert status == 422 and not done["ok"] and done["job_id"] is None
    slurm.script("true.sh", "#!/bin/sh\ntrue\n")
    assert done["stderr"] == slurm.run("sbatch", "--nodes=zero", "true.sh").stderr
    assert done["stderr"].startswith("sbatch: error: ") and done["stderr"].count("\n") == 1
    assert console.get("/api/jobs?states=all")["rows"] == []
    lint = console.post("/api/lint", {"script": "#!/bin/sh\n#SBATCH --time=bogus\n"})[1]
    assert not lint["ok"] and "invalid" in lint["report"]
    status, _, body = console.request("GET", "/api/jobs?states=running,bogus")
    assert status == 400 and body.startswith(b'{"error": "squeue: error: Invalid job state '
                                             b'specified: bogus')
    status, _, body = console.request("GET", "/api/jobs/999")
    assert status == 404 and b"Invalid job id specified" in body
    status, _, body = console.request("GET", "/api/jobs/999/logs.zip")
    assert status == 404
    assert console.post("/api/submit", {"script": " "})[0] == 400
    assert slurm.run("sacct", "-n", "-X").stdout == ""


def test_a_log_downloads_byte_for_byte(slurm: LocalSlurm, console: RunningConsole) -> None:
    """Bytes that are no UTF-8, carriage returns, no final newline: the download is the
    file; the live page shows them decoded, with replacement characters."""
    slurm.script("bytes.sh", "#!/bin/sh\nprintf 'a\\r\\nb\\377\\376c'\n")
    job = str(job_id_of(slurm.run("sbatch", "--wait", "bytes.sh").stdout))
    written = (slurm.work / f"slurm-{job}.out").read_bytes()
    assert written == b"a\r\nb\xff\xfec"
    assert console.request("GET", f"/api/jobs/{job}/logs/stdout")[2] == written
    live = [d for _, d in console.events(f"/api/jobs/{job}/logs/stdout/live")]
    assert live[0]["text"] == "a\r\nb\ufffd\ufffdc" and live[-1] == {"offset": len(written)}


def test_the_cluster_as_sinfo_shows_it(slurm: LocalSlurm, console: RunningConsole) -> None:
    slurm.script("busy.sh", "#!/bin/sh\n#SBATCH -N 2 -c 2\nsrun sleep 300\n")
    job = str(job_id_of(slurm.run("sbatch", "busy.sh").stdout))
    wait_for(lambda: _state(console, job) == "RUNNING")
    cluster = console.get("/api/cluster")
    assert cluster["sinfo"] == slurm.run("sinfo").stdout
    nodes = {n["name"]: n for p in cluster["partitions"] for n in p["nodes"]}
    assert nodes["127.0.0.2"]["jobs"] == [job] and nodes["127.0.0.3"]["jobs"] == [job]
    assert nodes["127.0.0.4"]["jobs"] == []
    assert nodes["127.0.0.2"]["alloc_cpus"] == 4 and nodes["127.0.0.2"]["pooled"]
    slurm.run("scancel", job)


def test_an_array_s_element_then_the_whole_array(slurm: LocalSlurm,
                                                 console: RunningConsole) -> None:
    """The table folds a pending array as squeue does (one line per element with -r);
    cancel one element, then every element from another's page."""
    slurm.script("array.sh", "#!/bin/sh\nsleep 300\n")
    job = str(job_id_of(slurm.run("sbatch", "--array=0-3", "--hold", "array.sh").stdout))

    def keys(query: str) -> list:
        return [r["key"] for r in console.get(f"/api/jobs?jobs={job}{query}")["rows"]]

    def squeue(*args: str) -> list:
        return slurm.run("squeue", "-h", "-j", job, "-o", "%i", *args).stdout.split()
    assert keys("") == squeue() == [f"{job}_[0-3]"]
    assert sorted(keys("&array=1")) == sorted(squeue("-r")) == [f"{job}_{i}" for i in range(4)]
    element = console.get(f"/api/jobs/{job}_1")
    assert (element["key"], element["state"], element["array_job_id"]) == (
        f"{job}_1", "PENDING", int(job))
    assert console.post(f"/api/jobs/{job}_1/cancel")[1] == {"ok": True, "message": ""}
    assert sorted(squeue("-r")) == [f"{job}_{i}" for i in (0, 2, 3)]
    assert console.post(f"/api/jobs/{job}_2/cancel", {"whole_array": True})[1]["ok"]
    assert squeue("-r") == []
    assert console.post(f"/api/jobs/{job}_2/cancel")[1]["message"].startswith(
        "scancel: error: Kill job error on job id ")
