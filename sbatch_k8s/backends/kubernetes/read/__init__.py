"""The cluster's state, read as Slurm's.

:mod:`.cluster_jobs` joins records, workloads and pods in a constant number of reads, each a
LIST or the warm server's watch cache (:mod:`.cluster_reads`, :mod:`.watch_cache`,
:mod:`.reflector`, :mod:`.watch_journal`); :mod:`.job_state` decides each job's state from
what :mod:`.workload_view` and :mod:`.pod_view` see; :mod:`.owners` says whose each job is;
:mod:`.partition_nodes` is sinfo's view of the nodes :mod:`.node_selection` picks.
"""
