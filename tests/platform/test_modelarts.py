"""ModelArts / Ascend: the platform starts the command once per card; the instance with
``ASCEND_DEVICE_ID=0`` runs the node, the others wait and exit with its code; the rank table
(``$RANK_TABLE_FILE/jobstart_hccl.json``, either template) is read once ``completed``; every
task gets ``ASCEND_DEVICE_ID``, ``RANK_ID``, ``RANK_SIZE`` in Slurm's layout."""

from __future__ import annotations

import re
import time

from tests.platform import oracles
from tests.platform.harness import INSTANCE_EXIT, Outcome, PlatformCluster
from tests.platform.test_bad_contracts import BOUND_S, WAIT_S, run_bad
from tests.platform.test_env_probe import PROBE, check_view

ASCEND_PROBE = PROBE.replace("exit {code}", """\
srun bash -c 'echo "ascend $SLURM_PROCID dev=$ASCEND_DEVICE_ID rank=$RANK_ID \
size=$RANK_SIZE"'
exit {code}""")
ASCEND = re.compile(r"^ascend (\d+) dev=(\d+) rank=(\d+) size=(\d+)$", re.MULTILINE)


def write_probe(cluster: PlatformCluster, made: oracles.PlatformJob, name: str,
                code: int = 0) -> str:
    script = f"probe-{name}.sh"
    cluster.write(script, ASCEND_PROBE.format(nodes=len(made.order), ran=f"ran-{name}.txt",
                                              code=code))
    return script


def check_instances(made: oracles.PlatformJob, outcome: Outcome, code: int) -> None:
    """Every instance of every container ended with the job's code."""
    for node, log in zip(made.nodes, outcome.logs):
        ended = sorted(INSTANCE_EXIT.findall(log))
        assert ended == [(str(i), str(code)) for i in range(len(node.instances))], log


def check_ascend_view(log: str, nodes: int, cards: int) -> None:
    seen = sorted((int(p), int(d), int(r), int(s)) for p, d, r, s in ASCEND.findall(log))
    assert seen == [(p, p % cards, p, nodes * cards) for p in range(nodes * cards)], log


def test_template_2_two_nodes_two_cards(cluster: PlatformCluster) -> None:
    made = oracles.modelarts("ma", 2, 2)
    outcome = cluster.run(made.nodes, ["-v", write_probe(cluster, made, "ma")])
    assert outcome.codes == [0, 0], outcome.logs
    check_instances(made, outcome, 0)
    check_view(cluster, made, "ma", outcome)
    check_ascend_view(outcome.logs[0], 2, 2)
    assert "run: contract modelarts: ModelArts / Ascend rank table (one instance per card), " \
        "detected from RANK_TABLE_FILE, ASCEND_DEVICE_ID" in outcome.logs[1]
    assert "run: ASCEND_DEVICE_ID=1: the instance with ASCEND_DEVICE_ID=0 runs the job" in \
        outcome.logs[1]


def test_template_1_and_the_scripts_exit_code(cluster: PlatformCluster) -> None:
    made = oracles.modelarts("mb", 3, 2, template=1)
    outcome = cluster.run(made.nodes, [write_probe(cluster, made, "mb", code=3)])
    assert outcome.codes == [3, 3, 3], outcome.logs
    check_instances(made, outcome, 3)
    check_view(cluster, made, "mb", outcome)
    check_ascend_view(outcome.logs[0], 3, 2)


def test_rank_table_read_once_completed(cluster: PlatformCluster) -> None:
    made = oracles.modelarts("mc", 2, 1, status="initializing")
    processes = cluster.start(made.nodes, [write_probe(cluster, made, "mc")])
    time.sleep(3)
    assert cluster.read("ran-mc.txt") == ""
    assert cluster.rewrite_files("jobstart_hccl.json", '"initializing"', '"completed"') == 2
    outcome = cluster.finish(processes, 120)
    assert outcome.codes == [0, 0], outcome.logs
    check_view_once = cluster.read("ran-mc.txt").splitlines()
    assert len(check_view_once) == 1, outcome.logs


def test_rank_table_that_never_completes(cluster: PlatformCluster) -> None:
    made = oracles.modelarts("md", 2, 2, status="initializing")
    outcome = run_bad(cluster, made.nodes)
    line = (f"sbatch-k8s: error: run: the rank table /user/config/jobstart_hccl.json has "
            f"status 'initializing', not 'completed' after {WAIT_S} s")
    for log in outcome.logs:
        assert line in log, log


def test_no_instance_with_device_zero(cluster: PlatformCluster) -> None:
    made = oracles.modelarts("me", 2, 2)
    worker = made.nodes[1]
    made.nodes[1] = worker._replace(instances=worker.instances[1:])
    outcome = run_bad(cluster, made.nodes)
    assert ("no instance with ASCEND_DEVICE_ID=0 started in this container within "
            f"{WAIT_S} s") in outcome.logs[1]
    assert re.search(r"rendezvous at [\d.]+:6819: 1 of 2 nodes \(server_count\) arrived in "
                     "time", outcome.logs[0]), outcome.logs[0]
    check_instances(made._replace(nodes=made.nodes[:1]), outcome._replace(
        logs=outcome.logs[:1]), 1)
    assert outcome.seconds < BOUND_S
