"""``sbatch --k8s-export=NAME job.sh``: the job as a form-based platform takes it.

``dlc`` writes ``<job name>.dlc.params`` in the working directory (for ``dlc create job
--params_file``); ``aistation`` and ``task-training`` print the form's values. The command
is the runtime's bootstrap line (:mod:`sbatch_k8s.runtime.platform.bootstrap`): the
containers run the script in platform mode, so it must be a file the containers see at the
same path (the platforms mount a shared directory), and so must the runtime zipapp
(``sbatch-k8s runtime -o PATH``). Every export gets a new ``RDZV_ID``. Nothing is contacted.
"""

from __future__ import annotations

import os
import re
import secrets
from typing import TYPE_CHECKING, TextIO

from parsers.input_errors import SlurmInputError
from parsers.platforms.platform_names import EXPORT_DLC
from sbatch_k8s.user_messages import print_warning
from sbatch_k8s.runtime.platform.bootstrap import bootstrap_line
from translators.exports import EXPORT_CONTRACTS, export_form, render_form, render_params_file

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan

#: The runtime zipapp's file name in the job's working directory.
RUNTIME_FILE = "sbatch-k8s-runtime.pyz"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def rendezvous_id(job_name: str) -> str:
    """A rendezvous id unique to this export: the job's name and 64 random bits."""
    name = _UNSAFE.sub("-", job_name).strip("-.")[:40] or "job"
    return f"{name}-{secrets.token_hex(8)}"


def export_job(plan: "SubmissionPlan", out: TextIO) -> int:
    """Write or print the export of the planned job; returns the exit code."""
    from translators.image import choose_image

    job, submit = plan.job, plan.submit
    platform = submit.k8s_export or ""
    if not job.script.path:
        raise SlurmInputError(f"--k8s-export needs the batch script as a file (not "
                              f"{job.script.display_name}): the containers run it from a "
                              "directory they share")
    partition, allocation = plan.partition, plan.allocation
    image, image_notes = choose_image(job, partition)
    workdir = job.chdir or os.getcwd()
    script = os.path.abspath(job.script.path)
    runtime = os.path.join(workdir, RUNTIME_FILE)
    command = bootstrap_line(runtime, script, job.script.args, EXPORT_CONTRACTS[platform],
                             workdir)
    form = export_form(platform, job, allocation, partition, image, command,
                       rendezvous_id(job.job_name))
    if not submit.quiet:
        for note in allocation.warnings + tuple(image_notes) + form.notes:
            print_warning("sbatch", note)
        if not os.path.isfile(runtime):
            print_warning("sbatch", f"no runtime at {runtime} yet: write it with "
                                    f"sbatch-k8s runtime -o {runtime}")
    if platform == EXPORT_DLC:
        name = _UNSAFE.sub("-", job.job_name).strip("-.") or "job"
        path = os.path.join(os.getcwd(), f"{name}.dlc.params")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(render_params_file(form))
        except OSError as e:
            raise SlurmInputError(f"{path}: {e.strerror}") from e
        out.write(f"wrote {path}; submit it with: dlc create job --params_file {path}\n")
        return 0
    out.write(render_form(form))
    return 0
