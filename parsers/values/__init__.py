"""Value languages of Slurm options: one grammar (``<name>.lark``) and one module each
(:mod:`.begin` and :mod:`.hostranges` scan by hand).

Importing this package (or any module below) does not import lark; the grammar is compiled the
first time a value is parsed (see :mod:`parsers.values.grammar`). Every parser raises
:class:`parsers.input_errors.ValueSyntaxError` on bad input and nothing else.

* :mod:`.time` — ``--time``/``--time-min`` durations; squeue/scontrol/sacct time printing.
* :mod:`.memory` — ``--mem``, ``--mem-per-cpu``, ``--mem-per-gpu`` sizes in MiB.
* :mod:`.gres` — ``--gres`` lists and ``--gpus``/``--gpus-per-*`` counts.
* :mod:`.array` — ``--array`` index expressions and their squeue display.
* :mod:`.bitfmt` — Slurm's bitmap range strings (``0-30,45``, ``1-17:4``) used by the above.
* :mod:`.dependency` — ``--dependency`` expressions.
* :mod:`.nodes` — ``-N/--nodes`` counts, ranges and size lists.
* :mod:`.hostlist` — hostlist expressions (``node[001-004],login1``): expand and compress.
* :mod:`.filename` — ``--output/--error/--input`` patterns and srun's per-step IO values.
* :mod:`.export` — ``--export`` lists and how they build the job environment.
* :mod:`.signal` — ``--signal`` specifications and signal names.
* :mod:`.begin` — ``--begin``/``--deadline`` times (``parse_time``), resolved against a given
  "now".
* :mod:`.distribution` — ``-m/--distribution`` and the ``SLURM_DISTRIBUTION`` it exports.
* :mod:`.grammar` — loading and running the grammars.
"""
