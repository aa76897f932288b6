"""Incomplete or inconsistent contracts end with one clear line on every container, within
the bound (``run --wait``), never a hang."""

from __future__ import annotations

import re

from tests.platform import oracles
from tests.platform.harness import Node, PlatformCluster

SCRIPT = "#!/bin/bash\n#SBATCH --nodes=2\necho ran >> bad-ran.txt\nsrun true\n"
WAIT_S = 8
#: The bound a test allows: the wait, plus the start and exit of the containers.
BOUND_S = 90
ERROR_LINE = re.compile(r"^sbatch-k8s: error: .+$", re.MULTILINE)


def run_bad(cluster: PlatformCluster, nodes, *args: str):
    cluster.write("bad.sh", SCRIPT)
    outcome = cluster.run(nodes, ["--wait", str(WAIT_S)] + list(args) + ["bad.sh"],
                          timeout_s=BOUND_S)
    assert None not in outcome.codes, ("a container hung", outcome.logs)
    assert all(code != 0 for code in outcome.codes), outcome.logs
    for node, log in zip(nodes, outcome.logs):
        # One line per container; where the platform starts several instances in it, each
        # instance that fails before one of them acts says it too (the same line).
        lines = ERROR_LINE.findall(log)
        assert len(set(lines)) == 1, log
        assert len(lines) in (1, len(node.instances)), log
        assert "Traceback" not in log, log
    assert cluster.read("bad-ran.txt") == ""
    return outcome


def test_rank_outside_the_count(cluster: PlatformCluster) -> None:
    made = oracles.pytorchjob("out", 2, 1)
    made.nodes[1].env.update(RANK="5", PET_NODE_RANK="5")
    outcome = run_bad(cluster, made.nodes)
    assert "node index 5 is outside 0..1 (2 nodes)" in outcome.logs[1]
    assert f"nodes did not answer within {WAIT_S} s: out-worker-0" in outcome.logs[0]


def test_two_nodes_claiming_one_rank(cluster: PlatformCluster) -> None:
    made = oracles.pytorchjob("twice", 3, 1)
    made.nodes[2].env.update(RANK="1", PET_NODE_RANK="1")
    outcome = run_bad(cluster, made.nodes)
    assert ("the platform makes this container node 1 (twice-worker-0), but its hostname "
            "twice-worker-1 is node 2") in outcome.logs[2]


def test_no_contract_at_all(cluster: PlatformCluster) -> None:
    nodes = [Node("plain-0", {}), Node("plain-1", {})]
    outcome = run_bad(cluster, nodes)
    for log in outcome.logs:
        assert "no platform contract recognised in this container" in log


def test_unknown_contract_name(cluster: PlatformCluster) -> None:
    made = oracles.indexed_job("named", 2, "named")
    outcome = run_bad(cluster, made.nodes, "--contract", "slurmd")
    for log in outcome.logs:
        assert "unknown contract 'slurmd'" in log


def test_a_bad_directive_fails_every_node(cluster: PlatformCluster) -> None:
    made = oracles.indexed_job("directive", 2, "directive")
    cluster.write("bad-directive.sh", "#!/bin/bash\n#SBATCH --nodes=2 --time=bogus\ntrue\n")
    outcome = cluster.run(made.nodes, ["--wait", str(WAIT_S), "bad-directive.sh"],
                          timeout_s=BOUND_S)
    for code, log in zip(outcome.codes, outcome.logs):
        assert code not in (None, 0)
        assert log.strip().splitlines()[-1] == "sbatch: error: Invalid --time specification"


def test_aistation_count_never_arrives(cluster: PlatformCluster) -> None:
    made = oracles.aistation("short", 3, 1, "r-1")
    outcome = run_bad(cluster, made.nodes[:2])
    message = "rendezvous at short-master:6819: 2 of 3 nodes (NNODES) arrived in time"
    for log in outcome.logs:
        assert message in log, log


def test_aistation_container_of_another_run(cluster: PlatformCluster) -> None:
    made = oracles.aistation("mixed", 3, 1, "r-1")
    made.nodes[2].env["RDZV_ID"] = "r-0"
    outcome = run_bad(cluster, made.nodes)
    assert ("rendezvous id 'aistation/r-0' differs from the master's 'aistation/r-1': two "
            "jobs share one master address") in outcome.logs[2]
    assert "2 of 3 nodes (NNODES) arrived in time" in outcome.logs[0]
    assert "2 of 3 nodes (NNODES) arrived in time" in outcome.logs[1]


def test_aistation_one_container_too_many(cluster: PlatformCluster) -> None:
    made = oracles.aistation("many", 3, 1, "r-1")
    for node in made.nodes:
        node.env["NNODES"] = "2"
    cluster.write("many.sh", SCRIPT.replace("bad-ran", "many-ran"))
    outcome = cluster.run(made.nodes, ["--wait", str(WAIT_S), "many.sh"], timeout_s=BOUND_S)
    assert None not in outcome.codes, outcome.logs
    assert cluster.read("many-ran.txt") == "ran\n"
    refused = [log for code, log in zip(outcome.codes, outcome.logs) if code != 0]
    assert len(refused) == 1, outcome.logs
    assert ("more containers than NNODES=2 joined the rendezvous" in refused[0]
            or "cannot reach the rendezvous at many-master:6819 in time" in refused[0])


def test_task_training_two_containers_claim_one_rank(cluster: PlatformCluster) -> None:
    made = oracles.task_training_pytorch("dup", 3, 1)
    made.nodes[2].env["RANK"] = "1"
    outcome = run_bad(cluster, made.nodes)
    # Whichever of the two claimants reaches the master second is refused.
    first, second = (1, 2) if "(dup-1 and dup-2)" in outcome.logs[2] else (2, 1)
    assert f"two containers claim rank 1 (dup-{first} and dup-{second})" in \
        outcome.logs[second], outcome.logs
    assert "2 of 3 nodes (WORLD_SIZE) arrived in time" in outcome.logs[0]
    assert "2 of 3 nodes (WORLD_SIZE) arrived in time" in outcome.logs[first]


def test_tf_config_task_outside_its_replicas(cluster: PlatformCluster) -> None:
    made = oracles.tf_config("tfbad", 2)
    made.nodes[1].env["TF_CONFIG"] = made.nodes[1].env["TF_CONFIG"].replace(
        '"index": 1', '"index": 2')
    outcome = run_bad(cluster, made.nodes)
    assert "TF_CONFIG's task worker 2 is outside its 2 worker replicas" in outcome.logs[1]
    assert f"nodes did not answer within {WAIT_S} s: tfbad-worker-1" in outcome.logs[0]
