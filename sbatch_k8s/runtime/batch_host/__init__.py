"""The batch host: node 0 running the batch script once (the batch step), and the job's end.

:mod:`.batch_step` runs the script with its stdio (:mod:`.batch_stdio`) once every other node
answers (:mod:`.node_links`), enforces the time limit and ends the job; :mod:`.stop_judge`
decides how it ends when the cluster stops its pods. Node 0 also numbers the job's steps and
holds their CPUs and GPUs (:mod:`.step_registry`), logs them for sacct (:mod:`.step_log`), and
serves the batch script's ``srun`` from a warm process (:mod:`.step_server`).
"""
