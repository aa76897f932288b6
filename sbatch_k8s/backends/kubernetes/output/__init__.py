"""A job's output, from node 0's pod log: ``sbatch --wait`` (:mod:`.waiting`), ``sattach``
(:mod:`.attach`), ``srun`` outside a job (:mod:`.srun_outside`); the log followed
(:mod:`.pod_log`) and the output files rebuilt from it (:mod:`.rebuilt_files`)."""
