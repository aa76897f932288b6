"""Dependent jobs on a cluster: time from the upstream job's end to the dependent job's pods
being created, on the emulated API server with the test kubelet, nobody typing anything.

* node 0 releases: the partition gives pods the job ServiceAccount, so the upstream job's
  node 0 records its end and resumes the dependent's workload (goal ≤ 2 s);
* the controller releases: pods without API access, ``sbatch-k8s controller`` running,
  woken by its watch of records and pods (goal ≤ 1 s).

The upstream's end is the moment its batch script's last command ran (it writes the time);
the dependent's pods are seen by polling the API server every :data:`POLL_S`. The emulator
and the test kubelet are Python on a shared machine: the figures bound what a real cluster
takes (the Job controller there adds its own sync delay)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any, Iterable, List, Optional

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure

POLL_S = 0.02
UPSTREAM = "#!/bin/sh\n#SBATCH -J up\nsleep 1\ndate +%s.%N > up-end-$SLURM_JOB_ID\n"
DEPENDENT = "#!/bin/sh\n#SBATCH -J down\ntrue\n"


def _first_pod(kube: Any, job_id: int, timeout_s: float = 120) -> float:
    """When a pod of ``job_id`` is first seen."""
    from sbatch_k8s.backends.kubernetes.api.kinds import POD

    client = kube.api()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pods, _ = client.list(POD, kube.namespace, f"sbatch-k8s.io/job-id={job_id}")
        if pods:
            return time.time()
        time.sleep(POLL_S)
    raise TimeoutError(f"no pod of job {job_id} after {timeout_s} s")


def _sample(kube: Any) -> float:
    up = int(kube.run("sbatch", "--parsable", "up.sh").stdout.strip().split(";")[0])
    down = int(kube.run("sbatch", "--parsable", f"--dependency=afterok:{up}",
                        "down.sh").stdout.strip().split(";")[0])
    seen = _first_pod(kube, down)
    ended = float((kube.work / f"up-end-{up}").read_text().strip())
    return seen - ended


def _scenario(ctx: Context, name: str, with_account: bool, controller: bool,
              goal_s: float) -> Figure:
    from tests.apiserver import EmulatedCluster
    from tests.kube.harness import CONFIG, KubeSlurm
    from tests.kube.test_dependencies import WITH_ACCOUNT, apply_job_account
    from tests.kubelet import TestKubelet

    figure = Figure(name, "s", goal=f"≤ {goal_s:g} s")
    proc: Optional["subprocess.Popen[str]"] = None
    with EmulatedCluster() as cluster, TestKubelet(cluster.kubeconfig, nodes=2):
        kube = KubeSlurm(ctx.root / name.split(":")[0].replace(" ", "-"), cluster.kubeconfig,
                         config=WITH_ACCOUNT if with_account else CONFIG,
                         commands=command_argv)
        try:
            if with_account:
                apply_job_account(kube)
            kube.script("up.sh", UPSTREAM)
            kube.script("down.sh", DEPENDENT)
            if controller:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "sbatch_k8s.tool", "controller"], cwd=kube.work,
                    env=kube.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _sample(kube)                       # warm-up: command server, runtime ConfigMap
            figure.samples = [_sample(kube) for _ in range(ctx.repeats(5))]
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(30)
            kube.cleanup()
    figure.goal_met = figure.median is not None and figure.median <= goal_s
    return figure


def figures(ctx: Context) -> Iterable[Figure]:
    results: List[Figure] = [
        _scenario(ctx, "k8s dependency: upstream end → dependent's pods, node 0 releases",
                  with_account=True, controller=False, goal_s=2.0),
        _scenario(ctx, "k8s dependency: upstream end → dependent's pods, controller",
                  with_account=False, controller=True, goal_s=1.0),
    ]
    return results
