"""What sbatch and the reporting commands say against an API server (issue 18): an unknown
partition that an alias sends elsewhere is warned about once (it was printed twice: with
the allocation's warnings and again with the plan's); ``sbatch -M`` names the cluster;
``-v`` names the backend in every command."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.kube.harness import CONFIG, KubeSlurm

ALIASED = CONFIG + """
[partition_aliases]
"*" = "debug"
"""


def test_each_warning_once_and_the_cluster_named(cluster: Any, tmp_path: Path) -> None:
    kube = KubeSlurm(tmp_path, cluster.kubeconfig, config=ALIASED)
    try:
        done = kube.run("sbatch", "-p", "bogus", "-M", "kube", "--wrap=true")
        assert done.returncode == 0, done.stderr
        assert re.fullmatch(r"Submitted batch job \d+ on cluster kube\n", done.stdout)
        warnings = done.stderr.splitlines()
        assert warnings.count("sbatch: warning: invalid partition specified: bogus; "
                              'partition_aliases maps unknown names ("*"), so the job runs in '
                              "partition debug") == 1, warnings
        assert len(warnings) == len(set(warnings)), warnings
        refused = kube.run("sbatch", "-M", "other", "--wrap=true")
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr.startswith("sbatch: error: No cluster 'other' known by "
                                         "database.\n")
        for command in ("squeue", "sinfo", "sacct", "scontrol"):
            args = ["show", "partition"] if command == "scontrol" else []
            said = kube.run(command, "-v", *args).stderr.splitlines()
            assert said and said[0].startswith(f"{command}: backend kubernetes, context "), said
    finally:
        kube.cleanup()
