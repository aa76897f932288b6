"""Hostfile contracts: the task-training platform's Horovod mode (mpirun starts the command
once per slot; the local rank 0 run becomes the node, the others wait and exit with its
code). AI Hub's MpiJob, whose launcher starts the hosts itself, is in test_mpijob."""

from __future__ import annotations

from tests.platform import oracles
from tests.platform.harness import PlatformCluster
from tests.platform.test_bad_contracts import run_bad
from tests.platform.test_env_probe import run_probe, check_view
from tests.platform.test_modelarts import check_instances


def test_horovod_openmpi_one_run_per_slot(cluster: PlatformCluster) -> None:
    made = oracles.task_training_horovod("hvd", 2, 2)
    outcome = run_probe(cluster, made, "hvd", args=["-v"])
    assert outcome.codes == [0, 0], outcome.logs
    check_instances(made, outcome, 0)
    check_view(cluster, made, "hvd", outcome)
    assert "run: contract task-training: task-training platform, Horovod mode (OpenMPI, " \
        "one run per slot), detected from OMPI_MCA_orte_default_hostfile; facts from " \
        "OMPI_MCA_orte_default_hostfile, OMPI_COMM_WORLD_LOCAL_RANK" in outcome.logs[1]


def test_horovod_mpich_and_the_scripts_exit_code(cluster: PlatformCluster) -> None:
    made = oracles.task_training_horovod("hyd", 3, 2, mpich=True)
    outcome = run_probe(cluster, made, "hyd", code=5)
    assert outcome.codes == [5, 5, 5], outcome.logs
    check_instances(made, outcome, 5)
    check_view(cluster, made, "hyd", outcome)


def test_horovod_missing_hostfile(cluster: PlatformCluster) -> None:
    made = oracles.task_training_horovod("nohf", 2, 2)
    made = made._replace(nodes=[n._replace(files={}) for n in made.nodes])
    outcome = run_bad(cluster, made.nodes)
    for log in outcome.logs:
        assert ("sbatch-k8s: error: run: the hostfile /etc/mpi/hostfile "
                "(OMPI_MCA_orte_default_hostfile) does not exist in this container") in log

