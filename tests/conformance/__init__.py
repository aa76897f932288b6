"""Conformance against a live real Slurm 22.05 (opt-in: ``pytest --with-real-slurm``).

Every case runs the same command line, script or job on both sides — the real Slurm of
``../shared/tools/real-slurm`` (``sides.RealSlurm``) and sbatch-k8s's local backend
(``sides.OurSlurm``) — normalises what legitimately differs (``normalise.py``) and compares
the rest exactly (``compare.py``). Intended differences are listed, with their reasons, in
``differences.py``; everything else fails with a diff (real Slurm ``-``, sbatch-k8s ``+``).

Run: ``python -m pytest tests/conformance --with-real-slurm`` (about a minute);
``CONFORMANCE_DUMP=<dir>`` keeps both normalised texts of every comparison;
``SBATCHK8S_REAL_SLURM=<tools dir>`` names another real-slurm tool directory (a second
instance); ``CONFORMANCE_FIRST_JOB_ID=1`` starts our job ids at 1, as a freshly purged
cluster's. The verdict does not depend on either side's ids (``normalise.py``).

* ``test_env.py``: ``SLURM_*`` variables of the batch step and tasks, per allocation shape;
* ``test_sbatch.py``: sbatch's output, messages and exit codes (good and bad input);
* ``test_srun.py``: srun in a job (exit codes, signals, errors, labels, stdin, patterns);
* ``test_output_files.py``: sbatch's output file names;
* ``test_commands.py``: squeue, sacct, sinfo, scontrol, scancel outputs.
"""
