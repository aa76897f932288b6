"""Platform adapters (sbatch_k8s.runtime.platform) without containers: a platform's variables,
hostname and files in, facts out — node index, count, names, addresses, GPUs, master, and
which contract detection picks. The end-to-end runs are in tests/platform."""

from __future__ import annotations

import json
from typing import Dict, Mapping, Optional

import pytest

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.contracts import CONTRACT_NAMES, contract_named, detect
from sbatch_k8s.runtime.platform.facts import Container, job_id_of
from sbatch_k8s.runtime.platform.task_training import read_hostfile


def container(env: Mapping[str, str], hostname: str, fqdn: str = "",
              files: Optional[Dict[str, str]] = None) -> Container:
    def resolve(name: str) -> str:
        raise OSError(-2, "Name or service not known")

    return Container(dict(env), hostname, fqdn or hostname, resolve,
                     lambda path: (files or {}).get(path))


PYTORCHJOB = {"MASTER_ADDR": "llm-master-0", "PET_MASTER_ADDR": "llm-master-0",
              "MASTER_PORT": "23456", "PET_MASTER_PORT": "23456", "WORLD_SIZE": "24",
              "RANK": "2", "PET_NODE_RANK": "2", "PET_NPROC_PER_NODE": "8", "PET_NNODES": "3"}
TRAINJOB = {"PET_NNODES": "4", "PET_NPROC_PER_NODE": "2", "PET_NODE_RANK": "3",
            "PET_MASTER_ADDR": "tj-node-0-0.tj", "PET_MASTER_PORT": "29500"}
VOLCANO = {"VC_MASTER_HOSTS": "vj-master-0.vj", "VC_MASTER_NUM": "1",
           "VC_WORKER_HOSTS": "vj-worker-0.vj,vj-worker-1.vj", "VC_WORKER_NUM": "2",
           "VC_TASK_INDEX": "1", "VK_TASK_INDEX": "1"}
TF = {"TF_CONFIG": json.dumps({"cluster": {"worker": ["tf-worker-0.ns.svc:2222",
                                                      "tf-worker-1.ns.svc:2222"],
                                           "chief": ["tf-chief-0.ns.svc:2222"]},
                               "task": {"type": "worker", "index": 0}})}

CASES = [
    # name, env, hostname, fqdn, files, contract, index, count, names, addresses, gpus
    ("pytorchjob", PYTORCHJOB, "llm-worker-1", "", None, "pytorchjob", 2, 3,
     ("llm-master-0", "llm-worker-0", "llm-worker-1"),
     ("llm-master-0", "llm-worker-0", "llm-worker-1"), 8),
    ("pytorchjob <=1.6", {"MASTER_ADDR": "old-master-0", "MASTER_PORT": "23456",
                          "WORLD_SIZE": "2", "RANK": "1"}, "old-worker-0", "", None,
     "pytorchjob", 1, 2, ("old-master-0", "old-worker-0"), ("old-master-0", "old-worker-0"),
     None),
    ("aihub: WORLD_SIZE counts GPUs", dict(PYTORCHJOB, PET_NPROC_PER_NODE="auto"),
     "llm-master-0", "", None, "pytorchjob", 2, 3, None, None, 8),
    ("trainjob", TRAINJOB, "tj-node-0-3", "tj-node-0-3.tj.default.svc.cluster.local", None,
     "trainjob", 3, 4, tuple(f"tj-node-0-{i}" for i in range(4)),
     tuple(f"tj-node-0-{i}.tj" for i in range(4)), 2),
    ("indexed-job", {"JOB_COMPLETION_INDEX": "1"}, "ix-1",
     "ix-1.svc-a.default.svc.cluster.local", None, "indexed-job", 1, None, None, None, None),
    ("jobset", {"JOB_COMPLETION_INDEX": "0"}, "js-node-0-0",
     "js-node-0-0.js.default.svc.cluster.local", None, "jobset", 0, None, None, None, None),
    ("volcano", VOLCANO, "vj-worker-1", "vj-worker-1.vj.default.svc.cluster.local", None,
     "volcano", 2, 3, ("vj-master-0", "vj-worker-0", "vj-worker-1"),
     ("vj-master-0.vj", "vj-worker-0.vj", "vj-worker-1.vj"), None),
    ("tf-config", TF, "tf-worker-0", "", None, "tf-config", 1, 3,
     ("tf-chief-0", "tf-worker-0", "tf-worker-1"),
     ("tf-chief-0.ns.svc", "tf-worker-0.ns.svc", "tf-worker-1.ns.svc"), None),
    ("task-training deepspeed", {"RANK": "1", "WORLD_SIZE": "2", "SLOTS": "4",
                                 "MASTER_ADDR": "d-0", "MASTER_PORT": "2222"}, "d-1", "",
     {"/job/hostfile": "d-0 slots=4\nd-1 slots=4\n"}, "task-training", 1, 2, ("d-0", "d-1"),
     ("d-0", "d-1"), 4),
    ("task-training pytorch", {"RANK": "1", "WORLD_SIZE": "3", "SLOTS": "1",
                               "MASTER_ADDR": "p-master", "MASTER_PORT": "2222"}, "p-1", "",
     None, "task-training", 1, 3, None, None, 1),
    ("aistation", {"MASTER_ADDR": "a-master", "MASTER_PORT": "29500", "NNODES": "4",
                   "NPROC_PER_NODE": "8", "RDZV_ID": "x"}, "a-w", "", None, "aistation",
     None, 4, None, None, 8),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_detected_facts(case):
    _, env, hostname, fqdn, files, contract, index, count, names, addresses, gpus = case
    seen = container(env, hostname, fqdn, files)
    row = detect(seen)
    assert row is not None and row.name == contract
    facts = row.adapter(seen)
    assert (facts.contract, facts.index, facts.count, facts.gpus_per_node) == (
        contract, index, count, gpus)
    if names is not None:
        assert facts.peers(count) == (names, addresses)


def test_indexed_job_and_jobset_names_come_from_the_fqdn_subdomain():
    facts = contract_named("indexed-job").adapter(container(
        {"JOB_COMPLETION_INDEX": "1"}, "ix-1", "ix-1.svc-a.default.svc.cluster.local"))
    assert facts.peers(3) == (("ix-0", "ix-1", "ix-2"),
                              ("ix-0.svc-a", "ix-1.svc-a", "ix-2.svc-a"))
    facts = contract_named("jobset").adapter(container(
        {"JOB_COMPLETION_INDEX": "1"}, "js-node-0-1", "js-node-0-1.js.default.svc"))
    assert facts.peers(2) == (("js-node-0-0", "js-node-0-1"),
                              ("js-node-0-0.js", "js-node-0-1.js"))


def test_an_indexed_job_named_like_a_jobset_is_an_indexed_job():
    seen = container({"JOB_COMPLETION_INDEX": "0"}, "llm-9-0",
                     "llm-9-0.llm-9-svc.default.svc.cluster.local")
    assert detect(seen).name == "indexed-job"  # type: ignore[union-attr]


def test_job_id_is_a_stable_number_per_job():
    assert job_id_of("pytorchjob/llm") == job_id_of("pytorchjob/llm")
    assert job_id_of("pytorchjob/llm") != job_id_of("pytorchjob/llm2")
    assert 1_000_000 <= job_id_of("x") < 10_000_000


def test_hostfiles_of_both_mpi_flavours():
    assert read_hostfile("a slots=4\n# c\n\nb slots=2 max_slots=8\n", "f") == [
        ("a", 4), ("b", 2)]
    assert read_hostfile("a:4\nb\n", "f") == [("a", 4), ("b", None)]
    with pytest.raises(ContractError, match="names no host"):
        read_hostfile("\n# nothing\n", "/job/hostfile")


@pytest.mark.parametrize("contract, env, hostname, message", [
    ("pytorchjob", {"PET_NNODES": "2"}, "x-worker-0",
     "neither PET_NODE_RANK nor RANK is set"),
    ("pytorchjob", {"RANK": "1"}, "x-worker-0", "neither PET_NNODES nor WORLD_SIZE is set"),
    ("pytorchjob", {"RANK": "one", "WORLD_SIZE": "2"}, "x-worker-0",
     "RANK='one' is not a node rank"),
    ("pytorchjob", {"RANK": "1", "PET_NNODES": "1:4"}, "x-worker-0",
     "PET_NNODES='1:4' is an elastic range"),
    ("volcano", {"VC_TASK_INDEX": "0"}, "v-a-0", "no VC_<TASK>_HOSTS variable is set"),
    ("volcano", dict(VOLCANO, VC_WORKER_NUM="3"), "vj-worker-1",
     "VC_WORKER_HOSTS lists 2 hosts but VC_WORKER_NUM is 3"),
    ("volcano", VOLCANO, "other-0", "hostname 'other-0' is in no VC_<TASK>_HOSTS list"),
    ("volcano", dict(VOLCANO, VC_TASK_INDEX="0"), "vj-worker-1",
     "VC_TASK_INDEX=0 does not point at this pod (vj-worker-1)"),
    ("volcano", dict(VOLCANO, VC_TASK_INDEX="5"), "vj-worker-1",
     "VC_TASK_INDEX=5 does not point at this pod (vj-worker-1)"),
    ("indexed-job", {"JOB_COMPLETION_INDEX": "2"}, "ix-1",
     "hostname 'ix-1' does not end with the completion index 2"),
    ("aistation", {"MASTER_ADDR": "m"}, "a", "NNODES is not set"),
    ("tf-config", {"TF_CONFIG": "{}"}, "t", "TF_CONFIG is not a cluster and task"),
    ("task-training", {"RANK": "0", "WORLD_SIZE": "2", "SLOTS": "1"}, "t-0",
     "MASTER_ADDR is not set"),
    ("task-training", {"RANK": "0", "WORLD_SIZE": "3", "SLOTS": "1"}, "t-0",
     "WORLD_SIZE=3 but /job/hostfile names 2 hosts"),
])
def test_contract_errors(contract, env, hostname, message):
    files = {"/job/hostfile": "t-0\nt-1\n"} if "hostfile" in message else None
    with pytest.raises(ContractError) as caught:
        contract_named(contract).adapter(container(env, hostname, files=files))
    assert message in str(caught.value)


def test_the_identity_checks_the_hostname_against_the_rank():
    facts = contract_named("pytorchjob").adapter(container(PYTORCHJOB, "llm-worker-0"))
    with pytest.raises(ContractError, match="node 2 \\(llm-worker-1\\), but its hostname "
                                            "llm-worker-0 is node 1"):
        facts.identity(3, 2, "llm-worker-0", lambda n: "127.0.0.9")
    identity = facts.identity(3, 2, "llm-worker-1", lambda n: "127.0.0.9")
    assert (identity.name, identity.bind_host) == ("llm-worker-1", "127.0.0.9")


def test_every_name_is_known_and_unknown_names_are_refused():
    assert set(CONTRACT_NAMES) >= {"pytorchjob", "aihub", "dlc", "trainjob", "volcano",
                                   "jobset", "indexed-job", "aistation", "task-training",
                                   "tf-config"}
    with pytest.raises(ContractError, match="unknown contract 'slurmd'"):
        contract_named("slurmd")
    assert detect(container({}, "plain")) is None


HOROVOD_FILES = {"/etc/mpi/hostfile": "h-0 slots=4\nh-1.h.svc slots=4\n"}


def test_horovod_mode_one_run_per_slot():
    seen = container({"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
                      "OMPI_COMM_WORLD_LOCAL_RANK": "3", "OMPI_COMM_WORLD_RANK": "7"},
                     "h-1", files=HOROVOD_FILES)
    row = detect(seen)
    assert row is not None and row.name == "task-training"
    facts = row.adapter(seen)
    assert (facts.index, facts.count, facts.gpus_per_node) == (1, 2, 4)
    assert facts.peers(2) == (("h-0", "h-1"), ("h-0", "h-1.h.svc"))
    assert facts.instance == ("OMPI_COMM_WORLD_LOCAL_RANK", 3)
    mpich = container({"HYDRA_HOST_FILE": "/etc/mpi/mpich_hostfile", "MPI_LOCALRANKID": "0"},
                      "m-0", files={"/etc/mpi/mpich_hostfile": "m-0:2\nm-1:2\n"})
    facts = contract_named("task-training").adapter(mpich)
    assert (facts.index, facts.count, facts.gpus_per_node, facts.instance) == (
        0, 2, 2, ("MPI_LOCALRANKID", 0))


@pytest.mark.parametrize("env, hostname, files, message", [
    ({"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
      "OMPI_COMM_WORLD_LOCAL_RANK": "0"}, "h-0", None,
     "the hostfile /etc/mpi/hostfile (OMPI_MCA_orte_default_hostfile) does not exist"),
    ({"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
      "OMPI_COMM_WORLD_LOCAL_RANK": "0"}, "other", HOROVOD_FILES,
     "this container (other) is not in the hostfile /etc/mpi/hostfile (h-0, h-1)"),
    ({"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile"}, "launcher", None,
     "the hostfile /etc/mpi/hostfile (OMPI_MCA_orte_default_hostfile) does not exist in this "
     "container (an MpiJob's hostfile is on its launcher only)"),
])
def test_hostfile_contract_errors(env, hostname, files, message):
    seen = container(env, hostname, files=files)
    row = detect(seen)
    assert row is not None
    with pytest.raises(ContractError) as caught:
        row.adapter(seen)
    assert message in str(caught.value)
