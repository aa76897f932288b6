"""A script with bytes that are not UTF-8 (a Latin-1 comment, a payload after ``exit``) is
accepted as real Slurm accepts it, travels in the job ConfigMap's ``binaryData`` and runs in
the pod byte for byte. A UTF-8 script stays readable text in ``data``."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
#: Prints its own bytes as hex (``$0`` is the runtime's copy of the script), then stops before
#: the payload.
LATIN1 = (b"#!/bin/sh\n# r\xe9sum\xe9 en Latin-1\n"
          b"od -An -tx1 -v \"$0\" | tr -d ' \\n'\necho\nexit 0\n\xff\xfe\x80payload\n")
UTF8 = "#!/bin/sh\n# résumé en UTF-8\necho ok\n".encode()


def _printed(tmp_path: Path, script: bytes) -> List[Dict[str, Any]]:
    (tmp_path / "job.sh").write_bytes(script)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SBATCHK8S_SERVER": "0",
           "SBATCHK8S_BACKEND": "kubernetes", "SBATCHK8S_STATE_DIR": str(tmp_path / "s")}
    done = subprocess.run([sys.executable, str(REPO / "bin" / "sbatch"), "-Q",
                           "--k8s-print=objects", "job.sh"], cwd=tmp_path, env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return list(yaml.safe_load_all(done.stdout))


def _job_config_map(manifests: List[Dict[str, Any]]) -> Dict[str, Any]:
    return next(m for m in manifests if m["kind"] == "ConfigMap")


def test_a_non_utf8_script_goes_into_binary_data(tmp_path):
    config_map = _job_config_map(_printed(tmp_path, LATIN1))
    assert "script" not in config_map["data"]
    assert base64.b64decode(config_map["binaryData"]["script"]) == LATIN1
    assert "job.json" in config_map["data"]


def test_a_utf8_script_stays_text(tmp_path):
    config_map = _job_config_map(_printed(tmp_path, UTF8))
    assert config_map["data"]["script"] == UTF8.decode()
    assert "binaryData" not in config_map


@pytest.mark.slow
def test_the_pod_runs_the_exact_bytes(tmp_path):
    from tests.apiserver import EmulatedCluster
    from tests.kube.harness import KubeSlurm, submitted_id
    from tests.kubelet import TestKubelet

    with EmulatedCluster() as cluster, TestKubelet(cluster.kubeconfig, nodes=1):
        kube = KubeSlurm(tmp_path, cluster.kubeconfig)
        try:
            (kube.work / "latin.sh").write_bytes(LATIN1)
            done = kube.run("sbatch", "--wait", "latin.sh", timeout=120)
            assert done.returncode == 0, done.stderr
            output = kube.read(f"slurm-{submitted_id(done.stdout)}.out")
        finally:
            kube.cleanup()
    assert output == LATIN1.hex() + "\n"
