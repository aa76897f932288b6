"""Targets and contracts are named once (parsers.platforms.target_names); every table and reader
that lists them follows those names."""

from __future__ import annotations

from parsers.options import OPTIONS
from parsers.platforms.target_names import (
    CONTRACT_PROFILES,
    DEFAULT_CONTRACT_PROFILE,
    DEFAULT_TARGET,
    NODE_CONTRACTS,
    TARGET_NAMES,
)
from sbatch_k8s.runtime.contract import CONTRACTS
from translators.config import PartitionConfig
from translators.targets import TARGETS


def test_the_traits_table_has_one_row_per_target_in_order() -> None:
    assert tuple(TARGETS) == TARGET_NAMES
    assert all(traits.name == name for name, traits in TARGETS.items())


def test_every_target_is_a_node_contract_and_local_is_one_more() -> None:
    assert CONTRACTS == NODE_CONTRACTS == ("local",) + TARGET_NAMES


def test_partition_keys_choose_from_the_names() -> None:
    keys = PartitionConfig.__dataclass_fields__
    assert keys["target"].default == DEFAULT_TARGET == TARGET_NAMES[0]
    assert keys["contract"].default == DEFAULT_CONTRACT_PROFILE == CONTRACT_PROFILES[0]


def test_k8s_target_help_names_every_target() -> None:
    note = next(o.note for o in OPTIONS if o.long == "k8s-target")
    assert note == "indexed-job (default), jobset, pytorchjob or mpijob"
