"""The pod-side runtime: what makes a pod (or a local process) a Slurm node.

Standard library and ``parsers`` only (lark comes bundled), Python >= 3.8: this package runs
inside arbitrary user images. Entry: ``python3 runtime.pyz <command> …`` with commands
``node``, ``run`` (platform mode, :mod:`.platform`), ``srun``, ``scontrol``, ``squeue``,
``scancel`` (see :mod:`.main`).
"""
