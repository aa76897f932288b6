"""Labels and annotations: one table of keys, valid label values, the options as given."""

from __future__ import annotations

import shlex

import pytest

from parsers.jobspec import OptionRecord
from translators import metadata
from translators.metadata import given_to_words, text_to_label_value
from tests.unit.translators.support import manifest, render_script, script, workload


@pytest.mark.parametrize("text, value", [
    ("alice", "alice"),
    ("first.last@example.org", "first.last-example.org"),
    ("-dash_", "dash"),
    ("x" * 70, "x" * 63),
    ("a" * 62 + "._b", "a" * 62),
    ("!!!", ""),
])
def test_label_values(text: str, value: str) -> None:
    assert text_to_label_value(text) == value


def test_every_key_is_in_the_table() -> None:
    keys = [row[0] for row in metadata.METADATA_KEYS]
    assert len(keys) == len(set(keys))
    constants = [v for k, v in vars(metadata).items()
                 if k.isupper() and isinstance(v, str) and "/" in v]
    assert set(constants) <= set(keys)


def test_options_as_words_and_sources() -> None:
    given = [OptionRecord("nodes", "2", "job.sh:3: #SBATCH --nodes=2"),
             OptionRecord("exclusive", None, "command line"),
             OptionRecord("comment", "two words", "command line"),
             OptionRecord("requeue", "\0reset", "SBATCH_REQUEUE"),
             OptionRecord("account", "acct", "SBATCH_ACCOUNT")]
    words, sources = given_to_words(given)
    assert shlex.split(words) == ["--nodes=2", "--exclusive", "--comment=two words",
                                  "--account=acct"]
    assert sources == "script:3 cli cli SBATCH_ACCOUNT"


def test_labels_on_every_object_and_pod_annotations_on_the_workload() -> None:
    result = render_script(script("--job-name=x", "--nodes=2", "--account=Team_A",
                                  "--comment='hi there'"), ["-p", "debug"])
    expected = {metadata.JOB_ID: "1234", metadata.USER: "alice",
                metadata.PARTITION: "debug", metadata.ACCOUNT: "Team_A",
                metadata.MANAGED_BY: "sbatch-k8s"}
    for obj in result.manifests:
        assert expected.items() <= obj["metadata"]["labels"].items()
        assert "namespace" not in obj["metadata"]
        assert "ownerReferences" not in obj["metadata"]
    job = workload(result)
    assert expected.items() <= job["spec"]["template"]["metadata"]["labels"].items()
    annotations = job["metadata"]["annotations"]
    assert annotations[metadata.JOB_NAME] == "x"
    assert annotations[metadata.SUBMIT_TIME] == "2026-11-22T09:04:34"
    assert shlex.split(annotations[metadata.OPTIONS]) == [
        "--job-name=x", "--nodes=2", "--account=Team_A", "--comment=hi there",
        "--partition=debug"]
    assert annotations[metadata.OPTION_SOURCES].split() == [
        "script:2", "script:3", "script:4", "script:5", "cli"]
    assert annotations[metadata.COMMENT] == "hi there"
    assert "annotations" not in manifest(result, "ConfigMap")["metadata"]


def test_no_comment_annotation_without_comment() -> None:
    assert metadata.COMMENT not in workload(render_script(script()))["metadata"]["annotations"]


@pytest.mark.parametrize("raw, shown", [
    ("ALL", "ALL"),
    ("NONE", "NONE"),
    ("ALL,HF_TOKEN=abc", "ALL,HF_TOKEN"),
    ("PATH,KEY=a=b,'QUOTED=x,y'", "PATH,KEY,QUOTED"),
    ("A='unbalanced", ""),
])
def test_export_values_are_left_out_of_the_options(raw: str, shown: str) -> None:
    words, _ = given_to_words([OptionRecord("export", raw, "command line")])
    assert shlex.split(words) == [f"--export={shown}"]
