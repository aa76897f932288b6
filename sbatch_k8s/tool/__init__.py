"""``sbatch-k8s``: the project's own command (the Slurm commands are ``sbatch``, ``srun``…).

A click group (:mod:`sbatch_k8s.tool.main`) with one module per subcommand; each module
defines ``command``, a click command or group. Adding a subcommand is one module here and its
name in :data:`sbatch_k8s.tool.main.SUBCOMMANDS`. Errors of the I/O layer
(:class:`sbatch_k8s.operation_errors.SbatchK8sError`) become one ``sbatch-k8s: error: …``
line at one boundary, :func:`sbatch_k8s.tool.main.main`.
"""
