"""Many users, one cluster: user B tries on user A's jobs everything issue 16 found possible,
and the API server refuses it; A's jobs complete untouched, A's and the operator's commands
work.

Runs on the emulated API server (RBAC on, the admission policies of ``deploy/policy.yaml``
evaluated) and, with ``--with-kube-apiserver``, on the real one (users from client
certificates its CA signs; :mod:`tests.kube.multi_user`). Every attempt and its outcome is
printed (``pytest -s``) as one table row.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import KubeSlurm, submitted_id
from tests.kube.multi_user import Site, emulated_site, real_site
from translators.config import UsersConfig
from translators.users import hashed_uid

pytestmark = pytest.mark.slow

#: A's long job: checks that its own node agent takes its own token, then waits for ``go``.
LONG = """#!/bin/sh
#SBATCH --job-name=long
echo "a ran as $SLURM_JOB_USER"
python3 PROBE "$(hostname)" > own-agent.txt 2>&1
while [ ! -e go ]; do sleep 0.2; done
echo "a done"
"""
#: Run by B's job: connect to a node agent (A's) with B's own job token.
PROBE = """import asyncio, sys
sys.path.insert(0, "/opt/sbatch-k8s/runtime.pyz")
from sbatch_k8s.runtime.protocol import authenticate, read_token
async def main():
    reader, writer = await asyncio.open_connection(sys.argv[1], 6818)
    try:
        await authenticate(reader, writer, read_token("/etc/sbatch-k8s/token/token"))
        print("ACCEPTED")
    except Exception as e:
        print("REFUSED", e)
asyncio.run(main())
"""
HELD = "#!/bin/sh\n#SBATCH --job-name=held\necho original script of A\n"
OK = "#!/bin/sh\necho ok\n"


@pytest.fixture
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    skip_on_real_nodes(request.config, "the users' restricted pods may not mount the test "
                       "directory (the real API server tier runs these)")
    if request.config.getoption("--with-kube-apiserver"):
        if not os.environ.get("KUBECONFIG"):
            pytest.skip("--with-kube-apiserver needs $KUBECONFIG")
        made = real_site(tmp_path)
    else:
        made = emulated_site(tmp_path)
    with made as ready:
        yield ready


@pytest.fixture
def nodes(site: Site) -> Iterator[Any]:
    from tests.kubelet import TestKubelet

    with TestKubelet(site.cluster.kubeconfig, nodes=2) as running:
        yield running
        if site.real:
            site.cluster.drain()


class Attempts:
    """What B tried and what came of it."""

    def __init__(self) -> None:
        self.rows: List[Tuple[str, str]] = []

    def refused_by_api(self, what: str, call: Callable[[], Any],
                       statuses: Tuple[int, ...] = (403, 422)) -> str:
        """``call`` must be refused by the API server; the refusal's message."""
        try:
            call()
        except KubeError as e:
            assert e.status in statuses, (what, e.status, str(e))
            self.rows.append((what, f"refused {e.status}: {str(e)[:150]}"))
            return str(e)
        self.rows.append((what, "ALLOWED"))
        raise AssertionError(f"the API server allowed: {what}")

    def command(self, what: str, done: Any, code: int, stderr: str) -> None:
        self.rows.append((what, f"exit {done.returncode}: {done.stderr.strip()}"))
        assert (done.returncode, done.stderr) == (code, stderr), (what, done)

    def note(self, what: str, outcome: str) -> None:
        self.rows.append((what, outcome))

    def print(self, tier: str) -> None:
        print(f"\n| attack ({tier}) | outcome |\n|---|---|")
        for what, outcome in self.rows:
            print(f"| {what} | {outcome.replace('|', '/')} |")


def _ok(slurm: KubeSlurm, *args: str, **kw: Any) -> str:
    done = slurm.run(*args, **kw)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _sbatch(slurm: KubeSlurm, *args: str, env: Any = None) -> int:
    return submitted_id(_ok(slurm, "sbatch", *args, env=env))


def _state(slurm: KubeSlurm, job: int) -> str:
    return _ok(slurm, "sacct", "-X", "-n", "-P", "-j", str(job), "-o", "State").strip()


def _job(name: str, labels: Any = None, **spec: Any) -> Any:
    pod = {"restartPolicy": "Never",
           "containers": [{"name": "c", "image": "python:3.12-slim",
                           "command": ["cat", "/stolen/token"]}]}
    pod.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"suspend": True, "template": {"spec": pod}}}


def _pod_of(site: Site, job_id: int) -> Any:
    pods, _ = site.admin().list(kinds.POD, site.namespace, f"sbatch-k8s.io/job-id={job_id}")
    return pods[0] if pods else None


def test_user_b_cannot_touch_user_a_jobs(site: Site, nodes: Any) -> None:
    a, b, operator = site.slurm("alice"), site.slurm("bob"), site.slurm("carol")
    attempts = Attempts()
    try:
        _scenario(site, a, b, operator, attempts)
    finally:
        attempts.print("real API server" if site.real else "emulated API server")
        for slurm in (a, b, operator):
            slurm.cleanup()


def _scenario(site: Site, a: KubeSlurm, b: KubeSlurm, operator: KubeSlurm,
              attempts: Attempts) -> None:
    ns = site.namespace
    bob = site.api("bob")
    for slurm in (a, b):
        slurm.script("long.sh", LONG.replace("PROBE", str(slurm.work / "probe.py")))
        slurm.script("probe.py", PROBE)
        slurm.script("held.sh", HELD)
        slurm.script("ok.sh", OK)
    long_job = _sbatch(a, "long.sh")
    held = _sbatch(a, "--hold", "held.sh")
    waiting = _sbatch(a, f"--dependency=afterok:{long_job}", "ok.sh")
    wait_until(lambda: _state(a, long_job) == "RUNNING", 180, "A's long job runs")
    runtime = next(c["metadata"]["name"] for c in site.admin().list(kinds.CONFIG_MAP, ns)[0]
                   if c["metadata"]["name"].startswith("sbatch-k8s-runtime-"))

    # 1. Run code inside A's jobs: the shared runtime cannot be replaced.
    attempts.refused_by_api("delete the shared runtime ConfigMap",
                            lambda: bob.delete(kinds.CONFIG_MAP, runtime, ns))
    attempts.refused_by_api("patch the shared runtime ConfigMap", lambda: bob.merge_patch(
        kinds.CONFIG_MAP, runtime, ns, {"metadata": {"labels": {"evil": "yes"}}}))

    # 2. Read A's secrets and use the job's token.
    secret = f"long-{long_job}"
    attempts.refused_by_api("get A's Secret", lambda: bob.get(kinds.SECRET, secret, ns),
                            (403,))
    attempts.refused_by_api("list Secrets", lambda: bob.list(kinds.SECRET, ns), (403,))
    attempts.refused_by_api("patch A's Secret (its answer holds the data)",
                            lambda: bob.merge_patch(kinds.SECRET, secret, ns, {}), (403,))
    volume = {"volumes": [{"name": "s", "secret": {"secretName": secret}}]}
    attempts.refused_by_api("a Job mounting A's Secret",
                            lambda: bob.create(_job("steal-volume", **volume), ns))
    env = {"containers": [{"name": "c", "image": "x", "env": [{"name": "T", "valueFrom": {
        "secretKeyRef": {"name": secret, "key": "token"}}}]}]}
    attempts.refused_by_api("a Job reading A's token through env",
                            lambda: bob.create(_job("steal-env", **env), ns))
    env_from = {"containers": [{"name": "c", "image": "x",
                                "envFrom": [{"secretRef": {"name": secret}}]}]}
    attempts.refused_by_api("a Job importing A's Secret (envFrom)",
                            lambda: bob.create(_job("steal-envfrom", **env_from), ns))
    projected = {"volumes": [{"name": "s", "projected": {"sources": [
        {"secret": {"name": secret}}]}}]}
    attempts.refused_by_api("a Job projecting A's Secret",
                            lambda: bob.create(_job("steal-projected", **projected), ns))
    attempts.refused_by_api("a Job running as the controller's ServiceAccount",
                            lambda: bob.create(_job(
                                "as-controller", serviceAccountName="sbatch-k8s-controller"),
                                ns))

    # 3. Swap a held job's script.
    attempts.refused_by_api("patch A's held job's script", lambda: bob.merge_patch(
        kinds.CONFIG_MAP, f"held-{held}", ns, {"data": {"script": "#!/bin/sh\necho B\n"}}))
    attempts.refused_by_api("delete A's held job's ConfigMap",
                            lambda: bob.delete(kinds.CONFIG_MAP, f"held-{held}", ns))

    # 4. Our commands, whatever B's local uid (root here) or $USER.
    as_alice = {"USER": "alice", "LOGNAME": "alice"}
    attempts.command("scancel A's job (USER=alice, uid 0)",
                     b.run("scancel", str(long_job), env=as_alice), 210,
                     f"scancel: error: Kill job error on job id {long_job}: "
                     "Access/permission denied\n")
    attempts.command("scontrol release A's held job",
                     b.run("scontrol", "release", str(held), env=as_alice), 1,
                     f"Invalid user id for job {held}\nslurm_suspend error: Invalid user id\n")
    attempts.command("scontrol hold A's pending job",
                     b.run("scontrol", "hold", str(waiting), env=as_alice), 1,
                     f"Invalid user id for job {waiting}\n"
                     "slurm_suspend error: Invalid user id\n")
    attempts.command("scontrol requeue A's running job",
                     b.run("scontrol", "requeue", str(long_job), env=as_alice), 1,
                     f"Access/permission denied for job {long_job}\n")
    attempts.command("scontrol requeuehold A's running job",
                     b.run("scontrol", "requeuehold", str(long_job), env=as_alice), 1,
                     f"Access/permission denied for job {long_job}\n")
    forged = _sbatch(b, "ok.sh", env=as_alice)
    shown = _ok(b, "sacct", "-X", "-n", "-P", "-j", str(forged), "-o", "User").strip()
    attempts.note("sbatch with USER=alice: the job's User", shown)
    assert shown == "bob"
    record = f"sbatch-k8s-job-{long_job}"
    attempts.refused_by_api("patch A's record (uid)", lambda: bob.merge_patch(
        kinds.CONFIG_MAP, record, ns, {"data": {"record.json": "{}"}}))
    attempts.refused_by_api("delete A's record",
                            lambda: bob.delete(kinds.CONFIG_MAP, record, ns))
    attempts.refused_by_api("delete A's Job (the workload)",
                            lambda: bob.delete(kinds.JOB, f"long-{long_job}", ns))
    node0 = _pod_of(site, long_job)
    attempts.refused_by_api("delete A's node-0 pod",
                            lambda: bob.delete(kinds.POD, node0["metadata"]["name"], ns))
    attempts.refused_by_api("annotate A's node-0 pod (scancel's requests)",
                            lambda: bob.merge_patch(kinds.POD, node0["metadata"]["name"], ns, {
                                "metadata": {"annotations": {
                                    "sbatch-k8s.io/scancel-requests": "[]"}}}))
    fake = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "sbatch-k8s-job-999999", "labels": {
            "app.kubernetes.io/managed-by": "sbatch-k8s", "sbatch-k8s.io/kind": "record"},
        "annotations": {"sbatch-k8s.io/owner": "alice"}}, "data": {}}
    attempts.refused_by_api("create a record naming A as its owner",
                            lambda: bob.create(fake, ns))
    counter = site.admin().get(kinds.CONFIG_MAP, "sbatch-k8s-job-ids", ns)
    lowered = json.loads(json.dumps(counter))
    lowered["data"]["next"] = "1"
    attempts.refused_by_api("set the id counter back",
                            lambda: bob.replace(kinds.CONFIG_MAP, lowered, ns))
    attempts.refused_by_api("delete the id counter",
                            lambda: bob.delete(kinds.CONFIG_MAP, "sbatch-k8s-job-ids", ns))

    # A job of B's connects to A's node agent with B's own token; A's with its own.
    a_host = node0["status"]["podIP"]
    b.script("knock.sh", f"#!/bin/sh\npython3 {b.work / 'probe.py'} {a_host} > knock.txt "
                         "2>&1\n")
    knock = _sbatch(b, "knock.sh")
    wait_until(lambda: _state(b, knock) in ("COMPLETED", "FAILED"), 180, "B's knock ran")
    answer = b.read("knock.txt").strip()
    attempts.note("B's job launches a step on A's node agent with B's token", answer)
    assert answer.startswith("REFUSED"), answer
    own = a.read("own-agent.txt").strip()
    assert own == "ACCEPTED", own          # the check means something: A's own token works

    # A job submitted "from inside a job" claiming A: the pod is verified, the claim is not
    # believed (the submitting job is B's).
    b_pod = _pod_of(site, forged) or _pod_of(site, knock)
    _claims(site, attempts, b, b_pod, node0)

    # 5. The operator and A may act; A's jobs completed untouched.
    assert f"{held}|alice" in _ok(operator, "sacct", "-X", "-n", "-P", "-o", "JobID,User")
    _ok(operator, "scontrol", "hold", str(waiting))
    _ok(operator, "scontrol", "release", str(waiting))
    victim = _sbatch(a, "--hold", "ok.sh")
    _ok(operator, "scancel", str(victim))
    carol = hashed_uid("carol", UsersConfig())        # the [users] default mapping
    wait_until(lambda: _state(a, victim) == f"CANCELLED by {carol}", 60,
               "the operator cancelled")
    _ok(a, "scontrol", "release", str(held))
    (a.work / "go").write_text("")
    for job in (long_job, held, waiting):
        wait_until(lambda j=job: _state(a, j) == "COMPLETED", 240, f"A's job {job} completed")
    assert a.read(f"slurm-{held}.out") == "original script of A\n"
    assert a.read(f"slurm-{long_job}.out") == "a ran as alice\na done\n"
    users = _ok(a, "squeue", "-h", "--me", "-t", "all", "-o", "%i %u")
    assert str(forged) not in users


def _token_client(site: Site, token: str) -> Any:
    """A client authenticating with ``token`` alone (as code in a pod would)."""
    from kubernetes import client

    from sbatch_k8s.backends.kubernetes.api.client import KubeClient, Target

    configuration = client.Configuration()
    configuration.host = site.cluster.url
    if site.real:
        configuration.ssl_ca_cert = os.environ.get("SBATCHK8S_TEST_CA",
                                                   "/tmp/k8s-real/pki/ca") + ".crt"
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return KubeClient(client.ApiClient(configuration), Target(site.cluster.url, "pod",
                                                              site.namespace), 2.0)


def _claims(site: Site, attempts: Attempts, b: KubeSlurm, b_pod: Any, a_pod: Any) -> None:
    """B's pod token (what B's code in the pod reads) submitting records that claim A."""
    from kubernetes import client

    ns = site.namespace
    if b_pod is None:
        return
    token = client.CoreV1Api(site.cluster.api_client()).create_namespaced_service_account_token(
        "sbatch-k8s-job", ns, {"spec": {"boundObjectRef": {
            "kind": "Pod", "apiVersion": "v1", "name": b_pod["metadata"]["name"],
            "uid": b_pod["metadata"]["uid"]}}}).status.token
    as_pod = _token_client(site, token)
    b_pattern = b_pod["metadata"]["annotations"]["sbatch-k8s.io/pods"]
    a_pattern = a_pod["metadata"]["annotations"]["sbatch-k8s.io/pods"]
    b_job = b_pod["metadata"]["labels"]["sbatch-k8s.io/job-id"]

    def record(job: int, pods: str) -> Any:
        record = {"job_id": job, "name": "claim", "user": "alice", "uid": 1, "group": "alice",
                  "gid": 1, "partition": "debug", "state": "PENDING",
                  "submit_time": int(time.time())}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"sbatch-k8s-job-{job}", "labels": {
                "app.kubernetes.io/managed-by": "sbatch-k8s", "sbatch-k8s.io/kind": "record",
                "sbatch-k8s.io/job-id": str(job)},
            "annotations": {"sbatch-k8s.io/owner": "alice",
                            "sbatch-k8s.io/submitted-from": b_pod["metadata"]["name"],
                            "sbatch-k8s.io/owner-pods": pods,
                            "sbatch-k8s.io/parent-job": b_job}},
            "data": {"record.json": json.dumps(record), "workload.json": "{}"}}
    refusal = attempts.refused_by_api(
        "B's pod token: a job claiming A, as if submitted from A's job",
        lambda: as_pod.create(record(900001, a_pattern), ns))
    assert "ValidatingAdmissionPolicy" in refusal, refusal
    as_pod.create(record(900002, b_pattern), ns)
    shown = _ok(b, "sacct", "-X", "-n", "-P", "-j", "900002", "-o", "User").strip()
    attempts.note("B's pod token: a job claiming A, submitted from B's job (admitted): "
                  "its User", shown)
    assert shown == "nobody"
    assert re.match(r"^\^", b_pattern)
