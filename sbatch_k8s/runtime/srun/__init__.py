"""``srun`` inside an allocation: a step from the command line to its end.

:mod:`.step` parses the request, lays the tasks out, registers the step with node 0
(:mod:`.registration`) and builds every task's environment; :mod:`.launch` fans the tasks out
to the node agents; :mod:`.sessions` follows each node's connection while the step runs,
:mod:`.task_output` prints the tasks' output (line-buffered, ``--label``), :mod:`.signals`
handles srun's signals and early ends, and :mod:`.report` gives srun's exit code and lines.
"""
