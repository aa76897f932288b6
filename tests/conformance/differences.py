"""Intended differences from real Slurm, in one table, each with its reason.

Everything else the conformance checks find is a bug to fix. Keys are what differs:
``env:<NAME>`` (a variable only one side sets), ``value:<NAME>`` (its value differs),
``output:<what>``, ``message:<what>``, ``behaviour:<what>``. A key may be limited to some
conformance cases with ``@<case glob>`` (``value:CUDA_VISIBLE_DEVICES@env-gpu*``).

Text outputs (messages, command outputs) are compared exactly after normalisation; an
intended difference in them is a rewrite in :data:`REWRITES`: the pattern is applied to
real Slurm's normalised text, the replacement is what sbatch-k8s prints instead, so the rest
of the text is still compared character for character.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Dict, Tuple

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
    "env:MASTER_ADDR": "sbatch-k8s adds torch rendezvous defaults (node 0, port 29500) unless "
                       "the job sets them (DESIGN: rendezvous helpers)",
    "env:MASTER_PORT": "see MASTER_ADDR",
    "value:SLURM_SRUN_COMM_HOST": "the IP of the node running srun: 127.0.0.1 on the emulated "
                                  "cluster, the node's own loopback address here",
    "value:SLURM_LAUNCH_NODE_IPADDR": "see SLURM_SRUN_COMM_HOST",
    "output:warning-case": "sbatch-k8s prints 'warning:' as current Slurm does; Slurm 22.05 "
                           "printed 'Warning:'",
    "behaviour:srun -N1 in --ntasks-per-node job": "Slurm >= 23.02 drops the inherited "
                                                   "SLURM_NTASKS (k tasks on one node); "
                                                   "22.05 kept it and failed",
    "behaviour:sbatch output directory": "Slurm >= 23.02 creates missing --output directories; "
                                         "22.05 fails the job (JobLaunchFailure)",
    "behaviour:array element ids": "sbatch-k8s gives the first element the array's own id; "
                                   "Slurm gives it to the last element to start",
    "behaviour:stdin default": "srun broadcasts stdin to every task (Slurm's --input=all), "
                               "as real Slurm does",
}

#: key (also in INTENDED) -> (case glob, pattern on real Slurm's normalised text, what
#: sbatch-k8s prints instead)
REWRITES: Dict[str, Tuple[str, str, str]] = {
    "output:warning-case": ("*", r"\b(srun|sbatch): Warning: ", r"\1: warning: "),
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
    for key, (pattern, regex, replacement) in REWRITES.items():
        assert key in INTENDED, f"REWRITES[{key!r}] has no reason in INTENDED"
        if fnmatch.fnmatchcase(case, pattern):
            text = re.sub(regex, replacement, text)
    return text
