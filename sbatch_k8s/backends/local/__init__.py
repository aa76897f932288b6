"""The local backend: jobs run on this machine with the same runtime pods use.

An N-node job is N runtime node processes, node *i* on ``127.0.0.<i+2>``. A pending job is a
row in the job database and nothing else; one scheduler per state directory
(:mod:`~sbatch_k8s.backends.local.scheduler`, started by the commands that need it, gone when
idle) starts jobs as they become eligible and fit, watches their node processes and records
the outcome in the job database.
"""
