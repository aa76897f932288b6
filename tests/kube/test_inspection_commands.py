"""``sbatch-k8s logs|events|yaml`` and ``scontrol show job -d`` on a cluster (the emulated API
server and test kubelet; the real server with ``--with-kube-apiserver``): node 1's pod log
against what the API server serves for it, followed to the job's end, written byte-exact
with ``-o``; node 0's log decoded; an OOM-killed task's events merged with the pods' own;
the job's objects without the Secret's data; each node's pod in the detail lines."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml

from sbatch_k8s.runtime.log_stream.frames import MARK
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit
from tests.kubelet.memory_cgroups import available as memory_cgroups_available
from tests.local.harness import run_tool, tool_argv, tool_env, until_exists
from tests.ui.harness import node1_script

pytestmark = pytest.mark.slow

WAIT_S = 180
NODE1_LINES = "".join(f"node-one line {i}\n" for i in range(3)).encode()
OOM_STEP = r"""#!/bin/sh
#SBATCH -N1 --mem=150M
srun python3 -c 'a = []
while True: a.append(bytearray(20 << 20))'
echo srun said $?
"""


def _pods(kube: KubeSlurm, job: int) -> List[Dict[str, Any]]:
    from parsers.vocabulary import JOB_ID
    from sbatch_k8s.backends.kubernetes.api.kinds import POD

    pods = kube.objects(POD, f"{JOB_ID}={job}")
    return sorted(pods, key=lambda p: p["metadata"]["annotations"][
        "batch.kubernetes.io/job-completion-index"])


def _served_log(kube: KubeSlurm, pod: Dict[str, Any]) -> bytes:
    """The pod's log as the API server serves it."""
    from sbatch_k8s.backends.kubernetes.api.kinds import POD
    from sbatch_k8s.backends.kubernetes.output.srun_outside import container_of

    stream = kube.api().stream(POD.object_path(kube.namespace, pod["metadata"]["name"])
                               + "/log", {"container": container_of(pod)})
    try:
        return b"".join(stream.chunks())
    finally:
        stream.abort()


def _ended(kube: KubeSlurm, job: int) -> bool:
    state = kube.run("sacct", "-n", "-X", "-P", "-o", "State", "-j", str(job)).stdout.strip()
    return state not in ("", "PENDING", "RUNNING", "COMPLETING")


@pytest.mark.unshared       # node 0 carries the output files in its log (real nodes too)
def test_node_logs_followed_read_and_written(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("two.sh", node1_script(3))
    job = submit(kube, "two.sh")
    following = subprocess.Popen(tool_argv("logs", "-f", str(job), "--node", "1"),
                                 cwd=kube.work, env=tool_env(kube), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
    out, err = following.communicate(timeout=WAIT_S)
    assert following.returncode == 0 and err == b"", err
    assert out == NODE1_LINES                 # from its pod's start to the job's end
    kube.wait_for(lambda: _ended(kube, job), timeout=WAIT_S, interval=0.5)
    pods = _pods(kube, job)
    assert _served_log(kube, pods[1]) == NODE1_LINES
    node0 = run_tool(kube, "logs", str(job))
    assert node0.returncode == 0, node0.stderr
    assert b"batch starts\nbatch ends\n" in node0.stdout and MARK not in node0.stdout
    assert MARK in _served_log(kube, pods[0])   # node 0 carries the files: decoded above
    written = run_tool(kube, "logs", str(job), "-o", "logs")
    assert written.returncode == 0, written.stderr
    assert len(written.stderr.decode().splitlines()) == 2, written.stderr
    assert (kube.work / "logs" / "node-1.log").read_bytes() == NODE1_LINES
    assert (kube.work / "logs" / "node-0.log").read_bytes() == node0.stdout
    by_name = run_tool(kube, "logs", str(job), "--node", f"two-sh-{job}-1")
    assert by_name.stdout == NODE1_LINES, by_name.stderr
    later = run_tool(kube, "logs", str(job), "--node", "1", "--since", "now+1hour")
    assert later.returncode == 0 and later.stdout == b"", later.stderr


def _event_rows(table: str) -> List[List[str]]:
    return [re.split(r"\s{3,}", line, maxsplit=5) for line in table.splitlines()[1:]]


def test_events_merge_the_clusters_the_records_and_the_runtimes(kube: KubeSlurm,
                                                                 kubelet: Any) -> None:
    """The control plane's events (the Job controller's, the scheduler's) and the pod's
    container end, the record's and the runtime's, in time order."""
    job = submit(kube, "--wrap", "srun true")
    kube.wait_for(lambda: _ended(kube, job), timeout=WAIT_S, interval=0.5)
    shown = run_tool(kube, "events", str(job))
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout.decode()
    rows = _event_rows(table)
    pod = f"Pod/{_pods(kube, job)[0]['metadata']['name']}"
    found = {(r[2], r[3], r[4]) for r in rows}
    assert {("Submitted", f"job {job}", "record"), ("Started", f"job {job}", "record"),
            ("Ended", f"job {job}", "record"), ("NodeUp", f"node wrap-{job}-0", "runtime"),
            ("StepStarted", f"step {job}.0", "runtime"),
            ("StepEnded", f"step {job}.0", "runtime"),
            ("SuccessfulCreate", f"Job/wrap-{job}", "event"), ("Scheduled", pod, "event"),
            ("Completed", pod, "pod status")} <= found, table
    assert [r[0] for r in rows] == sorted(r[0] for r in rows), table


def test_events_of_an_out_of_memory_task(cluster: Any, tmp_path: Any) -> None:
    """The OOM-killed step's end from the runtime, with the kubelet's events of its pod
    (the test kubelet's memory cgroups; real nodes kill otherwise: reference §9.f)."""
    from tests.kube.test_node_faults import kubelet_with

    if not memory_cgroups_available():
        pytest.skip("this machine offers no writable cgroup v1 memory controller")
    if hasattr(cluster, "drain"):
        pytest.skip("on a real server the pod may land on a real node, which kills otherwise")
    kube = KubeSlurm(tmp_path, cluster.kubeconfig)
    try:
        with kubelet_with(cluster, memory_cgroups=True):
            kube.script("oom.sh", OOM_STEP)
            done = kube.run("sbatch", "--wait", "oom.sh", timeout=WAIT_S)
            job = int(done.stdout.split()[-1])
            shown = run_tool(kube, "events", str(job))
            pod = _pods(kube, job)[0]["metadata"]["name"]
        assert shown.returncode == 0, shown.stderr
        table = shown.stdout.decode()
        rows = _event_rows(table)
        ended = {r[3]: r[5] for r in rows if r[2] == "StepEnded"}
        assert ended[f"step {job}.0"] == "OUT_OF_MEMORY, exit code 0:125", table
        kubelet = ("Pulled", "Created", "Started")
        assert [r[2] for r in rows if r[3] == f"Pod/{pod}" and r[4] == "event"
                and r[2] in kubelet] == list(kubelet), table
        assert [r[0] for r in rows] == sorted(r[0] for r in rows), table
    finally:
        kube.cleanup()


def test_yaml_shows_the_objects_but_never_secret_data(kube: KubeSlurm, kubelet: Any) -> None:
    job = submit(kube, "-N2", "--export=ALL,MY_TOKEN=hunter2-secret", "--wrap", "true")
    kube.wait_for(lambda: _ended(kube, job), timeout=WAIT_S, interval=0.5)
    shown = run_tool(kube, "yaml", str(job))
    assert shown.returncode == 0, shown.stderr
    assert b"hunter2" not in shown.stdout
    documents = list(yaml.safe_load_all(shown.stdout))
    kinds = [d["kind"] for d in documents]
    assert kinds[:3] == ["Job", "ConfigMap", "Service"] and kinds.count("Pod") == 2, kinds
    secrets = [d for d in documents if d["kind"] == "Secret"]
    assert all("data" not in d and "stringData" not in d for d in secrets)
    as_json = json.loads(run_tool(kube, "yaml", str(job), "-o", "json").stdout)
    assert as_json["kind"] == "List" and [i["kind"] for i in as_json["items"]] == kinds
    assert "hunter2" not in json.dumps(as_json)


def _both_started(shown: str, pods: Dict[str, Dict[str, Any]]) -> bool:
    """Whether ``scontrol -d show job`` output has a line for each of the two pods saying it
    runs, its container's start its last event."""
    lines = [next((ln for ln in shown.splitlines() if f" Pod={name} " in ln), "")
             for name in pods]
    return len(lines) == 2 and all(" Phase=Running " in line and
                                   re.search(r" LastEvent=\S+ Started: ", line)
                                   for line in lines)


def test_scontrol_details_name_each_nodes_pod(kube: KubeSlurm, kubelet: Any) -> None:
    """While the job runs (until the test has looked), ``scontrol -d`` gives a line per
    node naming its pod, running on its host, its container started."""
    stop = kube.work / "stop"
    job = submit(kube, "-N2", "--wrap", until_exists(stop))
    try:
        kube.wait_for(lambda: "RUNNING" in kube.run("scontrol", "show", "job",
                                                    str(job)).stdout,
                      timeout=WAIT_S, interval=0.5)
        last = [""]

        def started() -> Optional[Tuple[str, Dict[str, Dict[str, Any]]]]:
            done = kube.run("scontrol", "-d", "show", "job", str(job))
            assert done.returncode == 0, done.stderr
            last[0] = done.stdout
            pods = {p["metadata"]["name"]: p for p in _pods(kube, job)}
            return (done.stdout, pods) if _both_started(done.stdout, pods) else None

        try:          # each pod's start reaches the API server in its own time
            shown, pods = wait_until(started, 120, "both pods running and started")
        except AssertionError as e:
            raise AssertionError(f"{e}:\n{last[0]}") from None
        assert "   DerivedExitCode=0:0\n" in shown
        assert re.search(rf"\n   JOB_GRES=\(null\)\n     Nodes=wrap-{job}-\[0-1\] CPU_IDs=0 "
                         r"Mem=\d+ GRES=\n", shown), shown
        for index, (name, pod) in enumerate(pods.items()):
            line = next(ln for ln in shown.splitlines() if f" Pod={name} " in ln)
            assert line.startswith(f"     Node=wrap-{job}-{index} Pod={name} Phase=Running "
                                   f"Restarts=0 Host={pod['spec']['nodeName']} "
                                   "LastEvent="), line
            assert re.search(r"LastEvent=\S+ Started: Started container \S+$", line), line
    finally:
        stop.touch()
    kube.run("scancel", str(job))
