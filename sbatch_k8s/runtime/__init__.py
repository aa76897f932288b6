"""The pod-side runtime: what makes a pod (or a local process) a Slurm node.

Standard library and ``parsers`` only (lark comes bundled), Python >= 3.8: this package runs
inside arbitrary user images. Entry: ``python3 runtime.pyz <command> …`` with commands
``node``, ``run`` (platform mode, :mod:`.platform`), ``srun``, ``scontrol``, ``squeue``,
``scancel``, ``sbatch`` (see :mod:`.main`).

Its folders are Slurm's daemons, as ``src/slurmd/slurmd``, ``src/slurmd/slurmstepd`` and
``src/srun`` are in Slurm's tree:

* :mod:`.agent` — the node agent, slurmd's part: ``runtime node``, one per node;
* :mod:`.stepd` — the step daemon, slurmstepd's part: one step's tasks on one node;
* :mod:`.srun` — ``srun`` inside an allocation: a step from the command line to its end;
* :mod:`.batch_host` — node 0 running the batch script (the batch step) and the job's end;
* :mod:`.cluster` — what node 0 reads from and writes to the API server for its job (what
  slurmctld and slurmdbd do for a Slurm job: the record, the steps, releasing dependents);
* :mod:`.log_stream` — the output stream node 0 writes to its pod log, and its decoder;
* :mod:`.platform` — platform mode: the runtime in a job another platform started;
* :mod:`.warm` — warm processes that serve commands without a Python start-up each.

Beside them: the wire protocol between srun, the batch host and the agents
(:mod:`.protocol`), how a node learns its place from its pod (:mod:`.contract`), the
commands answered inside a job (:mod:`.job_commands`) and the one line when a file cannot be
read or written (:mod:`.access`).
"""
