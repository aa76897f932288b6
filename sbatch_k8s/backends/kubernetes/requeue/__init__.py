"""``scontrol requeue`` on a cluster: the job runs again under its id (:mod:`.requeue`), what
that makes of its record and workload (:mod:`.next_run`), and the mark that says a requeued
job is not over (:mod:`.mark`)."""
