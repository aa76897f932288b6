"""Per-task accounting on a step's node, as Slurm's jobacct_gather/linux does it (pod-side, stdlib).

:mod:`.frequency` reads ``--acctg-freq``; :mod:`.proc_sample` samples a task's process tree
from /proc; :mod:`.gpu` reads ``nvidia-smi``; :mod:`.usage` keeps per-task max/ave/total and
aggregates a step's tasks into sacct's fields.
"""
