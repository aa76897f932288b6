"""The output stream node 0 writes to its pod log when the job's files stay in the pods.

:mod:`.frames` is the format, :mod:`.tee` node 0's writer (the batch output files copied into
the log) and :mod:`.decoder` the reader the login side rebuilds the files with
(``sbatch --wait``, ``sattach``).
"""
