"""The local backend: jobs run on this machine with the same runtime pods use.

An N-node job is N runtime node processes, node *i* on ``127.0.0.<i+2>``; a detached
supervisor per job (per array) waits for eligibility and capacity, starts the nodes, and
records the outcome in the job database.
"""
