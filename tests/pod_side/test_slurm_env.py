"""The SLURM_* environment of the batch script and of srun's tasks (parsers.slurm_env) against
real Slurm 22.05 (tests/data/real-slurm/envprobe*, slurm-observations/SUMMARY.md
topic 1, reference/slurm.md §3, §10.4-10.5).

Inputs are what the pods get: the job description of a submitted job (``job.json``), the node
names, and for tasks the step's layout — no runtime, no I/O.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Tuple

import pytest

from parsers.allocation import allocate
from parsers.slurm_env import (
    batch_environment,
    inherited_environment,
    job_environment,
    run_length,
    step_environment,
    task_environment,
)
from parsers.step_layout import layout_step
from parsers.steps import parse_srun
from tests.conformance.differences import INTENDED
from tests.data import REAL_SLURM_RECORDINGS
from tests.pod_side.support import CONTEXT, SHAPE, describe, node_names, submit, words

LAUNCH_HOST, LAUNCH_PORT, UMASK = "127.0.0.1", 41849, "0022"
GPU_VARS = ("SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK", "SLURM_JOB_GPUS",
            "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE", "CUDA_VISIBLE_DEVICES",
            "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK")


def batch_env(args: str, **kwargs) -> Dict[str, str]:
    desc = describe(args, **kwargs)
    return batch_environment(desc, node_names(desc["node_count"]))


def task_envs(args: str, srun: str = "", **kwargs) -> Dict[int, Dict[str, str]]:
    """Every task's whole environment for ``srun <srun>`` in the job: what it inherits of
    srun's own (the batch environment), then the step's and the task's variables, as the
    runtime composes them."""
    desc = describe(args, **kwargs)
    names = node_names(desc["node_count"])
    batch = batch_environment(desc, names)
    request = parse_srun(words(srun) + ["env"], batch)
    layout = layout_step(request, names, desc["cpus_per_node"], desc["job_id"])
    step = step_environment(desc, names, layout, request, 0, LAUNCH_HOST, LAUNCH_PORT, UMASK)
    tasks = {}
    for ranks in layout.ranks:
        for rank in ranks:
            env = inherited_environment(batch, desc)
            env.update(step)
            env.update(task_environment(desc, names, layout, request, rank))
            tasks[rank] = env
    return tasks


def pick(env: Mapping[str, str], names=GPU_VARS) -> Dict[str, str]:
    return {k: env[k] for k in names if k in env}


# -- the recorded 2-node x 2-task job ----------------------------------------------------------

def _recorded() -> Tuple[Dict[str, str], Dict[int, Dict[str, str]]]:
    batch_file = REAL_SLURM_RECORDINGS / "envprobe-batch.env"
    tasks_file = REAL_SLURM_RECORDINGS / "envprobe.out"
    batch = dict(line.split("=", 1) for line in batch_file.read_text().splitlines()
                 if "=" in line)
    tasks: Dict[int, Dict[str, str]] = {}
    for line in tasks_file.read_text().splitlines():
        label, _, assignment = line.partition(": ")
        name, _, value = assignment.partition("=")
        tasks.setdefault(int(label), {})[name] = value
    return batch, tasks


def _normalise(env: Mapping[str, str]) -> Dict[str, str]:
    """Only Slurm's variables; what differs between any two runs becomes a placeholder, and
    what sbatch-k8s leaves out on purpose (tests/conformance/differences.py) is dropped."""
    out = {}
    for name, value in env.items():
        if not name.startswith(("SLURM_", "SLURMD_")) or f"env:{name}" in INTENDED:
            continue
        if f"value:{name}" in INTENDED:
            value = "<intended>"
        elif name in ("SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"):
            value = "<port>"
        elif name == "SLURM_SUBMIT_DIR":
            value = "<dir>"
        out[name] = value
    # The runtime sets SLURM_TASK_PID from the process it starts.
    out.pop("SLURM_TASK_PID", None)
    return out


ENVPROBE = "-N2 --ntasks-per-node=2 -J envprobe -p debug"


def test_batch_environment_matches_the_recorded_job():
    real, _ = _recorded()
    desc = describe(ENVPROBE, job_id=int(real["SLURM_JOB_ID"]))
    ours = batch_environment(desc, ["n1", "n2"])
    assert _normalise(ours) == _normalise(real)


def test_task_environments_match_the_recorded_job():
    _, real = _recorded()
    ours = task_envs(ENVPROBE, "--label", job_id=int(real[0]["SLURM_JOB_ID"]))
    assert sorted(ours) == sorted(real) == [0, 1, 2, 3]
    for rank in real:
        assert _normalise(ours[rank]) == _normalise(real[rank]), f"task {rank}"


def test_recorded_values_that_matter_most():
    """The values frameworks read, spelled out (reference/slurm.md §3.2 worked example)."""
    tasks = task_envs(ENVPROBE, "--label", job_id=1)
    assert [(t["SLURM_PROCID"], t["SLURM_LOCALID"], t["SLURM_NODEID"], t["SLURMD_NODENAME"],
             t["SLURM_GTIDS"]) for _, t in sorted(tasks.items())] == [
        ("0", "0", "0", "n1", "0,1"), ("1", "1", "0", "n1", "0,1"),
        ("2", "0", "1", "n2", "2,3"), ("3", "1", "1", "n2", "2,3")]
    for env in tasks.values():
        assert (env["SLURM_NTASKS"], env["SLURM_TASKS_PER_NODE"], env["SLURM_STEP_ID"],
                env["SLURM_JOB_NODELIST"], env["SLURM_DISTRIBUTION"], env["SLURM_LABELIO"]) == (
            "4", "2(x2)", "0", "n[1-2]", "block", "1")


# -- batch step shapes (SUMMARY topic 1) --------------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    ("-N2", {"SLURM_TASKS_PER_NODE": "1(x2)", "SLURM_JOB_CPUS_PER_NODE": "1(x2)",
             "SLURM_CPUS_ON_NODE": "1", "SLURM_NTASKS": None, "SLURM_NPROCS": None,
             "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NNODES": "2"}),
    ("-n5", {"SLURM_TASKS_PER_NODE": "4,1", "SLURM_CPUS_ON_NODE": "4", "SLURM_NTASKS": "5",
             "SLURM_NPROCS": "5"}),
    ("-N2 --ntasks-per-node=3", {"SLURM_TASKS_PER_NODE": "3(x2)", "SLURM_NTASKS": "6",
                                 "SLURM_NTASKS_PER_NODE": "3"}),
    ("-N2 --ntasks-per-node=3 -n5", {"SLURM_TASKS_PER_NODE": "3(x2)", "SLURM_NTASKS": "5"}),
    ("-N3 -n4 -c2", {"SLURM_TASKS_PER_NODE": "2,1(x2)", "SLURM_JOB_CPUS_PER_NODE": "4,2(x2)",
                     "SLURM_CPUS_ON_NODE": "4", "SLURM_CPUS_PER_TASK": "2"}),
    ("-N2 --exclusive", {"SLURM_TASKS_PER_NODE": "4(x2)", "SLURM_NTASKS": None,
                         "SLURM_CPUS_ON_NODE": "4"}),
    ("-N1 -c2", {"SLURM_TASKS_PER_NODE": "1", "SLURM_JOB_CPUS_PER_NODE": "2",
                 "SLURM_CPUS_PER_TASK": "2", "SLURM_NTASKS": None}),
    ("-n9", {"SLURM_TASKS_PER_NODE": "4(x2),1", "SLURM_JOB_NODELIST": "n[1-3]"}),
    # No SLURM_DISTRIBUTION in the batch step unless -m was given.
    ("-N2 -n4", {"SLURM_DISTRIBUTION": None}),
    ("-N2 -m cyclic -n4", {"SLURM_DISTRIBUTION": "cyclic", "SLURM_TASKS_PER_NODE": "3,1"}),
    # Memory: only the variable of the option given.
    ("--mem=1000 -N2", {"SLURM_MEM_PER_NODE": "1000", "SLURM_MEM_PER_CPU": None}),
    ("--mem-per-cpu=300 -n2", {"SLURM_MEM_PER_CPU": "300", "SLURM_MEM_PER_NODE": None}),
    ("-N1", {"SLURM_MEM_PER_NODE": None, "SLURM_MEM_PER_CPU": None, "SLURM_CPUS_PER_TASK": None,
             "SLURM_NTASKS_PER_NODE": None}),
])
def test_batch_environment_of_observed_shapes(args, expected):
    env = batch_env(args)
    assert {k: env.get(k) for k in expected} == expected


def test_batch_step_identity():
    env = batch_env("-N3 -n6")
    assert pick(env, ("SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS",
                      "SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN",
                      "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "SLURM_JOB_USER", "SLURM_JOB_ID",
                      "SLURM_JOBID", "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST",
                      "ENVIRONMENT", "HOSTNAME")) == {
        "SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_GTIDS": "0",
        "SLURMD_NODENAME": "n1", "SLURM_TOPOLOGY_ADDR": "n1",
        "SLURM_TOPOLOGY_ADDR_PATTERN": "node", "SLURM_JOB_ACCOUNT": "root",
        "SLURM_JOB_QOS": "normal", "SLURM_JOB_USER": "root", "SLURM_JOB_ID": "29",
        "SLURM_JOBID": "29", "SLURM_SUBMIT_DIR": CONTEXT.cwd, "SLURM_SUBMIT_HOST": "vm",
        "ENVIRONMENT": "BATCH", "HOSTNAME": "n1"}


@pytest.mark.parametrize("args, name, value", [
    ("-A proj -q high", "SLURM_JOB_ACCOUNT", "proj"),
    ("-A proj -q high", "SLURM_JOB_QOS", "high"),
    ("-p gpu", "SLURM_JOB_PARTITION", "gpu"),
    ("--open-mode=append", "SLURM_OPEN_MODE", "a"),
    ("--open-mode=truncate", "SLURM_OPEN_MODE", "t"),
    ("-d afterok:20:21", "SLURM_JOB_DEPENDENCY", "afterok:20:21"),
    ("--export=NONE", "SLURM_EXPORT_ENV", "NONE"),
    ("--export=ALL", "SLURM_EXPORT_ENV", None),  # sbatch/opt.c: "srun ignores ALL"
    ("--cpus-per-gpu=2 --gpus=1", "SLURM_CPUS_PER_GPU", "2"),
    ("--mem-per-gpu=1G --gpus=1", "SLURM_MEM_PER_GPU", "1024"),
])
def test_batch_variables_from_options(args, name, value):
    assert batch_env(args).get(name) == value


# -- srun's step and task variables (SUMMARY topic 1 "Task env", job5-step-vs-job-vars) -------

def test_step_counts_replace_the_jobs_but_not_its_node_list():
    """``srun -N1 -n1`` in a -N2 job (02-srun-in-alloc/job5-step-vs-job-vars.out)."""
    (env,) = task_envs("-N2", "-N1 -n1").values()
    assert pick(env, ("SLURM_NNODES", "SLURM_NODELIST", "SLURM_STEP_NODELIST",
                      "SLURM_JOB_NUM_NODES", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS",
                      "SLURM_NPROCS", "SLURM_JOB_NODELIST", "SLURM_JOB_CPUS_PER_NODE",
                      "SLURM_STEP_NUM_NODES", "SLURM_STEP_NUM_TASKS",
                      "SLURM_STEP_TASKS_PER_NODE")) == {
        "SLURM_NNODES": "1", "SLURM_NODELIST": "n[1-2]", "SLURM_STEP_NODELIST": "n1",
        "SLURM_JOB_NUM_NODES": "2", "SLURM_TASKS_PER_NODE": "1", "SLURM_NTASKS": "1",
        "SLURM_NPROCS": "1", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_CPUS_PER_NODE": "1(x2)",
        "SLURM_STEP_NUM_NODES": "1", "SLURM_STEP_NUM_TASKS": "1",
        "SLURM_STEP_TASKS_PER_NODE": "1"}


def test_tasks_get_a_task_count_even_when_the_batch_step_has_none():
    """§10.5: SLURM_NTASKS is absent in a --nodes-only job; srun runs one task per node and
    its tasks see the step's count."""
    assert "SLURM_NTASKS" not in batch_env("-N2")
    tasks = task_envs("-N2")
    assert [t["SLURM_NTASKS"] for t in tasks.values()] == ["2", "2"]
    assert [t["SLURM_DISTRIBUTION"] for t in tasks.values()] == ["cyclic", "cyclic"]


def test_cyclic_step_ranks_and_gtids():
    tasks = task_envs("-N2 --ntasks-per-node=2", "-m cyclic -n4")
    assert {r: (t["SLURMD_NODENAME"], t["SLURM_NODEID"], t["SLURM_LOCALID"], t["SLURM_GTIDS"])
            for r, t in tasks.items()} == {
        0: ("n1", "0", "0", "0,2"), 1: ("n2", "1", "0", "1,3"),
        2: ("n1", "0", "1", "0,2"), 3: ("n2", "1", "1", "1,3")}


def test_step_on_a_later_node_numbers_it_zero():
    """``srun -w n2 -n1``: NODEID is the index within the step's nodes."""
    (env,) = task_envs("-N2 --ntasks-per-node=2", "-w n2 -n1").values()
    assert pick(env, ("SLURMD_NODENAME", "SLURM_NODEID", "SLURM_STEP_NODELIST",
                      "SLURM_CPUS_ON_NODE")) == {
        "SLURMD_NODENAME": "n2", "SLURM_NODEID": "0", "SLURM_STEP_NODELIST": "n2",
        "SLURM_CPUS_ON_NODE": "2"}


@pytest.mark.parametrize("srun, name, value", [
    ("-l", "SLURM_LABELIO", "1"),
    ("", "SLURM_LABELIO", None),
    ("-c2 -n2", "SLURM_CPUS_PER_TASK", "2"),
    ("", "SLURM_CPUS_PER_TASK", None),
    ("", "SLURM_UMASK", UMASK),
    ("", "SLURM_STEP_LAUNCHER_PORT", str(LAUNCH_PORT)),
    ("", "SLURM_SRUN_COMM_PORT", str(LAUNCH_PORT)),
    ("", "SLURM_LAUNCH_NODE_IPADDR", LAUNCH_HOST),
    ("-n3", "SLURM_STEP_TASKS_PER_NODE", "2,1"),
    ("-n3", "SLURM_DISTRIBUTION", "block"),
    ("-n2 -m cyclic", "SLURM_DISTRIBUTION", "cyclic"),
])
def test_step_variables(srun, name, value):
    for env in task_envs("-N2 --ntasks-per-node=2", srun).values():
        assert env.get(name) == value


def test_preserve_env_keeps_the_jobs_counts():
    tasks = task_envs("-N2 --ntasks-per-node=2", "-E -n1")
    assert [(t["SLURM_NTASKS"], t["SLURM_NNODES"], t["SLURM_STEP_NUM_TASKS"])
            for t in tasks.values()] == [("4", "2", "1")]


# -- GPUs (SUMMARY topic 1 "GPUs", §10.4) ------------------------------------------------------

@pytest.mark.parametrize("args, batch, tasks", [
    # l: --gpus-per-node sets SLURM_GPUS_PER_NODE (the raw string).
    ("--gpus-per-node=2 -N2",
     {"SLURM_GPUS_PER_NODE": "2", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
      "CUDA_VISIBLE_DEVICES": "0,1", "GPU_DEVICE_ORDINAL": "0,1",
      "ROCR_VISIBLE_DEVICES": "0,1", "ZE_AFFINITY_MASK": "0,1"},
     {0: {"SLURM_STEP_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1", "SLURM_GPUS_ON_NODE": "2"},
      1: {"SLURM_STEP_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1", "SLURM_GPUS_ON_NODE": "2"}}),
    ("--gpus-per-node=a100:2 -N1", {"SLURM_GPUS_PER_NODE": "a100:2"}, {}),
    # w: --gres=gpu:2 gives the same GPUs but NOT SLURM_GPUS_PER_NODE.
    ("--gres=gpu:2 -N2",
     {"SLURM_GPUS_PER_NODE": None, "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
      "CUDA_VISIBLE_DEVICES": "0,1"},
     {0: {"SLURM_GPUS_PER_NODE": None, "CUDA_VISIBLE_DEVICES": "0,1"},
      1: {"SLURM_GPUS_PER_NODE": None, "CUDA_VISIBLE_DEVICES": "0,1"}}),
    # m1: --gpus=3 on one node.
    ("--gpus=3", {"SLURM_GPUS": "3", "SLURM_JOB_GPUS": "0,1,2", "CUDA_VISIBLE_DEVICES": "0,1,2",
                  "SLURM_GPUS_PER_NODE": None}, {}),
    # n: --gpus-per-task=1 -n3: each task its own GPU; SLURM_GPUS_ON_NODE stays 3.
    ("--gpus-per-task=1 -n3",
     {"SLURM_GPUS_PER_TASK": "1", "SLURM_JOB_GPUS": "0,1,2", "CUDA_VISIBLE_DEVICES": "0,1,2"},
     {i: {"CUDA_VISIBLE_DEVICES": str(i), "SLURM_STEP_GPUS": str(i),
          "GPU_DEVICE_ORDINAL": str(i), "ROCR_VISIBLE_DEVICES": str(i),
          "SLURM_GPUS_ON_NODE": "3", "SLURM_JOB_GPUS": "0,1,2"}
      for i in range(3)}),
    # m2: --gpus=3 -N2: n1 has 0,1 and n2 0; task 1 inherits the batch node's SLURM_JOB_GPUS.
    ("--gpus=3 -N2",
     {"SLURM_GPUS": "3", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2",
      "CUDA_VISIBLE_DEVICES": "0,1", "ROCR_VISIBLE_DEVICES": "0,1"},
     {0: {"SLURM_STEP_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1", "SLURM_GPUS_ON_NODE": "2",
          "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS": "3"},
      1: {"SLURM_STEP_GPUS": "0", "CUDA_VISIBLE_DEVICES": "0", "ROCR_VISIBLE_DEVICES": "0",
          "GPU_DEVICE_ORDINAL": "0", "SLURM_GPUS_ON_NODE": "1", "SLURM_JOB_GPUS": "0,1",
          "SLURM_GPUS": "3"}}),
    # j: -N2 --exclusive gets all GPUs of its nodes (its tasks: see below).
    ("-N2 --exclusive", {"SLURM_JOB_GPUS": "0,1,2,3", "SLURM_GPUS_ON_NODE": "4",
                         "CUDA_VISIBLE_DEVICES": "0,1,2,3",
                         "ROCR_VISIBLE_DEVICES": "0,1,2,3"}, {}),
    # No GPU asked for: no GPU variable at all.
    ("-N2", {name: None for name in GPU_VARS}, {0: {name: None for name in GPU_VARS}}),
])
def test_gpu_variables(args, batch, tasks):
    env = batch_env(args)
    assert {k: env.get(k) for k in batch} == batch
    envs = task_envs(args)
    for rank, expected in tasks.items():
        assert {k: envs[rank].get(k) for k in expected} == expected, f"task {rank}"


def test_step_gpus_per_task_split_the_nodes_gpus():
    tasks = task_envs("--gpus-per-node=4 -N1 --ntasks-per-node=2", "--gpus-per-task=2")
    assert [(t["CUDA_VISIBLE_DEVICES"], t["SLURM_STEP_GPUS"]) for t in tasks.values()] == [
        ("0,1", "0,1"), ("2,3", "2,3")]


def test_step_gres_limits_the_steps_gpus():
    (env,) = task_envs("--gpus-per-node=4 -N1", "--gres=gpu:1 -n1").values()
    assert (env["CUDA_VISIBLE_DEVICES"], env["SLURM_STEP_GPUS"], env["SLURM_JOB_GPUS"]) == (
        "0", "0", "0,1,2,3")


def test_exclusive_job_tasks_get_no_gpus_unless_asked():
    """j ``-N2 --exclusive`` (no GPU request, observed): the job holds its nodes' GPUs (the
    pods request them all, as the batch step's variables say), but a step that asks for none
    gets none: only the inherited SLURM_JOB_GPUS."""
    for env in task_envs("-N2 --exclusive").values():
        assert pick(env, GPU_VARS) == {"SLURM_JOB_GPUS": "0,1,2,3"}


def test_exclusive_job_steps_get_gpus_on_request():
    tasks = task_envs("-N2 --exclusive", "--gpus-per-node=2")
    for env in tasks.values():
        assert pick(env, ("SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "SLURM_GPUS_ON_NODE",
                          "SLURM_JOB_GPUS")) == {
            "SLURM_STEP_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1", "SLURM_GPUS_ON_NODE": "2",
            "SLURM_JOB_GPUS": "0,1,2,3"}


def test_device_lists_name_the_same_gpus():
    """gres/gpu sets ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL and ZE_AFFINITY_MASK with
    CUDA_VISIBLE_DEVICES (gres_common_gpu_set_env; observed on 22.05: ``--gpus=1``)."""
    devices = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
               "ZE_AFFINITY_MASK")
    assert {batch_env("--gpus=1")[name] for name in devices} == {"0"}
    for env in task_envs("--gpus-per-node=4 -N1 --ntasks-per-node=2", "--gpus-per-task=2"
                         ).values():
        assert len({env[name] for name in devices}) == 1


def test_jobs_without_gpus_leave_inherited_device_lists_alone():
    """No GPU in the job: what the script exported reaches the tasks unchanged."""
    desc = describe("-N1")
    assert inherited_environment({"CUDA_VISIBLE_DEVICES": "7"}, desc) == {
        "CUDA_VISIBLE_DEVICES": "7"}


# -- arrays (SUMMARY topic 1 "Arrays") ---------------------------------------------------------

ARRAY_VARS = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
              "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
              "SLURM_ARRAY_TASK_STEP")


@pytest.mark.parametrize("args, job_id, array_job_id, task_id, expected", [
    # Observed: --array=1-3%2 submitted as 26; element 26_2 ran as job 28.
    ("--array=1-3%2", 28, 26, 2, ("28", "26", "2", "3", "1", "3", "1")),
    ("--array=1-3%2", 26, 26, 3, ("26", "26", "3", "3", "1", "3", "1")),
    ("--array=0-15:4", 104, 100, 8, ("104", "100", "8", "4", "0", "12", "4")),
    ("--array=1,5,7", 7, 5, 5, ("7", "5", "5", "3", "1", "7", "1")),
])
def test_array_variables(args, job_id, array_job_id, task_id, expected):
    env = batch_env(args, job_id=job_id, array_job_id=array_job_id, array_task_id=task_id)
    assert tuple(env.get(k) for k in ARRAY_VARS) == expected
    # srun's tasks see the same.
    for task in task_envs(args, job_id=job_id, array_job_id=array_job_id,
                          array_task_id=task_id).values():
        assert tuple(task.get(k) for k in ARRAY_VARS) == expected


def test_no_array_variables_outside_arrays():
    assert [k for k in batch_env("-N1") if k.startswith("SLURM_ARRAY_")] == []


# -- job name --------------------------------------------------------------------------------

def test_job_name_variable():
    assert batch_env("-J 'a b'")["SLURM_JOB_NAME"] == "a b"
    assert batch_env("")["SLURM_JOB_NAME"] == "job.sh"


def test_stdin_job_has_no_job_name_variable():
    """Observed: ``echo -e '#!/bin/sh\\nenv | grep JOB_NAME' | sbatch`` prints nothing, while
    squeue names the job ``sbatch`` (sbatch/opt.c sets SLURM_JOB_NAME only for a name it
    knows)."""
    from parsers.job_description import describe_job

    job, _ = submit("#!/bin/sh\ntrue\n", "-N1")
    desc = describe_job(job, allocate(job, SHAPE), CONTEXT, 40, "realslurm", CONTEXT.cwd, {})
    assert desc["job_name"] == "sbatch"
    assert "SLURM_JOB_NAME" not in job_environment(desc, ["n1"])


@pytest.mark.parametrize("text, args, env", [
    ("#!/bin/sh\ntrue\n", "-N1 -J sbatch", {}),
    ("#!/bin/sh\n#SBATCH -J sbatch\ntrue\n", "-N1", {}),
    ("#!/bin/sh\ntrue\n", "-N1", {"SBATCH_JOB_NAME": "sbatch"}),
])
def test_stdin_job_named_by_the_user_has_the_variable(text, args, env):
    from parsers.job_description import describe_job

    job, _ = submit(text, args, env)
    desc = describe_job(job, allocate(job, SHAPE), CONTEXT, 40, "realslurm", CONTEXT.cwd, {})
    assert job_environment(desc, ["n1"])["SLURM_JOB_NAME"] == "sbatch"


# -- the run-length format (env.c) ---------------------------------------------------------------

@pytest.mark.parametrize("counts, text", [
    ([2, 2, 2, 1], "2(x3),1"),
    ([4, 1, 1], "4,1(x2)"),
    ([4, 4, 1], "4(x2),1"),
    ([72, 72, 36], "72(x2),36"),
    ([96, 96], "96(x2)"),
    ([3], "3"),
    ([1, 2, 1], "1,2,1"),
    ([1, 1, 2, 2, 1], "1(x2),2(x2),1"),
    ([], ""),
])
def test_run_length(counts, text):
    assert run_length(counts) == text


def _expand(text: str) -> List[int]:
    out: List[int] = []
    for part in filter(None, text.split(",")):
        value, _, reps = part.partition("(x")
        out += [int(value)] * (int(reps.rstrip(")")) if reps else 1)
    return out


@pytest.mark.parametrize("counts", [[1], [5, 5, 5, 5], [1, 2, 3], [9, 9, 1, 1, 9]])
def test_run_length_round_trips(counts):
    assert _expand(run_length(counts)) == counts
