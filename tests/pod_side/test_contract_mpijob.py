"""AI Hub's MpiJob, pod side: the launcher's facts from its hostfile, the workers' from what
the launcher passes them, detection, the rsh agent and the line each host runs."""

import shlex

import pytest

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.contracts import contract_named, detect
from sbatch_k8s.runtime.platform.mpijob_hostfile import HOSTS_VARIABLE, forwarded_environment, \
    worker_variables
from sbatch_k8s.runtime.platform.mpijob_launch import remote_command, rsh_agent
from tests.pod_side.test_contract_platforms import container

HOSTFILE = {"/etc/mpi/hostfile": "mj-worker-0.mj.ns.svc slots=8\nmj-worker-1.mj.ns.svc slots=8\n"}
LAUNCHER = {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "K_MPI_JOB_ROLE": "launcher",
            "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10", "NCCL_SOCKET_IFNAME": "en",
            "NVIDIA_VISIBLE_DEVICES": "", "HOSTNAME": "mj-launcher"}


def launcher_facts(files=HOSTFILE, **env):
    seen = container(dict(LAUNCHER, **env), "mj-launcher", files=files)
    row = detect(seen)
    assert row is not None and row.name == "mpijob" and row.launch is not None
    return row.adapter(seen)


def test_launcher_the_hostfile_hosts_are_the_nodes():
    facts = launcher_facts()
    assert (facts.index, facts.count, facts.gpus_per_node) == (None, 2, 8)
    assert facts.peers(2) == (("mj-worker-0", "mj-worker-1"),
                              ("mj-worker-0.mj.ns.svc", "mj-worker-1.mj.ns.svc"))
    assert facts.evidence == ("OMPI_MCA_orte_default_hostfile",)


def test_launcher_slots_from_the_default_when_the_hostfile_has_none():
    facts = launcher_facts({"/etc/mpi/hostfile": "a\nb\n"},
                           OMPI_MCA_orte_set_default_slots="4")
    assert (facts.count, facts.gpus_per_node) == (2, 4)
    assert launcher_facts({"/etc/mpi/hostfile": "a slots=2\nb slots=4\n"}).gpus_per_node is None


def test_launcher_errors():
    with pytest.raises(ContractError, match="names a host twice"):
        launcher_facts({"/etc/mpi/hostfile": "a.x slots=1\na.y slots=1\n"})
    with pytest.raises(ContractError, match="names no host"):
        launcher_facts({"/etc/mpi/hostfile": "# empty\n"})


def test_workers_read_back_what_the_launcher_passes():
    facts = launcher_facts()
    passed = worker_variables(facts)
    worker = container(dict(passed, K_MPI_JOB_ROLE="worker"), "mj-worker-1")
    row = detect(worker)
    assert row is not None and row.name == "mpijob-worker" and row.launch is None
    seen = row.adapter(worker)
    assert (seen.contract, seen.index, seen.count, seen.gpus_per_node, seen.job_key) == (
        "mpijob", 1, 2, 8, facts.job_key)
    assert seen.peers(2) == facts.peers(2)
    with pytest.raises(ContractError, match=r"this container \(mj-launcher\) is not one of"):
        row.adapter(container(passed, "mj-launcher"))
    with pytest.raises(ContractError, match=f"{HOSTS_VARIABLE} and .* are not set"):
        contract_named("mpijob-worker").adapter(container({}, "mj-worker-0"))


def test_horovod_runs_under_mpirun_are_not_a_launcher():
    seen = container(dict(LAUNCHER, OMPI_COMM_WORLD_LOCAL_RANK="0"), "mj-worker-0",
                     files=HOSTFILE)
    row = detect(seen)
    assert row is not None and row.name == "task-training"


def test_the_rsh_agent():
    assert rsh_agent({}) == ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=30"]
    assert rsh_agent({"OMPI_MCA_plm_rsh_agent": "/etc/mpi/kubexec.sh --x 'a b'",
                      "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10"}) == [
        "/etc/mpi/kubexec.sh", "--x", "a b", "-o", "ConnectionAttempts=10"]
    # OpenMPI's alternatives: the first found on PATH.
    assert rsh_agent({"OMPI_MCA_plm_rsh_agent": "no-such-agent-x : sh -e"}) == ["sh", "-e"]


def test_the_line_every_host_runs():
    facts = launcher_facts()
    line = remote_command(facts, LAUNCHER, "/nas/my job", ["-v", "--", "job.sh", "a b"])
    words = shlex.split(line)
    assert words[:4] == ["cd", "/nas/my job", "&&", "exec"]
    assert words[4] == "env" and "python3" in words
    python = words.index("python3")
    assigned = dict(w.split("=", 1) for w in words[5:python])
    assert assigned == dict(forwarded_environment(LAUNCHER), **worker_variables(facts))
    assert "NCCL_SOCKET_IFNAME" in assigned and "K_MPI_JOB_ROLE" not in assigned
    assert not any(k.startswith("OMPI_") or k in ("HOSTNAME", "NVIDIA_VISIBLE_DEVICES")
                   for k in assigned)
    assert words[-7:] == ["run", "--contract", "mpijob-worker", "-v", "--", "job.sh", "a b"]
