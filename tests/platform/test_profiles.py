"""Every contract profile, read back through its platform-mode adapter, gives the Slurm view
it was made from: node index, node count, master address and port, GPUs per node."""

from __future__ import annotations

import pytest

from parsers.contract_profiles import PROFILE_NAMES, node_facts, profile_environment
from sbatch_k8s.runtime.platform.contracts import contract_named, detect
from sbatch_k8s.runtime.platform.facts import Container

NAMES = ("llm-master-0", "llm-worker-0", "llm-worker-1")


def _container(env, hostname: str) -> Container:
    return Container(env, hostname, hostname, lambda name: "127.0.0.1", lambda path: None)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("gpus", [0, 4])
def test_a_profile_reads_back_as_the_same_slurm_view(profile: str, gpus: int) -> None:
    for index, hostname in enumerate(NAMES):
        facts = node_facts(index, NAMES, gpus, 29511, 4242)
        env = profile_environment(profile, facts)
        container = _container(env, hostname)
        found = detect(container)
        assert found is not None and found.name in (profile, "pytorchjob"), env
        read = contract_named(profile).adapter(container)
        assert read.count == len(NAMES)
        if read.rendezvous and read.index is None:  # AIStation: ranks agreed at the master
            assert read.master_addr == NAMES[0]
        else:
            assert read.index == index
        if not read.rendezvous:
            assert read.peers(len(NAMES))[0] == NAMES
        if read.master_addr is not None:
            assert read.master_addr == NAMES[0]
            assert read.master_port in (None, 29511)
        if read.gpus_per_node is not None:
            assert read.gpus_per_node == max(gpus, 1)


def test_the_slurm_profile_adds_nothing() -> None:
    assert profile_environment("slurm", node_facts(0, NAMES, 1, 29500, 1)) == {}
