"""The one table of platform variables (parsers.platforms.contract_facts), both directions: every
row that carries a Slurm fact reads back, through the adapters' reader
(sbatch_k8s.runtime.platform.variables), the fact its profile made it from; the adapters read the
profiles' rows; the reader's one-line errors; no adapter spells a table variable's name itself."""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Set, Tuple

import pytest

from parsers.platforms import contract_facts
from parsers.platforms.contract_facts import NODE_COUNT, NODE_INDEX, PROCS_PER_NODE, READINGS, \
    VOLCANO_TASK, Variable, node_facts, volcano_hosts, volcano_num, volcano_task
from parsers.platforms.contract_profiles import PROFILE_NAMES, PROFILES, profile_environment
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform import variables as reader_module
from sbatch_k8s.runtime.platform.variables import facts_from_environment

#: The contract whose reading an adapter uses, where the names differ.
READ_WITH = {"aihub": "pytorchjob"}
PLAIN: List[Tuple[str, Variable]] = [(name, row) for name in PROFILE_NAMES
                                     for row in PROFILES[name].variables if row.fact]


def _shapes() -> List[Tuple[int, int, int, bool]]:
    """Node count, node index, GPUs per node, and whether addresses and a master are set."""
    return [(count, index, gpus, named) for count in (1, 2, 3, 7) for index in range(count)
            for gpus in (0, 1, 4) for named in (False, True)]


@pytest.mark.parametrize("profile, row", PLAIN, ids=[f"{p}:{r.name}" for p, r in PLAIN])
def test_every_plain_row_reads_back_the_fact_it_was_made_from(profile: str,
                                                              row: Variable) -> None:
    assert row.fact is not None
    for count, index, gpus, named in _shapes():
        names = [f"job-{i}" for i in range(count)]
        facts = node_facts(index, names, gpus, 29400 + count, 4000 + index,
                           [f"{n}.svc" for n in names] if named else (),
                           "job-0.svc" if named else "", "/spool/contract",
                           [[2 * i + 1] * max(gpus, 1) for i in range(count)] if named else ())
        env = profile_environment(profile, facts)
        seen = facts_from_environment((row,), env)
        assert seen.get(row.fact) == row.fact.of(facts), (count, index, gpus, named, env)
        assert seen.variable(row.fact) == row.name


def test_each_adapter_reads_its_profiles_rows() -> None:
    """A profile's plain rows are in its contract's reading (Volcano's per-task lists the
    adapter finds by their pattern), and the reading's rows are the table's."""
    table = {id(v) for v in vars(contract_facts).values() if isinstance(v, Variable)}
    for contract, rows in READINGS.items():
        assert all(id(row) in table and row.fact for row in rows), contract
    for profile, row in PLAIN:
        reading = READINGS[READ_WITH.get(PROFILES[profile].reads_as,
                                         PROFILES[profile].reads_as)]
        by_pattern = volcano_task(row.name) or row.name == volcano_num(VOLCANO_TASK)
        assert row in reading or by_pattern, (profile, row.name)
    assert volcano_task(volcano_hosts("MASTER")) == "MASTER"
    assert volcano_task("VC_TASK_INDEX") is None and volcano_task("VC_HOSTS") is None


def test_the_first_row_set_wins_and_reads_in_its_own_words() -> None:
    seen = facts_from_environment("pytorchjob", {"RANK": "1", "PET_NODE_RANK": "2",
                                                 "WORLD_SIZE": "3"})
    assert (seen.get(NODE_INDEX), seen.variable(NODE_INDEX)) == (2, "PET_NODE_RANK")
    assert (seen.get(NODE_COUNT), seen.variable(NODE_COUNT)) == (3, "WORLD_SIZE")
    assert seen.get(PROCS_PER_NODE) is None
    with pytest.raises(ContractError, match="^RANK='x' is not a node rank$"):
        facts_from_environment("task-training", {"RANK": "x"}).require(NODE_INDEX)
    with pytest.raises(ContractError, match="^SLOTS='0' is not a slot count$"):
        facts_from_environment("task-training", {"SLOTS": "0"}).get(PROCS_PER_NODE)


@pytest.mark.parametrize("value, count", [("4", 4), (" 4 ", 4), ("4:4", 4), ("4: 4", 4)])
def test_an_elastic_row_takes_a_fixed_range(value: str, count: int) -> None:
    assert facts_from_environment("trainjob", {"PET_NNODES": value}).get(NODE_COUNT) == count


def test_an_elastic_range_and_a_lenient_row() -> None:
    seen = facts_from_environment("trainjob", {"PET_NNODES": "1:4",
                                               "PET_NPROC_PER_NODE": "auto"})
    with pytest.raises(ContractError, match="^PET_NNODES='1:4' is an elastic range; platform "
                                            "mode runs a fixed number of nodes"):
        seen.get(NODE_COUNT)
    assert seen.get(PROCS_PER_NODE) is None and seen.variable(PROCS_PER_NODE) is None
    with pytest.raises(ContractError, match="^WORLD_SIZE='2:2' is not a node count$"):
        facts_from_environment("task-training", {"WORLD_SIZE": "2:2"}).get(NODE_COUNT)


def test_an_unset_fact_names_its_variables() -> None:
    with pytest.raises(ContractError, match="^neither PET_NODE_RANK nor RANK is set$"):
        facts_from_environment("pytorchjob", {}).require(NODE_INDEX)
    with pytest.raises(ContractError, match="^VC_TASK_INDEX is not set$"):
        facts_from_environment("volcano", {}).require(NODE_INDEX)
    with pytest.raises(ContractError, match="^NNODES, please$"):
        facts_from_environment("aistation", {}).require(NODE_COUNT, "NNODES, please")


def _string_constants(path: str) -> Set[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_no_adapter_spells_a_table_variable_itself() -> None:
    """Every name of the table is spelled once, in the table (or a profile's file row)."""
    names: Dict[str, str] = {v.name: k for k, v in vars(contract_facts).items()
                             if isinstance(v, Variable)}
    names.update({contract_facts.TF_CONFIG: "TF_CONFIG"})
    names.update({f.named_by: f.name for p in PROFILES.values() for f in p.files
                  if f.named_by})
    platform = os.path.dirname(reader_module.__file__)
    for module in sorted(os.listdir(platform)):
        if module.endswith(".py"):
            spelled = _string_constants(os.path.join(platform, module)) & set(names)
            assert not spelled, (module, spelled)
