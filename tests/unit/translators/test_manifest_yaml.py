"""Manifests as multi-document YAML: insertion order, literal blocks, stable bytes."""

from __future__ import annotations

import yaml

from sbatch_k8s.manifest_yaml import dump_manifests


def test_documents_keys_and_blocks() -> None:
    shared = {"k": "v"}
    text = dump_manifests([
        {"kind": "ConfigMap", "apiVersion": "v1",
         "data": {"script": "#!/bin/sh\necho hi\n", "z": "1", "a": True}},
        {"kind": "Secret", "x": shared, "y": shared, "t": ("a", "b")},
    ])
    assert text == (
        "kind: ConfigMap\n"
        "apiVersion: v1\n"
        "data:\n"
        "  script: |\n"
        "    #!/bin/sh\n"
        "    echo hi\n"
        "  z: '1'\n"
        "  a: true\n"
        "---\n"
        "kind: Secret\n"
        "x:\n"
        "  k: v\n"
        "y:\n"
        "  k: v\n"
        "t:\n"
        "- a\n"
        "- b\n")
    assert list(yaml.safe_load_all(text))[1]["t"] == ["a", "b"]


def test_long_lines_are_not_wrapped() -> None:
    value = "word " * 60
    text = dump_manifests([{"command": value.strip()}])
    assert len(text.splitlines()) == 1
    assert yaml.safe_load(text) == {"command": value.strip()}


def test_round_trip_of_awkward_strings() -> None:
    doc = {"a": "line with trailing space \nnext", "b": "None", "c": "0400", "d": "yes",
           "e": "üñí", "f": "tab\there\n"}
    assert yaml.safe_load(dump_manifests([doc])) == doc
