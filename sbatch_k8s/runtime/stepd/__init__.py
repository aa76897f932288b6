"""The step daemon: slurmstepd's part, one step's tasks on one node.

:mod:`.node_step` serves a launch (the tasks' output, stdin, signals, exits and the step's
time limit), :mod:`.tasks` starts the tasks and passes their output on, :mod:`.task_files`
opens their output files and working directory as slurmstepd does, and :mod:`.oom` reports
out-of-memory kills as Slurm's task/cgroup plugin does.
"""
