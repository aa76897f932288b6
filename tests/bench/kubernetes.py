"""The Kubernetes backend against the emulated API server (``tests.apiserver``), side by side
with kubectl on the same server: sbatch vs ``kubectl create -f`` of the same manifests;
squeue with 1,000 (and 10,000) jobs vs ``kubectl get jobs`` with the same selector — warm
(through the command server, answered by its watch cache) and cold (``SBATCH_K8S_SERVER=0``:
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
one LIST figure, not against kubectl, to see what a real server would leave of the gain."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Tuple

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times

SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"
TIMED = ("#!/bin/sh\n#SBATCH -J timed -o /dev/null\npython3 -c 'import time; "
         "print(repr(time.time()))' > start.$SLURM_JOB_ID\n"
         "python3 -c 'import time; print(repr(time.time()))' > end.$SLURM_JOB_ID\n")


def _clone_jobs(kube: Any, count: int) -> None:
    """``count`` more jobs (record + Job) like the one sbatch created, through the API."""
    from sbatch_k8s.backends.kubernetes import kinds

    client = kube.api()
    record = next(c for c in kube.objects(kinds.CONFIG_MAP, "sbatch-k8s.io/kind=record"))
    job = kube.objects(kinds.JOB)[0]
    for obj in (record, job):
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation",
                    "managedFields"):
            obj["metadata"].pop(key, None)
        obj.pop("status", None)
    record.update(apiVersion="v1", kind="ConfigMap")
    job.update(apiVersion="batch/v1", kind="Job")
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
        work["spec"]["suspend"] = True  # no pods: the emulator stays light
        client.create(rec, "default")
        client.create(work, "default")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(make, range(count)))


def _calls(cluster: Any, argv: List[str], env: Dict[str, str], cwd: str) -> int:
    before = len(cluster.requests)
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    return len(cluster.requests) - before


def _submit_and_listing(ctx: Context, cluster: Any, kube: Any) -> List[Figure]:
    repeats = ctx.repeats(9)
    env, cwd = kube.env, str(kube.work)
    kubectl = shutil.which("kubectl")
    sbatch = Figure("k8s: sbatch (whole process)", "ms", process_times(
        command_argv("sbatch") + ["-o", "/dev/null", "--wrap=true"], repeats, env, cwd,
        warmup=1))
    if kubectl:
        files = []
        for k in range(repeats + 1):
            printed = subprocess.run(
                command_argv("sbatch") + ["--k8s-print=objects", f"--k8s-job-id={90000 + k}",
                                          "-o", "/dev/null", "--wrap=true"],
                env=dict(env, SBATCH_K8S_BACKEND="local"), cwd=cwd, capture_output=True,
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
    have = len(kube.objects(__import__("sbatch_k8s.backends.kubernetes.kinds",
                                       fromlist=["JOB"]).JOB))
    for size in sizes:
        _clone_jobs(kube, size - have)
        have = size
        figures += _listing_figures(ctx, cluster, kube, size)
    return figures


def _warm_cache(cluster: Any, argv: List[str], env: Dict[str, str], cwd: str) -> int:
    """Run squeue through the command server until the watch cache answers it alone (or
    give up after a minute); the calls the last run made."""
    deadline = time.monotonic() + 60
    while True:
        calls = _calls(cluster, argv, env, cwd)
        if calls == 0 or time.monotonic() > deadline:
            return calls
        time.sleep(0.5)


def _raw_list_ms(kube: Any) -> Tuple[List[float], int]:
    """The emulated server's own time for one LIST of the Jobs (this process, no kubectl),
    and how many it listed."""
    from sbatch_k8s.backends.kubernetes import kinds

    client = kube.api()
    samples, count = [], 0
    for _ in range(3):
        began = time.perf_counter()
        items, _ = client.list(kinds.JOB, "default", SELECTOR)
        samples.append((time.perf_counter() - began) * 1000)
        count = len(items)
    return samples, count


def _listing_figures(ctx: Context, cluster: Any, kube: Any, size: int) -> List[Figure]:
    env, cwd = kube.env, str(kube.work)
    kubectl = shutil.which("kubectl")
    squeue = command_argv("squeue")
    repeats = max(3, ctx.repeats(9) // 2)
    cold_env = dict(env, SBATCH_K8S_SERVER="0")
    kubectl_samples = process_times([kubectl, "get", "jobs", "-l", SELECTOR], repeats, env,
                                    cwd, warmup=1) if kubectl else []
    warm_calls = _warm_cache(cluster, squeue, env, cwd)
    warm = Figure(f"k8s: squeue, {size} jobs, warm (server's watch cache)", "ms",
                  process_times(squeue, repeats, env, cwd, warmup=1))
    cold = Figure(f"k8s: squeue, {size} jobs, cold (SBATCH_K8S_SERVER=0, LISTs)", "ms",
                  process_times(squeue, repeats, cold_env, cwd, warmup=0))
    warm.scaling = f"{warm_calls} API calls per squeue (goal 0)"
    cold.scaling = f"{_calls(cluster, squeue, cold_env, cwd)} API calls per squeue " \
                   "(constant: 1 per collection)"
    for figure in (warm, cold):
        if kubectl:
            figure.comparison = "kubectl get jobs -l <selector>"
            figure.comparison_samples = kubectl_samples
    warm.goal = "≤ 0.25× kubectl"
    warm.goal_met = warm.ratio is not None and warm.ratio <= 0.25
    samples, listed = _raw_list_ms(kube)
    raw = Figure(f"k8s: one LIST of the {size} jobs' Jobs over HTTP (emulated server + decode)",
                 "ms", samples, scaling=f"{listed} Jobs listed")
    if kubectl:
        raw.comparison, raw.comparison_samples = "kubectl get jobs -l <selector>", \
            kubectl_samples
    return [warm, cold, raw]


def _timed_jobs(ctx: Context, cluster: Any, kube: Any) -> List[Figure]:
    from tests.kubelet import TestKubelet

    figures = []
    kube.script("timed.sh", TIMED)
    with TestKubelet(cluster.kubeconfig, nodes=8):
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
                                  starts, scaling="test kubelet, emulated API server"))
            figures.append(Figure(f"k8s: script end → sbatch --wait returns, {nodes} node(s)",
                                  "ms", returns))
    return figures


def figures(ctx: Context) -> Iterable[Figure]:
    from tests.apiserver import EmulatedCluster
    from tests.kube.harness import KubeSlurm

    with EmulatedCluster(allow_anonymous=True) as cluster:
        kube = KubeSlurm(ctx.root / "kube", cluster.kubeconfig)
        try:
            kube.run("squeue")  # starts the command server with the client loaded
            out = _timed_jobs(ctx, cluster, kube)
            out += _submit_and_listing(ctx, cluster, kube)
        finally:
            kube.cleanup()
    return out
