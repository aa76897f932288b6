"""Kubernetes manifests as one multi-document YAML text (``kubectl apply -f`` reads it).

Keys keep their insertion order (the translators order them the way people read manifests),
block style throughout, multi-line strings (scripts, ``job.json``) as literal blocks, no
anchors or aliases, no line wrapping: the same manifests always give the same bytes.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence


def _dumper() -> Any:
    import yaml

    class ManifestDumper(yaml.SafeDumper):
        """SafeDumper without aliases, with literal blocks for multi-line strings."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

    def represent_str(dumper: yaml.SafeDumper, text: str) -> Any:
        style = "|" if "\n" in text else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    ManifestDumper.add_representer(str, represent_str)
    ManifestDumper.add_representer(tuple, ManifestDumper.represent_list)
    return ManifestDumper


def dump_manifests(manifests: Sequence[Mapping[str, Any]]) -> str:
    """The manifests as YAML documents separated by ``---`` lines."""
    import yaml

    dumper = _dumper()
    documents = [
        yaml.dump(dict(manifest), Dumper=dumper, sort_keys=False, default_flow_style=False,
                  allow_unicode=True, width=float("inf"))
        for manifest in manifests
    ]
    return "---\n".join(documents)
