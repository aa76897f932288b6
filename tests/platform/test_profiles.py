"""Every contract profile, read back through its platform-mode adapter, gives the Slurm view
it was made from: node index, node count, node names, master address and port, GPUs per
node. The profile's files are read where its variables point (the runtime's copy) and, for a
file scripts know only by its fixed path (``/job/hostfile``), there."""

from __future__ import annotations

import json
import os
from typing import Dict, Mapping, Optional

import pytest

from parsers.platforms.contract_profiles import (
    PROFILE_NAMES,
    PROFILES,
    profile_environment,
    profile_files,
    profile_variable_names,
)
from parsers.platforms.contract_facts import node_facts
from parsers.platforms.contract_variables import TASK_VARIABLES
from parsers.platforms.platform_names import PLATFORM_VARIABLES, SLURM_SET
from parsers.platforms.target_names import CONTRACT_PROFILES, DEFAULT_CONTRACT_PROFILE
from sbatch_k8s.runtime.platform.contracts import CONTRACT_NAMES, contract_named, detect
from sbatch_k8s.runtime.platform.facts import Container

NAMES = ("llm-master-0", "llm-worker-0", "llm-worker-1")
ADDRESSES = tuple(f"{name}.llm" for name in NAMES)
FILES_DIR = "/spool/contract"
#: Detection cannot tell AI Hub's PyTorchJob from Kubeflow's (the same variables).
DETECTED_AS = {"aihub": "pytorchjob"}


def _container(env: Mapping[str, str], hostname: str,
               files: Mapping[str, str]) -> Container:
    return Container(env, hostname, hostname, lambda name: "127.0.0.1", files.get)


def _files(profile: str, gpus: int) -> Dict[str, str]:
    """Path → text of the profile's files: the runtime's copy, and the fixed path."""
    facts = node_facts(0, NAMES, gpus, 29511, 4242, ADDRESSES, "", FILES_DIR)
    found: Dict[str, str] = {}
    for file, text in profile_files(profile, facts).items():
        found[facts.path_of(file)] = text
        if file.fixed_path:
            found[file.fixed_path] = text
    return found


@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("gpus", [0, 4])
def test_a_profile_reads_back_as_the_same_slurm_view(profile: str, gpus: int) -> None:
    files = _files(profile, gpus)
    reads_as = PROFILES[profile].reads_as
    for index, hostname in enumerate(NAMES):
        facts = node_facts(index, NAMES, gpus, 29511, 4242, ADDRESSES, "", FILES_DIR)
        env = profile_environment(profile, facts)
        container = _container(env, hostname, files)
        found = detect(container)
        assert found is not None and found.name == DETECTED_AS.get(profile, reads_as), env
        read = contract_named(reads_as).adapter(container)
        assert read.count == len(NAMES)
        if read.rendezvous and read.index is None:  # AIStation: ranks agreed at the master
            assert read.master_addr == NAMES[0]
        else:
            assert read.index == index
        if not read.rendezvous:
            assert read.peers(len(NAMES))[0] == NAMES
        if read.master_addr is not None:
            assert read.master_addr in (NAMES[0], ADDRESSES[0])
            assert read.master_port in (None, 29511)
        if read.gpus_per_node is not None:
            assert read.gpus_per_node == max(gpus, 1)


@pytest.mark.parametrize("profile", [p for p in PROFILE_NAMES if PROFILES[p].files])
def test_variables_name_the_runtime_copy_of_the_files(profile: str) -> None:
    facts = node_facts(1, NAMES, 2, 29500, 7, ADDRESSES, "", FILES_DIR)
    env = profile_environment(profile, facts)
    for file in PROFILES[profile].files:
        copy = os.path.join(FILES_DIR, file.name)
        if file.named_by:
            named = env[file.named_by]
            assert copy in (named, os.path.join(named, file.name)), env
        else:  # scripts know it by the platform's path only
            assert file.fixed_path and file.fixed_path.startswith("/")


def test_the_file_based_profiles_write_what_the_platforms_write() -> None:
    facts = node_facts(2, NAMES, 2, 2222, 7, ADDRESSES, "", FILES_DIR)
    deepspeed = profile_files("task-training-deepspeed", facts)
    assert [(f.fixed_path, text) for f, text in deepspeed.items()] == [
        ("/job/hostfile", "llm-master-0 slots=2\nllm-worker-0 slots=2\nllm-worker-1 slots=2\n")]
    horovod = {f.named_by: text for f, text in profile_files("task-training-horovod",
                                                             facts).items()}
    assert horovod["HYDRA_HOST_FILE"] == "llm-master-0:2\nllm-worker-0:2\nllm-worker-1:2\n"
    tf = json.loads(profile_environment("task-training-tensorflow", facts)["TF_CONFIG"])
    assert tf == {"cluster": {"worker": [f"{n}:2222" for n in NAMES]},
                  "task": {"type": "worker", "index": 2}, "environment": "cloud"}
    (table,) = profile_files("modelarts", facts).values()
    rank_table = json.loads(table)
    assert rank_table["status"] == "completed"
    servers = rank_table["group_list"][0]["instance_list"]
    assert [(s["pod_name"], s["server_id"], [d["device_id"] for d in s["devices"]])
            for s in servers] == [(n, a, ["0", "1"]) for n, a in zip(NAMES, ADDRESSES)]
    assert profile_environment("modelarts", facts) == {
        "RANK_TABLE_FILE": FILES_DIR, "ASCEND_DEVICE_ID": "0", "RANK_ID": "4",
        "RANK_SIZE": "6"}


def test_one_list_of_names_drives_the_table_and_the_adapters() -> None:
    assert CONTRACT_PROFILES[0] == DEFAULT_CONTRACT_PROFILE
    assert set(PROFILES) == set(PROFILE_NAMES) == set(CONTRACT_PROFILES[1:])
    for row in PROFILES.values():
        assert row.reads_as in CONTRACT_NAMES, row.name
        assert row.task_variables is None or row.task_variables in TASK_VARIABLES


def test_the_lint_knows_who_sets_the_torch_style_variables() -> None:
    """The pitfall rules name the Slurm way for a platform's rank and count variables."""
    for name in profile_variable_names("pytorchjob") + profile_variable_names("aistation"):
        known: Optional[object] = PLATFORM_VARIABLES.get(name) or SLURM_SET.match(name) or \
            name.startswith("PET_MASTER")
        assert known, name


def test_the_slurm_profile_adds_nothing() -> None:
    facts = node_facts(0, NAMES, 1, 29500, 1)
    assert profile_environment("slurm", facts) == {} == profile_files("slurm", facts)
    assert profile_variable_names("slurm") == ()
