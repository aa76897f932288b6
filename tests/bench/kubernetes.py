"""The Kubernetes backend against the emulated API server (``tests.apiserver``), or with
``--kubeconfig PATH`` against the real API server PATH names, side by side
with kubectl on the same server: sbatch vs ``kubectl create -f`` of the same manifests;
squeue with 1,000 (and 10,000) jobs vs ``kubectl get jobs`` with the same selector — warm
(through the command server, answered by its watch cache) and cold (``SBATCHK8S_SERVER=0``:
one LIST per collection) — and the API calls one squeue makes either way; and, with the
test kubelet, the time from sbatch to the script's first line and from its last line to
``sbatch --wait`` returning (1 and 8 nodes).

The emulator is Python, a real API server is Go: the absolute times say little, the ratios
against kubectl on the same server and the call counts are the figures that carry over. One
distortion is measured beside them: the emulator's own time to answer one LIST of all the
Jobs (it copies and serialises every stored Job per request, which a real server's watch
cache does far faster). Cold squeue pays it once per collection; kubectl pays it once per
page (``--chunk-size`` 500: twenty pages at 10,000 jobs, each copying all of them, since the
emulator keeps no list snapshot); warm squeue never does. So kubectl's 10,000-job time is
mostly the emulator's, and both squeue ratios there are flattered: set warm squeue against
one LIST figure, not against kubectl, to see what a real server would leave of the gain.

On a real server (:func:`tests.bench.kube_servers.real`: a namespace of its own, deleted at
the end) the same figures are taken; the LIST figure is then the real server's, and the
API calls are counted through a loopback proxy (:mod:`tests.bench.counting_proxy`) by a twin
of the commands with a command server of its own, so no timed command goes through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Tuple

from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, JOB
from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times
from tests.bench.kube_servers import BenchServer, CallCounter, emulated, real

SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"
TIMED = ("#!/bin/sh\n#SBATCH -J timed -o /dev/null\npython3 -c 'import time; "
         "print(repr(time.time()))' > start.$SLURM_JOB_ID\n"
         "python3 -c 'import time; print(repr(time.time()))' > end.$SLURM_JOB_ID\n")
#: How long a warm squeue may take to show every cloned job (its mirrors catching up).
SETTLE_S = 300.0


def _clone_source(kube: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """A pending job's record and Job, as manifests creating them anew: without what the
    API server generated (uid, versions, status; a Job's selector and controller labels,
    which a real server refuses in a create: ``requeue_plan.fresh_workload``)."""
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map
    from sbatch_k8s.backends.kubernetes.requeue.next_run import fresh_workload

    jobs = {j["metadata"]["labels"].get("sbatch-k8s.io/job-id"): j
            for j in kube.objects(JOB)}
    record = next(c for c in kube.objects(CONFIG_MAP, "sbatch-k8s.io/kind=record")
                  if record_from_config_map(c)[0].state == "PENDING"
                  and c["metadata"]["labels"]["sbatch-k8s.io/job-id"] in jobs)
    job = jobs[record["metadata"]["labels"]["sbatch-k8s.io/job-id"]]
    meta = record["metadata"]
    record = {"apiVersion": "v1", "kind": "ConfigMap", "data": record["data"],
              "metadata": {k: meta[k] for k in ("name", "labels", "annotations")
                           if k in meta}}
    job = fresh_workload(dict(job, apiVersion="batch/v1", kind="Job"))
    job["spec"]["suspend"] = True  # no pods: the server stays light
    return record, job


def _clone_jobs(kube: Any, start: int, count: int) -> None:
    """``count`` more pending jobs (record + Job) like one sbatch created, through the API;
    ids from 100000 + ``start``."""
    client = kube.api()
    record, job = _clone_source(kube)
    first = int(record["metadata"]["labels"]["sbatch-k8s.io/job-id"])
    text = record["data"]["record.json"]
    workload = json.loads(record["data"]["workload.json"])

    def make(k: int) -> None:
        job_id = 100000 + k
        name = f"bench-{job_id}"
        rec = json.loads(json.dumps(record))
        rec["metadata"]["name"] = f"sbatch-k8s-job-{job_id}"
        rec["metadata"]["labels"]["sbatch-k8s.io/job-id"] = str(job_id)
        rec["data"]["record.json"] = text.replace(f'"job_id":{first}', f'"job_id":{job_id}')
        rec["data"]["workload.json"] = json.dumps(dict(workload, name=name))
        work = json.loads(json.dumps(job))
        work["metadata"]["name"] = name
        work["metadata"]["labels"]["sbatch-k8s.io/job-id"] = str(job_id)
        work["spec"]["template"]["metadata"]["labels"]["sbatch-k8s.io/job-id"] = str(job_id)
        client.create(rec, kube.namespace)
        client.create(work, kube.namespace)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(make, range(start, start + count)))


def _calls(counter: CallCounter, argv: List[str], env: Dict[str, str]) -> int:
    before = counter.count()
    subprocess.run(argv, env=dict(counter.kube.env, **env), cwd=str(counter.kube.work),
                   capture_output=True, check=False)
    return counter.count() - before


def _squeue_lines(kube: Any, *args: str, cold: bool = False) -> int:
    """How many jobs ``squeue -h ARGS`` shows (-1 when it fails); ``cold``: listed from the
    API server, not the command server's watch cache."""
    done = kube.run("squeue", "-h", *args, timeout=300,
                    env={"SBATCHK8S_SERVER": "0"} if cold else None)
    return len(done.stdout.splitlines()) if done.returncode == 0 else -1


def _settle(kube: Any) -> Tuple[int, int]:
    """Run ``squeue -t PD`` through the command server until it shows as many jobs as one
    listed from the API server (its watch cache has caught up with the clones) or
    :data:`SETTLE_S` passed; how many it shows, and how many the LIST shows."""
    pending = _squeue_lines(kube, "-t", "PD", cold=True)
    deadline = time.monotonic() + SETTLE_S
    while True:
        shown = _squeue_lines(kube, "-t", "PD")
        if shown >= pending or time.monotonic() > deadline:
            return shown, pending
        time.sleep(0.5)


def _submit_and_listing(ctx: Context, server: BenchServer) -> List[Figure]:
    kube = server.kube
    repeats = ctx.repeats(9)
    env, cwd = kube.env, str(kube.work)
    kubectl = shutil.which("kubectl")
    sbatch = Figure("k8s: sbatch (whole process)", "ms", process_times(
        command_argv("sbatch") + ["-o", "/dev/null", "--wrap=true"], repeats, env, cwd,
        warmup=1), scaling=server.label)
    if kubectl:
        files = []
        for k in range(repeats + 1):
            printed = subprocess.run(
                command_argv("sbatch") + ["--k8s-print=objects", f"--k8s-job-id={90000 + k}",
                                          "-o", "/dev/null", "--wrap=true"],
                env=dict(env, SBATCHK8S_BACKEND="local"), cwd=cwd, capture_output=True,
                text=True)
            path = os.path.join(cwd, f"m{k}.yaml")
            with open(path, "w") as f:
                f.write(printed.stdout)
            files.append(path)
        samples = []
        for path in files:
            began = time.perf_counter()
            subprocess.run([kubectl, "create", "-f", path], env=env, capture_output=True)
            samples.append((time.perf_counter() - began) * 1000)
        sbatch.comparison, sbatch.comparison_samples = "kubectl create -f", samples[1:]
    sbatch.goal = "≤ 1.0× kubectl create"
    sbatch.goal_met = sbatch.ratio is not None and sbatch.ratio <= 1.0
    figures = [sbatch]
    sizes = (1000,) if ctx.quick else (1000, 10000)
    have = len(kube.objects(JOB))
    clones = 0
    for size in sizes:
        _clone_jobs(kube, clones, size - have)
        clones += size - have
        have = size
        figures += _listing_figures(ctx, server, size)
    return figures


def _warm_calls(counter: CallCounter, argv: List[str]) -> int:
    """Run squeue through the command server until the watch cache answers it alone (or
    give up after a minute); the calls the last run made."""
    deadline = time.monotonic() + 60
    while True:
        calls = _calls(counter, argv, {})
        if calls == 0 or time.monotonic() > deadline:
            return calls
        time.sleep(0.5)


def _count_calls(server: BenchServer, squeue: List[str]) -> Tuple[str, str]:
    """The notes on API calls per warm and cold squeue (counted, or why not)."""
    with server.counter() as counter:
        if counter is None:
            return server.uncounted_reason, server.uncounted_reason
        if server.real:
            _settle(counter.kube)
        warm = _warm_calls(counter, squeue)
        cold = _calls(counter, squeue, {"SBATCHK8S_SERVER": "0"})
    how = " (counted by a loopback proxy)" if server.real else ""
    return (f"{warm} API calls per squeue{how} (goal 0)",
            f"{cold} API calls per squeue{how} (constant: 1 per collection)")


def _raw_list_ms(kube: Any) -> Tuple[List[float], int]:
    """The API server's own time for one LIST of the Jobs (this process, no kubectl),
    and how many it listed."""
    client = kube.api()
    samples, count = [], 0
    for _ in range(3):
        began = time.perf_counter()
        items, _ = client.list(JOB, kube.namespace, SELECTOR)
        samples.append((time.perf_counter() - began) * 1000)
        count = len(items)
    return samples, count


def _listing_figures(ctx: Context, server: BenchServer, size: int) -> List[Figure]:
    kube = server.kube
    env, cwd = kube.env, str(kube.work)
    kubectl = shutil.which("kubectl")
    squeue = command_argv("squeue")
    repeats = max(3, ctx.repeats(9) // 2)
    cold_env = dict(env, SBATCHK8S_SERVER="0")
    kubectl_samples = process_times([kubectl, "get", "jobs", "-l", SELECTOR], repeats, env,
                                    cwd, warmup=1) if kubectl else []
    shown, listed = _settle(kube)
    warm = Figure(f"k8s: squeue, {size} jobs, warm (server's watch cache)", "ms",
                  process_times(squeue, repeats, env, cwd, warmup=1))
    cold = Figure(f"k8s: squeue, {size} jobs, cold (SBATCHK8S_SERVER=0, LISTs)", "ms",
                  process_times(squeue, repeats, cold_env, cwd, warmup=0))
    warm.scaling, cold.scaling = _count_calls(server, squeue)
    warm.scaling += f"; shows {shown} pending jobs of {listed} listed"
    if server.real:
        warm.scaling += f"; {server.label}"
        cold.scaling += f"; {server.label}"
    for figure in (warm, cold):
        if kubectl:
            figure.comparison = "kubectl get jobs -l <selector>"
            figure.comparison_samples = kubectl_samples
    warm.goal = "≤ 0.25× kubectl"
    warm.goal_met = warm.ratio is not None and warm.ratio <= 0.25
    samples, listed = _raw_list_ms(kube)
    where = "real API server" if server.real else "emulated server"
    raw = Figure(f"k8s: one LIST of the {size} jobs' Jobs over HTTP ({where} + decode)",
                 "ms", samples, scaling=f"{listed} Jobs listed; {server.label}")
    if kubectl:
        raw.comparison, raw.comparison_samples = "kubectl get jobs -l <selector>", \
            kubectl_samples
    return [warm, cold, raw]


def _timed_jobs(ctx: Context, server: BenchServer) -> List[Figure]:
    from tests.kubelet import TestKubelet

    kube = server.kube
    figures = []
    kube.script("timed.sh", TIMED)
    with TestKubelet(kube.kubeconfig, nodes=8, name_prefix=server.node_prefix):
        for nodes in (1, 8):
            starts, returns = [], []
            for _ in range(ctx.repeats(5)):
                began = time.time()
                done = kube.run("sbatch", "--parsable", "--wait", f"-N{nodes}", "timed.sh",
                                timeout=120)
                ended = time.time()
                job = done.stdout.strip()
                starts.append((float(kube.read(f"start.{job}")) - began) * 1000)
                returns.append((ended - float(kube.read(f"end.{job}"))) * 1000)
            figures.append(Figure(f"k8s: sbatch → script start, {nodes} node(s)", "ms",
                                  starts, scaling=f"test kubelet, {server.label}"))
            figures.append(Figure(f"k8s: script end → sbatch --wait returns, {nodes} node(s)",
                                  "ms", returns, scaling=server.label))
    return figures


def figures(ctx: Context) -> Iterable[Figure]:
    with (real(ctx, ctx.kubeconfig) if ctx.kubeconfig else emulated(ctx)) as server:
        server.kube.run("squeue")  # starts the command server with the client loaded
        out = _timed_jobs(ctx, server)
        out += _submit_and_listing(ctx, server)
    return out
