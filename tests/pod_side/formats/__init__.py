"""Reporting commands: formats and option parsing against recorded real Slurm output."""
