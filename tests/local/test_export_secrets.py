"""Exported variables reach the batch script and every srun task although the job
description (``job.json``) no longer holds them: they travel in ``environment.json`` beside
the token (mode 0600), as in pods they travel in the job's Secret."""

from __future__ import annotations

import json
import os
import stat

from sbatch_k8s.backends.local.layout import job_dir_of
from tests.local.harness import LocalSlurm, job_id_of

SECRET_ENV = {"HF_TOKEN": "hf-from-the-login-env", "AWS_SECRET_ACCESS_KEY": "aws-secret-key"}
CLI_EXPORT = "--export=ALL,WANDB_API_KEY=wandb-from-the-command-line"

SCRIPT = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=out-%j.txt
echo "batch $HF_TOKEN $AWS_SECRET_ACCESS_KEY $WANDB_API_KEY $SLURM_EXPORT_ENV"
srun --label bash -c 'echo "task $HF_TOKEN $WANDB_API_KEY"' | sort
"""


def _secret_values() -> list:
    return list(SECRET_ENV.values()) + ["wandb-from-the-command-line"]


def test_exported_variables_reach_the_script_and_tasks(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", SCRIPT)
    done = slurm.run("sbatch", "--wait", CLI_EXPORT, "job.sh", env=SECRET_ENV)
    assert done.returncode == 0, done.stderr
    job = job_id_of(done.stdout)
    assert slurm.read(f"out-{job}.txt").splitlines() == [
        "batch hf-from-the-login-env aws-secret-key wandb-from-the-command-line "
        "ALL,WANDB_API_KEY=wandb-from-the-command-line",
        "0: task hf-from-the-login-env wandb-from-the-command-line",
        "1: task hf-from-the-login-env wandb-from-the-command-line",
    ]
    directory = job_dir_of(slurm.env, job)
    with open(os.path.join(directory, "job.json")) as f:
        description = f.read()
    assert not [v for v in _secret_values() if v in description]
    assert "environment" not in json.loads(description)
    private = os.path.join(directory, "environment.json")
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    with open(private) as f:
        assert json.load(f)["environment"]["HF_TOKEN"] == "hf-from-the-login-env"


def test_every_array_element_gets_the_environment(slurm: LocalSlurm) -> None:
    done = slurm.run("sbatch", "--wait", "--array=0-1", "-o", "arr-%a.txt", CLI_EXPORT,
                     "--wrap", 'echo "$SLURM_ARRAY_TASK_ID $HF_TOKEN $WANDB_API_KEY"',
                     env=SECRET_ENV)
    assert done.returncode == 0, done.stderr
    for task in (0, 1):
        assert slurm.read(f"arr-{task}.txt") == (
            f"{task} hf-from-the-login-env wandb-from-the-command-line\n")
