"""Node 0 and the API server: what slurmctld and slurmdbd do for a Slurm job, done by the job.

With API access (the job ServiceAccount) node 0 writes its end into the job's record and
releases the jobs waiting for it (:mod:`.job_end`, :mod:`.release`, the writes of
:mod:`.workload_gates`), publishes its steps (:mod:`.step_publisher`), reads scancel's
requests (:mod:`.cancel_requests`) and asks why its pods are being stopped
(:mod:`.end_cause`), all through a small standard-library client (:mod:`.kube_api`). The
release rules are the same code the login side and the controller run.
"""
