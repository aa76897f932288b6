"""Intended differences from real Slurm, in one table, each with its reason.

Everything else the conformance checks find is a bug to fix. Keys are what differs:
``env:<NAME>`` (a variable only one side sets), ``value:<NAME>`` (its value differs),
``output:<what>``, ``message:<what>``, ``behaviour:<what>``. A key may be limited to some
conformance cases with ``@<case glob>`` (``value:CUDA_VISIBLE_DEVICES@env-gpu*``).

Text outputs (messages, command outputs, exit codes) are compared exactly after
normalisation; an intended difference in them is a rewrite in :data:`REWRITES`: the pattern
is applied to real Slurm's normalised text, the replacement is what sbatch-k8s prints
instead, so the rest of the text is still compared character for character
(:data:`OUR_REWRITES` removes what only sbatch-k8s adds). A case whose behaviour differs by
intent (``behaviour:…@<case>``) is compared the same way: its rewrites describe exactly the
lines (or exit code) that differ, and everything else it prints must match.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Dict, List, Tuple

from sbatch_k8s.backends.local.capacity import local_cpus
from sbatch_k8s.backends.local.partition_nodes import MAX_LOCAL_NODES
from translators.config import LocalConfig

INTENDED: Dict[str, str] = {
    "env:SLURM_CONF": "there is no slurm.conf: no Slurm controller runs under sbatch-k8s",
    "env:SLURM_WORKING_CLUSTER": "names slurmctld's address and protocol; there is no "
                                 "controller",
    "env:SLURM_NODE_ALIASES": "Slurm 22.05 only (removed in 23.02); sbatch-k8s follows "
                              "current Slurm",
    "env:SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0": "Slurm 22.05's legacy heterogeneous-job name; "
                                                "no heterogeneous jobs here",
    "env:SLURM_MEM_PER_CPU": "the emulated cluster sets DefMemPerCPU=256; sbatch-k8s has no "
                             "memory default, so without --mem* no memory variable exists",
    "env:MASTER_ADDR": "sbatch-k8s adds torch rendezvous defaults (node 0, a port of the "
                       "job's own) unless the job sets them (DESIGN: rendezvous helpers)",
    "env:MASTER_PORT": "see MASTER_ADDR",
    "output:memory default": "scontrol show job: the emulated cluster's DefMemPerCPU=256 "
                             "gives every job TRES mem=<256 x CPUs>M and MinMemoryCPU=256M; "
                             "sbatch-k8s has no memory default (see env:SLURM_MEM_PER_CPU), so "
                             "no mem TRES and MinMemoryNode=0",
    "output:sinfo nodes": "local backend: every partition has the nodes local jobs run on, "
                          "127.0.0.2… (one per CPU of the [local] pool, all sharing it); "
                          "the emulated cluster has n[1-4] (debug) and n[1-2] (gpu)",
    "value:SLURM_SRUN_COMM_HOST": "the IP of the node running srun: 127.0.0.1 on the emulated "
                                  "cluster, the node's own loopback address here",
    "value:SLURM_LAUNCH_NODE_IPADDR": "see SLURM_SRUN_COMM_HOST",
    "output:warning-case": "sbatch-k8s prints 'warning:' as current Slurm does; Slurm 22.05 "
                           "printed 'Warning:'",
    "behaviour:srun -N1 in --ntasks-per-node job": "Slurm >= 23.02 drops the inherited "
                                                   "SLURM_NTASKS (k tasks on one node); "
                                                   "22.05 kept it and failed",
    "behaviour:srun -N1 in --ntasks-per-node job@N1-in-tpn-job": "see the entry without @",
    "behaviour:srun -N1 in --ntasks-per-node job@too-many-nodes": (
        "the same rule: with no inherited SLURM_NTASKS, `srun -N3` in a 2-node "
        "--ntasks-per-node=2 job asks for 3x2 tasks, so Slurm >= 23.02 has no task count to "
        "mismatch and prints no --ntasks-per-node warning before 'Only allocated 2 nodes'"),
    "behaviour:srun -N1 in --ntasks-per-node job@too-many-tasks": (
        "the same rule: `srun -n5` in that job is checked against --ntasks-per-node=2 x 2 "
        "nodes, and Slurm >= 23.02 warns 'can't honor --ntasks-per-node' before refusing "
        "the step; 22.05 refused it without the warning"),
    "output:%b in file names": (
        "Slurm 22.05 left %b in --output/--error literal; current Slurm's "
        "expand_stdio_fields (src/common/print_fields.c) expands it to the array task id "
        "modulo 10 (4 outside an array: 4294967294 % 10), as sbatch-k8s does"),
    "output:step termination line": (
        "srun -K / --wait: Slurm 22.05's launch/slurm plugin logged 'srun: launch/slurm: "
        "_step_signal: Terminating StepId=…'; since 23.11 that code is part of srun "
        "(src/srun/launch.c, info(\"Terminating %ps\")) and the line is 'srun: Terminating "
        "StepId=…', which sbatch-k8s prints"),
    "output:ntasks-per-node warning wording": (
        "Slurm >= 23.02 says 'with the maximum number of requested nodes' where 22.05 said "
        "'with the number of requested nodes'; sbatch-k8s prints current Slurm's words"),
    "output:ntasks-per-node warning condition": (
        "current Slurm (src/srun/opt.c) warns 'can't honor --ntasks-per-node' only when the "
        "task count is more than --ntasks-per-node allows on the step's nodes; 22.05 also "
        "warned for fewer (srun -n3 in a 2-node --ntasks-per-node=2 job), where sbatch-k8s, "
        "like current Slurm, lays out 2,1 silently"),
    "behaviour:sbatch output directory": "Slurm >= 23.02 creates missing --output directories; "
                                         "22.05 fails the job (JobLaunchFailure)",
    "behaviour:array element ids": "sbatch-k8s gives the first element the array's own id; "
                                   "Slurm gives it to the last element to start",
    "value:CUDA_VISIBLE_DEVICES@env-gpu": "local backend: all nodes of a job are processes on "
                                          "one machine sharing its (pretend) GPU pool, so "
                                          "node 1 gets ids 2,3 where a real second node has "
                                          "its own 0,1 (on Kubernetes every pod sees 0..n-1)",
    "value:GPU_DEVICE_ORDINAL@env-gpu": "see CUDA_VISIBLE_DEVICES@env-gpu",
    "value:ROCR_VISIBLE_DEVICES@env-gpu": "see CUDA_VISIBLE_DEVICES@env-gpu",
    "value:ZE_AFFINITY_MASK@env-gpu": "see CUDA_VISIBLE_DEVICES@env-gpu",
    "value:SLURM_STEP_GPUS@env-gpu": "see CUDA_VISIBLE_DEVICES@env-gpu",
    "value:SLURM_JOB_GPUS@env-gpu": "see CUDA_VISIBLE_DEVICES@env-gpu (real Slurm's tasks on "
                                    "node 1 inherit the batch node's 0,1; ours name node 1's "
                                    "own machine-wide ids)",
    "output:cpu binding support": (
        "the emulated cluster runs TaskPlugin=task/none, so its srun says 'cluster "
        "configuration lacks support for cpu binding' for any --cpu-bind; a cluster that binds "
        "says nothing for --cpu-bind=q (quiet), nor does sbatch-k8s (pods bind nothing; other "
        "bindings get its approximation warning)"),
    "output:--exclusive warning": (
        "sbatch warns about every option the option table marks approximated; --exclusive "
        "gives whole nodes as the partition's node size says (the machine's pool locally)"),
    "behaviour:uneven GPUs per node": (
        "--gpus that does not divide by the node count (--gpus=3 -N2): Slurm gives the nodes "
        "different counts (2 and 1); all pods of a job share one template, so each requests "
        "ceil(gpus/nodes) and the job holds 4 (sbatch warns '--gpus is approximated'). Each "
        "node's GPU variables still name only its share: Slurm's own spread wherever it fits "
        "in such a pod (--gpus=5 -N2 gives 3,2 where Slurm gives 4,1)"),
}


#: The local side's nodes (its configuration sets no CPUs: the default pool) and their
#: sinfo -s A/I/O/T text when idle, whose digits set the column's padding.
_LOCAL_NODES = min(local_cpus(LocalConfig(gpus=8)), MAX_LOCAL_NODES)
_IDLE_AIOT = f"0/{_LOCAL_NODES}/0/{_LOCAL_NODES}"


def _count(value: str = r"\d+") -> str:
    """A pattern for a count in normalised text: ``value``, or the placeholder it became
    where it equals a job id of the case (job 2 of a freshly purged Slurm beside 2 nodes)."""
    return rf"(?:{value}|<\w+>)"


def _tpn_warning(tasks: int, nodes: int) -> str:
    """srun's whole "can't honor --ntasks-per-node set to 2" line (either version's words)."""
    return (rf"(?m)^srun: [wW]arning: can't honor --ntasks-per-node set to {_count('2')} "
            rf"which doesn't match the requested tasks {_count(str(tasks))} with the "
            rf"(maximum )?number of requested nodes {_count(str(nodes))}\. "
            r"Ignoring --ntasks-per-node\.\n")


#: key (also in INTENDED) -> [(case glob, pattern on real Slurm's normalised text, what
#: sbatch-k8s prints instead), ...]
REWRITES: Dict[str, List[Tuple[str, str, str]]] = {
    "output:warning-case": [("*", r"\b(srun|sbatch): Warning: ", r"\1: warning: ")],
    "output:memory default": [("*", rf"\b(TRES=cpu={_count()}),mem=\d+M,", r"\1,"),
                              ("*", r"\bMinMemoryCPU=256M\b", "MinMemoryNode=0")],
    "output:sinfo nodes": [
        ("sinfo", r"(?m)^(\S+ +up +\S+) +\d( +<st> )<host\[[\d,-]+\]>$",
         rf"\g<1>{_LOCAL_NODES:>7}\2<host[0-{_LOCAL_NODES - 1}]>"),
        ("sinfo-summarize", r"(?m)^(\S+ +up +\S+) +#/#/#/# <host\[[\d,-]+\]>$",
         rf"\1{'#/#/#/#':>{17 - len(_IDLE_AIOT) + 7}} <host[0-{_LOCAL_NODES - 1}]>")],
    "output:%b in file names": [("files-unknown-letters", r"unk-%b-", "unk-4-")],
    "output:cpu binding support": [
        ("executor", r"(?m)^srun: cluster configuration lacks support for cpu binding\n", "")],
    "output:step termination line": [
        ("*", r"\bsrun: launch/slurm: _step_signal: Terminating ", "srun: Terminating ")],
    "output:ntasks-per-node warning wording": [
        ("*", rf"(can't honor --ntasks-per-node set to {_count()} which doesn't match the "
              rf"requested tasks {_count()} with the) (number of requested nodes)",
         r"\1 maximum \2")],
    "output:ntasks-per-node warning condition": [
        ("env-N2-tpn2", _tpn_warning(tasks=3, nodes=2), "")],
    # 22.05 keeps the inherited SLURM_NTASKS=4 for `srun -N1`, so 4 tasks would share the 2
    # CPUs the job holds on one node: refused, with the warning; current Slurm runs 2 tasks
    # there (nothing printed, exit 0)
    "behaviour:srun -N1 in --ntasks-per-node job@N1-in-tpn-job": [
        ("N1-in-tpn-job", r"(?m)^srun: error: Unable to create step for job <job>: More "
                          r"processors requested than permitted\n", ""),
        ("N1-in-tpn-job", _tpn_warning(tasks=4, nodes=1), ""),
        ("N1-in-tpn-job", r"\A1\Z", "0")],
    "behaviour:srun -N1 in --ntasks-per-node job@too-many-nodes": [
        ("too-many-nodes", _tpn_warning(tasks=4, nodes=3), "")],
}

#: key (also in INTENDED) -> (case glob, pattern on sbatch-k8s's normalised text, what real
#: Slurm prints there): for lines only sbatch-k8s adds, which real Slurm's text cannot
#: predict
OUR_REWRITES: Dict[str, List[Tuple[str, str, str]]] = {
    "output:--exclusive warning": [
        ("sbatch-exclusive", r"(?m)^sbatch: warning: --exclusive is approximated: .*\n", "")],
    "behaviour:srun -N1 in --ntasks-per-node job@too-many-tasks": [
        ("too-many-tasks", _tpn_warning(tasks=5, nodes=2), "")],
}


def intended(key: str, case: str = "") -> bool:
    """Whether ``key`` is an intended difference (in general or for this case)."""
    if key in INTENDED:
        return True
    for entry in INTENDED:
        name, at, pattern = entry.partition("@")
        if at and name == key and fnmatch.fnmatchcase(case, pattern):
            return True
    return False


def rewrite_real(text: str, case: str) -> str:
    """Real Slurm's normalised text with the intended differences applied."""
    return _apply(REWRITES, "REWRITES", text, case)


def _apply(table: Dict[str, List[Tuple[str, str, str]]], name: str, text: str,
           case: str) -> str:
    for key, rules in table.items():
        assert key in INTENDED, f"{name}[{key!r}] has no reason in INTENDED"
        for pattern, regex, replacement in rules:
            if fnmatch.fnmatchcase(case, pattern):
                text = re.sub(regex, replacement, text)
    return text


def rewrite_ours(text: str, case: str) -> str:
    """sbatch-k8s's normalised text without the additions listed in OUR_REWRITES."""
    return _apply(OUR_REWRITES, "OUR_REWRITES", text, case)
