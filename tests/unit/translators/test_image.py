"""The pods' image: --container-image (pyxis spelling), srun lines, the partition's."""

from __future__ import annotations

import dataclasses

import pytest

from parsers.input_errors import SlurmInputError
from translators.image import pyxis_to_image
from tests.unit.translators.support import CONFIG, container, render_script, script


@pytest.mark.parametrize("reference, image", [
    ("nvcr.io#nvidia/pytorch:24.01-py3", "nvcr.io/nvidia/pytorch:24.01-py3"),
    ("docker://ubuntu:22.04", "ubuntu:22.04"),
    ("docker://nvcr.io#nvidia/cuda:12.2.0-base", "nvcr.io/nvidia/cuda:12.2.0-base"),
    ("bob@registry.example:5000#team/img", "registry.example:5000/team/img"),
    ("ubuntu@sha256:0123abcd", "ubuntu@sha256:0123abcd"),
    ("python:3.11-slim", "python:3.11-slim"),
])
def test_pyxis_references(reference: str, image: str) -> None:
    assert pyxis_to_image(reference) == image


@pytest.mark.parametrize("reference", ["/scratch/images/pytorch.sqsh", "./img.sqsh", "#"])
def test_refused_references(reference: str) -> None:
    with pytest.raises(SlurmInputError):
        pyxis_to_image(reference)


def test_sbatch_option_wins_over_steps_and_partition() -> None:
    result = render_script(script("--container-image='nvcr.io#nvidia/pytorch:24.01-py3'",
                                  body="srun --container-image=ubuntu:22.04 true"))
    assert container(result)["image"] == "nvcr.io/nvidia/pytorch:24.01-py3"
    assert any("ubuntu:22.04" in w and "line 3" in w for w in result.warnings)


def test_first_literal_step_image_is_used() -> None:
    body = 'srun --container-image="$IMG" true\nsrun --container-image=alpine:3 true\n'
    result = render_script(script(body=body))
    assert container(result)["image"] == "alpine:3"
    assert result.warnings == ()


def test_partition_image_is_the_default() -> None:
    assert container(render_script(script()))["image"] == "python:3.11-slim"


def test_no_image_anywhere_is_refused() -> None:
    partitions = tuple(dataclasses.replace(p, image=None) for p in CONFIG.partitions)
    config = dataclasses.replace(CONFIG, partitions=partitions)
    with pytest.raises(SlurmInputError) as caught:
        render_script(script(), config=config)
    assert caught.value.exit_code == 1
    assert caught.value.lines == ("Batch job submission failed: no container image: give one "
                                  "with --container-image or set an image for partition debug",)


def test_a_registry_cut_at_a_directive_comment_is_flagged() -> None:
    result = render_script(script("--container-image=nvcr.io#nvidia/pytorch:24.01-py3"))
    assert container(result)["image"] == "nvcr.io"
    assert any("# starts a comment" in w for w in result.warnings)
