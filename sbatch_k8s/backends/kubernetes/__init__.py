"""The Kubernetes backend: jobs as workloads (Indexed Job, JobSet, PyTorchJob, MPIJob) and
their pods, job history as record ConfigMaps.

:mod:`.backend` answers the backend's verbs; each is done in the folder of its job:

* :mod:`.api` — the API server: the client, the kinds it knows, who the caller is;
* :mod:`.submit` — a submission's objects: ids from the cluster's counter, the submitter and
  its namespaces, creating every object and taking them back on failure;
* :mod:`.read` — the cluster's state read as Slurm's: jobs joined from records, workloads and
  pods in a constant number of reads (or the warm server's watch cache), their states, the
  partitions' nodes;
* :mod:`.control` — scancel, hold and release, the dependency and begin-time releases every
  command runs, and the optional controller that runs them continuously;
* :mod:`.output` — a job's output followed from node 0's pod log (``sbatch --wait``,
  ``sattach``, ``srun`` outside a job);
* :mod:`.history` — the job's record, what sacct reads after the workload is gone;
* :mod:`.requeue` — a job run again under its id.

The reporting core (:mod:`.read.job_state`, :mod:`.read.pod_view`, :mod:`.read.workload_view`,
:mod:`.history.records`, :mod:`.history.record_steps`) is pure: functions over the JSON dicts the
API server returns, with no client import, so it is fast and tested without a cluster.
"""
