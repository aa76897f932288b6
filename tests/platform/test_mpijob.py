"""AI Hub's MpiJob through ``runtime run`` on its launcher: the launcher reads the hostfile and
starts the runtime on every worker through the rsh agent, as mpirun would; the workers are
Slurm's nodes, the first one runs the batch script, and the output and exit code come back
through the launcher.

The transport is a stand-in for ssh (stated): :data:`RSH_STAND_IN`, given to the launcher as
``OMPI_MCA_plm_rsh_agent``, takes ssh's ``-o`` options, a host and one command line, and runs
that line with ``sh -c`` inside the named worker container's mount and UTS namespaces
(``nsenter`` into its process, whose pid the harness knows), as sshd would run it there. A
host it does not know fails as ssh does (exit 255); a host named ``*-silent*`` never answers,
as a firewalled sshd without a connect timeout.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Sequence

import pytest

from tests.data import TORCHRUN_SCRIPT
from tests.local.test_torchrun import TRAIN, check_torchrun_output
from tests.platform import oracles
from tests.platform.harness import Node, Outcome, PlatformCluster
from tests.platform.test_env_probe import PROBE, TASK

RSH_STAND_IN = """#!/bin/sh
# ssh stand-in: [-o option]... host command-line
while [ "$1" = "-o" ]; do shift 2; done
host=$1; shift
case "$host" in *-silent*) exec sleep 3600;; esac
map={map}
i=0
while [ ! -s "$map" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
pid=$(awk -v h="$host" '$1 == h {{print $2}}' "$map")
if [ -z "$pid" ]; then
    echo "ssh: Could not resolve hostname $host: Name or service not known" >&2
    exit 255
fi
exec nsenter -t "$pid" -m -u sh -c "$*"
"""


def run_mpijob(cluster: PlatformCluster, nodes: Sequence[Node], run_args: List[str],
               timeout_s: float = 120.0) -> Outcome:
    """Start the launcher and the workers; once the launcher ended, stop the workers (as the
    operator deletes them) and collect every container's outcome."""
    agent_dir = cluster.root / f"rsh-{len(list(cluster.root.glob('rsh-*')))}"
    agent_dir.mkdir()
    agent = agent_dir / "rsh"
    agent_map = agent_dir / "hosts"
    agent.write_text(RSH_STAND_IN.format(map=agent_map))
    agent.chmod(0o755)
    launcher = nodes[0]._replace(env=dict(nodes[0].env, OMPI_MCA_plm_rsh_agent=str(agent)))
    processes = cluster.start([launcher] + list(nodes[1:]), run_args)
    names = "".join(f"{name} {process.pid}\n" for node, process in zip(nodes, processes)
                    for name in (node.hostname,) + node.aliases)
    (agent_dir / "hosts.new").write_text(names)
    (agent_dir / "hosts.new").rename(agent_map)
    processes[0].wait(timeout_s)
    for process in processes[1:]:
        process.kill()
    return cluster.finish(processes, 10)


def test_probe_runs_on_the_workers(cluster: PlatformCluster) -> None:
    made = oracles.aihub_mpijob("mj", 2, 2)
    cluster.write("probe-mj.sh", PROBE.format(nodes=2, ran="ran-mj.txt", code=0))
    outcome = run_mpijob(cluster, made.nodes, ["-v", "--wait", "60", "probe-mj.sh"])
    log = outcome.logs[0]
    assert outcome.codes[0] == 0, outcome.logs
    assert "run: contract mpijob: AI Hub / Kubeflow MpiJob launcher" in log, log
    ran = cluster.read("ran-mj.txt").splitlines()
    assert len(ran) == 1 and re.fullmatch(
        r"batch mj-worker-0 job=\d+ nodes=2 list=mj-worker-\[0-1\]", ran[0]), ran
    assert "batch-line mj-worker-0" in log  # node 0's output, forwarded by the agent
    tasks = sorted(TASK.findall(log), key=lambda t: int(t[0]))
    assert [(t[0], t[2], t[3]) for t in tasks] == [
        ("0", "mj-worker-0", "mj-worker-0"), ("1", "mj-worker-0", "mj-worker-0"),
        ("2", "mj-worker-1", "mj-worker-1"), ("3", "mj-worker-1", "mj-worker-1")], log
    for line in ("node 0 of 2 (mj-worker-0)", "node 1 of 2 (mj-worker-1)"):
        assert line in log, log


def test_scripts_exit_code_is_the_launchers(cluster: PlatformCluster) -> None:
    made = oracles.aihub_mpijob("mjx", 2, 1)
    cluster.write("probe-mjx.sh", PROBE.format(nodes=2, ran="ran-mjx.txt", code=5))
    outcome = run_mpijob(cluster, made.nodes, ["--wait", "60", "probe-mjx.sh"])
    assert outcome.codes[0] == 5, outcome.logs
    assert len(cluster.read("ran-mjx.txt").splitlines()) == 1


def test_design_torchrun_script_on_an_mpijob(cluster: PlatformCluster) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    cluster.write("train.py", TRAIN)
    cluster.write("llm-mj.sh", TORCHRUN_SCRIPT.read_text().replace("logs/", "logs-mj/"))
    made = oracles.aihub_mpijob("llm-mj", 2, 2)
    outcome = run_mpijob(cluster, made.nodes, ["llm-mj.sh"], timeout_s=300)
    outputs = list(Path(cluster.work / "logs-mj").glob("llm-*.out"))
    batch = "".join(p.read_text() for p in outputs)
    assert outcome.codes[0] == 0, (outcome.logs, batch)
    assert "sbatch-k8s: warning: the script asks for 8 GPU(s) per node; the platform gives " \
        "2" in outcome.logs[0]
    assert len(outputs) == 1, outputs
    check_torchrun_output(outputs[0].read_text())


def _bounded_failure(outcome: Outcome, line: str) -> None:
    assert outcome.codes[0] == 1, outcome.logs
    errors = [x for x in outcome.logs[0].splitlines() if x.startswith("sbatch-k8s: error:")]
    assert len(errors) == 1 and line in errors[0], outcome.logs[0]


def test_missing_hostfile(cluster: PlatformCluster) -> None:
    made = oracles.aihub_mpijob("mjh", 2, 1)
    nodes = [made.nodes[0]._replace(files={})] + made.nodes[1:]
    outcome = run_mpijob(cluster, nodes, ["--contract", "mpijob", "--wait", "10", "x.sh"])
    _bounded_failure(outcome, "sbatch-k8s: error: run: the hostfile /etc/mpi/hostfile "
                     "(OMPI_MCA_orte_default_hostfile) does not exist in this container")


@pytest.mark.parametrize("worker", ["mjr-worker-9", "mjr-silent-1"])
def test_unreachable_worker(cluster: PlatformCluster, worker: str) -> None:
    """A host the agent cannot reach (ssh's exit 255) and one that never answers: one line
    naming it, within the wait bound, the other runs stopped."""
    made = oracles.aihub_mpijob("mjr", 2, 1)
    launcher = made.nodes[0]
    hostfile = launcher.files["/etc/mpi/hostfile"] + f"{worker}.mjr.default.svc slots=1\n"
    nodes = [launcher._replace(files={"/etc/mpi/hostfile": hostfile})] + made.nodes[1:]
    cluster.write("probe-mjr.sh", PROBE.format(nodes=3, ran="ran-mjr.txt", code=0))
    outcome = run_mpijob(cluster, nodes, ["--wait", "8", "probe-mjr.sh"], timeout_s=60)
    address = f"{worker}.mjr.default.svc"
    if "silent" in worker:
        line = f"no node agent answered on {address} within 8 s (started through "
    else:
        line = f"the run on {address} (node 2) ended with exit code 255 before its agent " \
            "answered (started through "
    _bounded_failure(outcome, line)
    assert "the launcher's runtime path must be valid on every host" in outcome.logs[0]
    assert cluster.read("ran-mjr.txt") == ""
