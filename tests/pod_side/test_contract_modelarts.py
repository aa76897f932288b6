"""ModelArts / Ascend rank tables (both templates), one acting instance per container, and
the platform's per-task variables in Slurm's layout — without containers (end to end:
tests/platform/test_modelarts.py)."""

from __future__ import annotations

import json
import threading
import time
from typing import Dict, Optional

import pytest

from parsers.platforms.contract_variables import TaskView, contract_task_variables
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.contracts import detect
from sbatch_k8s.runtime.platform.facts import Container, NotReady
from sbatch_k8s.runtime.platform.instances import Actor, wait_for_actor
from sbatch_k8s.runtime.platform.modelarts import modelarts, rank_table_path

TEMPLATE_2 = {"group_count": "1", "group_list": [{
    "device_count": "4", "group_name": "job-trainjob", "instance_count": "2",
    "instance_list": [
        {"devices": [{"device_id": "4", "device_ip": "192.1.10.254"},
                     {"device_id": "5", "device_ip": "192.1.10.253"}],
         "pod_name": "jobx-job-trainjob-0", "server_id": "192.168.0.25"},
        {"devices": [{"device_id": "4", "device_ip": "192.1.11.254"},
                     {"device_id": "5", "device_ip": "192.1.11.253"}],
         "pod_name": "jobx-job-trainjob-1", "server_id": "192.168.0.26"}]}],
    "status": "completed"}
TEMPLATE_1 = {"server_count": "2", "server_list": [
    {"device": [{"device_id": "0", "device_ip": "10.0.0.1", "rank_id": "0"}],
     "server_id": "192.168.0.25", "container_ip": "172.16.0.5"},
    {"device": [{"device_id": "0", "device_ip": "10.0.0.2", "rank_id": "1"}],
     "server_id": "192.168.0.26", "container_ip": "172.16.0.6"}],
    "status": "completed", "version": "1.0"}
PATH = "/user/config/jobstart_hccl.json"


def container(env: Dict[str, str], table: Optional[object], hostname: str = "h",
              path: str = PATH) -> Container:
    text = table if isinstance(table, str) or table is None else json.dumps(table)
    return Container(dict(env), hostname, hostname, lambda n: "127.0.0.1",
                     lambda p: text if p == path else None)


def test_template_2_as_modelarts_writes_it():
    seen = container({"RANK_TABLE_FILE": "/user/config", "ASCEND_DEVICE_ID": "1",
                      "RANK_ID": "3", "RANK_SIZE": "4"}, TEMPLATE_2)
    assert detect(seen).name == "modelarts"  # type: ignore[union-attr]
    facts = modelarts(seen)
    assert (facts.index, facts.count, facts.gpus_per_node, facts.master_addr) == (
        1, 2, 2, "192.168.0.25")
    assert facts.instance == ("ASCEND_DEVICE_ID", 1) and facts.rendezvous
    assert facts.task_variables == "modelarts"


def test_template_1_with_container_ips_and_the_file_named_directly():
    path = "/user/serverid/devindex/config/hccl.json"
    facts = modelarts(container({"RANK_TABLE_FILE": path, "ASCEND_DEVICE_ID": "0",
                                 "RANK_ID": "1"}, TEMPLATE_1, path=path))
    assert (facts.index, facts.count, facts.gpus_per_node, facts.master_addr) == (
        1, 2, 1, "172.16.0.5")
    assert rank_table_path("/user/config") == PATH


def test_without_rank_id_the_pod_name_finds_the_server():
    facts = modelarts(container({"RANK_TABLE_FILE": "/user/config", "ASCEND_DEVICE_ID": "0"},
                                TEMPLATE_2, hostname="jobx-job-trainjob-1"))
    assert facts.index == 1


@pytest.mark.parametrize("table", [None, '{"status": "comp', dict(TEMPLATE_2,
                                                                  status="initializing")])
def test_a_table_not_yet_complete_is_not_ready(table):
    with pytest.raises(NotReady):
        modelarts(container({"RANK_TABLE_FILE": "/user/config", "ASCEND_DEVICE_ID": "0",
                             "RANK_ID": "0"}, table))


@pytest.mark.parametrize("env, message", [
    ({"RANK_ID": "0", "RANK_SIZE": "8"},
     "RANK_SIZE=8 but the rank table /user/config/jobstart_hccl.json lists 4 devices"),
    ({"RANK_ID": "9"}, "RANK_ID=9 is on no server of the rank table"),
    ({}, "RANK_ID is not set and no server of the rank table is named h"),
    ({"RANK_ID": "0", "ASCEND_DEVICE_ID": "2"}, "ASCEND_DEVICE_ID=2 but this server has 2"),
])
def test_inconsistent_contracts(env, message):
    full = dict({"RANK_TABLE_FILE": "/user/config", "ASCEND_DEVICE_ID": "0"}, **env)
    with pytest.raises(ContractError) as caught:
        modelarts(container(full, TEMPLATE_2))
    assert message in str(caught.value) and not isinstance(caught.value, NotReady)


def test_waiting_instances_get_the_acting_instances_code(tmp_path):
    actor = Actor("job-a", str(tmp_path))
    codes = []
    waiters = [threading.Thread(target=lambda: codes.append(
        wait_for_actor("job-a", "X=0", 30, str(tmp_path)))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.3)
    actor.open()
    time.sleep(0.3)
    actor.finish(7)
    for waiter in waiters:
        waiter.join(30)
    assert codes == [7, 7, 7]
    # An instance starting after the job ended still learns the code.
    assert wait_for_actor("job-a", "X=0", 1, str(tmp_path)) == 7


def test_a_missing_acting_instance_ends_the_wait_in_time(tmp_path):
    with pytest.raises(ContractError, match="no instance with ASCEND_DEVICE_ID=0 started in "
                                            "this container within 0.3 s"):
        wait_for_actor("job-b", "ASCEND_DEVICE_ID=0", 0.3, str(tmp_path))


def test_modelarts_task_variables_in_slurms_layout():
    # 8 tasks sharing a node's 8 cards: each its local rank's card.
    assert contract_task_variables("modelarts", TaskView(11, 16, 3, 1, range(8))) == {
        "ASCEND_DEVICE_ID": "3", "RANK_ID": "11", "RANK_SIZE": "16"}
    # --gpus-per-task=1: the task's own card.
    assert contract_task_variables("modelarts", TaskView(1, 2, 1, 0, [5]))[
        "ASCEND_DEVICE_ID"] == "5"
    assert contract_task_variables("modelarts", TaskView(0, 1, 0, 0, []))[
        "ASCEND_DEVICE_ID"] == "0"
    assert contract_task_variables(None, TaskView(0, 1, 0, 0, [])) == {}
