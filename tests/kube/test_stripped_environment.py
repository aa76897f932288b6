"""Inside a pod, Slurm's commands work with nothing but the job id, as a job-step executor
calls them (issue 18, item 2): ``srun`` (the executor's exact line), ``scontrol show job``,
``squeue``, ``sacct`` (handed to the full commands, which find the cluster with the pod's
ServiceAccount and the configuration the job carries) and ``scancel`` — each under
``env -i`` with one job id variable. Pods find what the tool stripped in their node file
(``/tmp/sbatch-k8s/job-<id>.json``, the pod's own spool).
"""

from __future__ import annotations

from typing import Any, Dict

import pytest

from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit
from tests.kube.test_inside_job import cluster, kube, kubelet  # noqa: F401 (fixtures)
from tests.local.test_stripped_environment import stripped_script

pytestmark = pytest.mark.slow

SCRIPT = stripped_script()


def _state(slurm: KubeSlurm, job: int) -> str:
    return slurm.run("sacct", "-X", "-n", "-P", "-j", str(job), "-o", "State").stdout.strip()


def test_every_command_in_a_pod_needs_only_the_job_id(cluster: Any, kubelet: Any,  # noqa: F811
                                                      kube: KubeSlurm) -> None:  # noqa: F811
    kube.script("job.sh", SCRIPT)
    job = submit(kube, "job.sh")
    wait_until(lambda: _state(kube, job).startswith("CANCELLED"), 180,
               "the job cancelled by its own scancel")
    files: Dict[str, str] = {p.stem: p.read_text() for p in kube.work.glob("*.txt")}
    lines = dict(line.split("=", 1) for line in files["executor"].splitlines())
    assert (lines["rc"], lines["out"], lines["err"]) == ("0", f"step 0 on stripped-{job}-0",
                                                         ""), files
    *tasks, code = files["bare-srun"].splitlines()
    assert (sorted(tasks), code) == ([f"0: stripped-{job}-0", f"1: stripped-{job}-1"],
                                     "0"), files
    assert files["bare-scontrol"].startswith(f"JobId={job} JobName=stripped\n"), files
    assert f"NodeList=stripped-{job}-[0-1]" in files["bare-scontrol"], files
    assert files["bare-squeue"] == f"{job} RUNNING 2\n", files
    assert files["bare-sacct"] == f"{job}|RUNNING\n", files
    assert files["prefixed"] == ""
    assert cluster.rbac.refused() == []
