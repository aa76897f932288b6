"""Container resources from the allocation: CPU request only, memory request = limit, GPUs,
GPU types as node selectors, other gres as extended resources, --tmp."""

from __future__ import annotations

import dataclasses

import pytest

from parsers.input_errors import SlurmInputError
from tests.unit.translators.support import CONFIG, container, pod_spec, render_script, script

GPU = ["--partition=gpu"]


def resources(*directives: str, args=(), **kwargs) -> dict:
    return container(render_script(script(*directives), list(args), **kwargs))["resources"]


@pytest.mark.parametrize("directives, args, requests, limits", [
    ((), (), {"cpu": 1}, None),
    (("-n 4", "-c 2"), (), {"cpu": 8}, None),
    (("--mem=8G",), (), {"cpu": 1, "memory": "8192Mi"}, {"memory": "8192Mi"}),
    (("--mem-per-cpu=1000", "-c 4"), (), {"cpu": 4, "memory": "4000Mi"}, {"memory": "4000Mi"}),
    (("--mem=0",), GPU, {"cpu": 1}, None),
    (("--tmp=10G",), (), {"cpu": 1, "ephemeral-storage": "10240Mi"}, None),
    (("--gpus-per-node=4",), GPU, {"cpu": 1, "nvidia.com/gpu": 4}, {"nvidia.com/gpu": 4}),
    (("--gres=gpu:2",), GPU, {"cpu": 1, "nvidia.com/gpu": 2}, {"nvidia.com/gpu": 2}),
    (("-N 2", "--gpus=6"), GPU, {"cpu": 1, "nvidia.com/gpu": 3}, {"nvidia.com/gpu": 3}),
    (("--gpus-per-node=2", "--mem-per-gpu=16G"), GPU,
     {"cpu": 1, "memory": "32768Mi", "nvidia.com/gpu": 2},
     {"memory": "32768Mi", "nvidia.com/gpu": 2}),
])
def test_resources(directives, args, requests, limits) -> None:
    got = resources(*directives, args=args)
    assert got["requests"] == requests
    assert got.get("limits") == limits
    assert "cpu" not in got.get("limits", {})


@pytest.mark.parametrize("option", ["--gres=gpu:a100:4", "--gpus-per-node=a100:4",
                                    "--gpus=a100:4", "--gpus-per-task=a100:4"])
def test_gpu_type_selects_nodes_by_label(option: str) -> None:
    spec = pod_spec(render_script(script(option), GPU))
    assert spec["nodeSelector"] == {"node.kubernetes.io/instance-type": "p4d.24xlarge",
                                    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}


@pytest.mark.parametrize("option", ["--gres=gpu:v100:2", "--gpus=a100:2,h100:2"])
def test_unknown_or_mixed_gpu_types_are_refused(option: str) -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script(option), GPU)
    assert caught.value.lines == (
        "Batch job submission failed: Requested node configuration is not available",)


def _gpu_partition(**changes):
    gpu = dataclasses.replace(CONFIG.partition("gpu"), **changes)
    return dataclasses.replace(CONFIG, partitions=(gpu,), default_partition="gpu")


def test_gpu_type_without_label_warns() -> None:
    result = render_script(script("--gres=gpu:a100:1"), GPU,
                           config=_gpu_partition(gpu_type_label=None))
    assert "nvidia.com/gpu.product" not in pod_spec(result)["nodeSelector"]
    assert any("gpu_type_label" in w for w in result.warnings)


def test_other_gres_become_extended_resources() -> None:
    config = _gpu_partition(gres_resources=(("nic", "example.com/rdma"),
                                            ("fpga:x1", "example.com/fpga-x1")))
    got = container(render_script(script("--gres=nic:2,fpga:x1:1"), GPU, config=config))
    assert got["resources"]["requests"]["example.com/rdma"] == 2
    assert got["resources"]["limits"]["example.com/fpga-x1"] == 1


def test_unknown_gres_is_refused() -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script("--gres=nic:1"), GPU)
    assert caught.value.exit_code == 1
    assert caught.value.lines == (
        "Batch job submission failed: Invalid generic resource (gres) specification",)


def test_gpu_resource_name_comes_from_the_partition() -> None:
    config = _gpu_partition(gpu_resource="amd.com/gpu")
    got = resources("--gpus-per-node=1", args=GPU, config=config)
    assert got["limits"] == {"amd.com/gpu": 1}


def _description(result) -> dict:
    import json

    config_map = next(m for m in result.manifests
                      if m["kind"] == "ConfigMap" and "job.json" in m.get("data", {}))
    return json.loads(config_map["data"]["job.json"])


def test_gpus_that_do_not_spread_evenly_request_the_busiest_nodes_share() -> None:
    """``--gpus=3 -N2``: Slurm gives the nodes 2 and 1; pods are alike, so each requests 2,
    the submission warns, and job.json keeps each node's share for its GPU variables."""
    result = render_script(script("-N 2", "--gpus=3"), GPU)
    assert container(result)["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert _description(result)["gpus_on_nodes"] == [2, 1]
    assert any(w.startswith("--gpus is approximated:") for w in result.warnings)


def test_exclusive_pods_hold_the_gpus_the_batch_step_sees() -> None:
    """``--exclusive`` without a GPU request: the pods request every GPU of their node (the
    batch step lists them, as on Slurm), but steps get them only on request."""
    result = render_script(script("--exclusive"), GPU)
    assert container(result)["resources"]["limits"] == {"nvidia.com/gpu": 8}
    desc = _description(result)
    assert (desc["gpus_on_nodes"], desc["gpus_requested"]) == ([8], False)
    assert _description(render_script(script("--gpus-per-node=8"), GPU))["gpus_requested"]
