"""Slurm text → JobSpec. Pure (no I/O, no clock), standard library + lark only, Python ≥ 3.8.

Modules: :mod:`~parsers.options` (the option table), :mod:`~parsers.getopt` (getopt_long),
:mod:`~parsers.script` (reading batch scripts), :mod:`~parsers.sbatch_input` (merging the sources),
:mod:`~parsers.jobspec` (the result), :mod:`~parsers.allocation` (node/task layout),
:mod:`~parsers.values` (lark grammars of option values). Pod-side code imports this package,
so nothing here may import anything outside the standard library and lark.
"""
