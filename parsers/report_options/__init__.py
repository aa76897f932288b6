"""Command lines of Slurm's reporting commands → frozen query values.

One module per command: :mod:`~parsers.report_options.squeue_options`, ``sacct``, ``scancel``,
``scontrol``, ``sinfo``. They share :mod:`~parsers.report_options.argv` (getopt_long in glibc's
permuting mode, with small per-command option tables), :mod:`~parsers.report_options.ids`
(each command's job-id syntax) and :mod:`~parsers.report_options.timespec` (sacct's times).
Errors are :class:`~parsers.input_errors.SlurmInputError` worded as Slurm words them, with Slurm's
exit status (1 for all of these commands); the formatters live in :mod:`parsers.formats`.
"""
