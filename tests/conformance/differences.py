"""Intended differences from real Slurm, in one table, each with its reason.

Everything else the conformance checks find is a bug to fix. Keys are what differs:
``env:<NAME>`` (a variable only one side sets), ``output:<what>``, ``message:<what>``.
"""

from __future__ import annotations

from typing import Dict

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
