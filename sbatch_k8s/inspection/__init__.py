"""Inspecting a job: its nodes, each node's log, its events and its objects, on either backend.

What the web console (:mod:`sbatch_k8s.ui`) shows of a job and what ``sbatch-k8s
logs|events|yaml`` and ``scontrol show job -d`` print come from here, one implementation for
both. Layering (import contracts in pyproject.toml and tests/unit/test_import_rules.py):
commands, tools and the console → this package → the backends; nothing here imports a
command, a tool or the console.

* :mod:`.inspector` — :class:`~.inspector.JobInspector`, the one entry: a backend in, the
  values of :mod:`.values` out (:class:`~.values.Unavailable` where a backend cannot tell).
* :mod:`.job_lookup` — a job id as the commands take it → its record (squeue's view, else
  sacct's), with the steps and earlier runs sacct keeps.
* :mod:`.kubernetes_job`, :mod:`.kubernetes_events`, :mod:`.kubernetes_objects`,
  :mod:`.local_job` — what each backend keeps beyond the record: pods and their logs,
  Kubernetes events and objects; node processes' logs and the job's description.
* :mod:`.file_logs`, :mod:`.pod_logs` — a log read whole or followed as it grows.
* :mod:`.output_files` — the batch step's output files as logs.
* :mod:`.job_events` — the record's and the runtime's moments as events.
"""
