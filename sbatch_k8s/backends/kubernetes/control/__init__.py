"""Acting on jobs: scancel, scontrol hold/release/requeue (:mod:`.job_control`), the release
of jobs waiting for dependencies or a begin time that every command runs
(:mod:`.dependencies`), and ``sbatch-k8s controller`` running that pass continuously under a
leader lease (:mod:`.reconcile`, :mod:`.leader`)."""
