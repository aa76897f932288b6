"""Options that steer sbatch itself change what sbatch does on each backend where the table
marks them honoured or approximated — as real processes: the local backend on a private
state directory, the Kubernetes backend against the emulated API server (with the test
kubelet, so that ``--wait`` sees the job end). And the Kubernetes backend refuses exactly
the options the table rejects there, in the table's words, creating nothing."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from parsers.options import APPROXIMATED, BACKENDS, HONOURED, KUBERNETES, LOCAL, SBATCH, options_for
from tests.local.harness import LocalSlurm
from tests.unit.option_effects import observe
from tests.unit.option_effects.probes import COMMAND, SCRIPT, Probe

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Both backends' commands, each in its own directory with the probe files."""
    from tests.apiserver import EmulatedCluster
    from tests.kube.harness import KubeSlurm
    from tests.kubelet import TestKubelet

    root = tmp_path_factory.mktemp("option-effects")
    local = LocalSlurm(root / "local")
    with EmulatedCluster() as cluster, TestKubelet(cluster.kubeconfig, nodes=2):
        kube = KubeSlurm(root / "kube", cluster.kubeconfig)
        for slurm in (local, kube):
            slurm.script("job.sh", SCRIPT)
            observe.write_probe_files(slurm.work / "files")
        try:
            yield {LOCAL: local, KUBERNETES: kube}
        finally:
            local.cleanup()
            kube.cleanup()


def _outcome(slurm: LocalSlurm, args: str) -> Tuple[int, str, str]:
    """sbatch's exit code and output, job ids and clock times written as N."""
    words = observe.command_words(args, Path("files"))
    done: "subprocess.CompletedProcess[str]" = slurm.run("sbatch", *words, timeout=180)
    return (done.returncode, re.sub(r"\d+", "N", done.stdout), re.sub(r"\d+", "N", done.stderr))


def _cases() -> List[Tuple[str, str]]:
    return [(backend, o.long) for backend in BACKENDS for o in options_for(SBATCH)
            if o.long in COMMAND and o.level(SBATCH, backend) in (HONOURED, APPROXIMATED)]


@pytest.mark.parametrize("backend, name", _cases())
def test_the_option_changes_what_sbatch_does(commands, backend, name):
    probe: Probe = COMMAND[name]
    slurm = commands[backend]
    without = _outcome(slurm, probe.baseline)
    with_it = _outcome(slurm, f"{probe.baseline} {probe.args}")
    assert with_it != without, f"{probe.args} changes nothing on the {backend} backend"
