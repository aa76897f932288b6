"""Slurm's reporting commands, printed exactly as Slurm prints them.

Each module renders :class:`parsers.job_records.JobRecord` (and its steps) the way one command
does: :mod:`~parsers.formats.squeue_format` (``-o``/``-O`` formats, with the field tables in
:mod:`~parsers.formats.squeue_fields` and the ordering in :mod:`~parsers.formats.squeue_sort`),
:mod:`~parsers.formats.sacct_format`, :mod:`~parsers.formats.scontrol_show` (``show job``, ``show
hostnames``) and :mod:`~parsers.formats.sinfo_format`. The shared pieces — padding and truncation
rules, timestamps, unit conversion — live in :mod:`~parsers.formats.cells`; job states in
:mod:`~parsers.formats.states`.

Everything here is pure: the current time comes in as ``now`` (epoch seconds), nothing reads
the clock, the environment or a file. Timestamps are printed in the process's local time zone,
as Slurm does.
"""
