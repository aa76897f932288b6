"""Job history: each job's record ConfigMap (:mod:`.records`), what ``sacct`` reads after the
workload is gone, and its steps as sacct lists them (:mod:`.record_steps`)."""
