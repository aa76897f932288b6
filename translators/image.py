"""The container image of a job's pods.

Where it comes from, first match wins (pyxis conventions, since Slurm itself has no image):

1. ``sbatch --container-image``;
2. the first literal ``--container-image`` of an ``srun`` line in the script (values with
   ``$`` are skipped: they are only known when the script runs);
3. the partition's ``image``.

pyxis spells images ``[USER@][REGISTRY#]IMAGE[:TAG]`` (``nvcr.io#nvidia/pytorch:24.01-py3``);
Kubernetes wants ``REGISTRY/IMAGE:TAG``. pyxis also runs squashfs files, which a pod cannot.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.jobspec import JobSpec
from translators.config import PartitionConfig

_DOCKER_PREFIX = "docker://"


def pyxis_to_image(reference: str) -> str:
    """A pyxis image reference as Kubernetes spells it; SlurmInputError for a squashfs file."""
    text = reference.strip()
    if text.startswith(_DOCKER_PREFIX):
        text = text[len(_DOCKER_PREFIX):]
    if text.startswith(("/", "./", "../")) or text.endswith((".sqsh", ".squashfs")):
        raise SlurmInputError(
            f"--container-image={reference}: squashfs files cannot run on Kubernetes; "
            "give an image from a registry", exit_code=EXIT_SUBMIT_ERROR)
    if "#" in text:
        registry, _, image = text.partition("#")
        registry = registry.rpartition("@")[2]
        text = f"{registry}/{image}" if registry else image
    if not text:
        raise SlurmInputError(f"--container-image={reference}: no image name",
                              exit_code=EXIT_SUBMIT_ERROR)
    return text


def _step_images(job: JobSpec) -> List[Tuple[int, str]]:
    """Literal ``--container-image`` values of the script's srun lines, with line numbers."""
    found = []
    for step in job.steps:
        value = step.option("container-image")
        if value and "$" not in value:
            found.append((step.line_no, pyxis_to_image(value)))
    return found


def choose_image(job: JobSpec, partition: PartitionConfig) -> Tuple[str, Tuple[str, ...]]:
    """The pods' image and warnings about step images that differ from it."""
    steps = _step_images(job)
    chosen: Optional[str] = None
    if job.container_image:
        chosen = pyxis_to_image(job.container_image)
    elif steps:
        chosen = steps[0][1]
    elif partition.image:
        chosen = partition.image
    if chosen is None:
        raise SlurmInputError(
            "Batch job submission failed: no container image: give one with "
            f"--container-image or set an image for partition {partition.name}",
            exit_code=EXIT_SUBMIT_ERROR)
    others = [(line, image) for line, image in steps if image != chosen]
    warnings = [f"srun at line {line} asks for image {image}, but every pod of this job runs "
                f"{chosen}; that step will fail" for line, image in others]
    if "/" not in chosen and "." in chosen.partition(":")[0]:
        warnings.append(f"--container-image={chosen} names a registry but no image: in an "
                        "#SBATCH line, # starts a comment; write registry\\#image or quote it")
    return chosen, tuple(warnings)
