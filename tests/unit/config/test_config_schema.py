"""The configuration file is checked against its schema: every key's type comes from the
dataclass annotation, and a mistyped value is refused with a message naming the key."""

from __future__ import annotations

import pytest

from translators.config import (
    BUILT_IN,
    ClusterConfig,
    ConfigError,
    LocalConfig,
    PartitionConfig,
    VolumeConfig,
    cluster_config_from_dict,
)
from translators.config_check import VALUE_TYPES, schema_keys


@pytest.mark.parametrize("data, message", [
    ({"local": {"gpus": "four"}}, 'local.gpus must be an integer, not a string ("four")'),
    ({"local": {"cpus": 4.5}}, "local.cpus must be an integer, not a float (4.5)"),
    ({"local": {"gpus": True}}, "local.gpus must be an integer, not a boolean (true)"),
    ({"local": {"gpus": -1}}, "local.gpus must not be negative (-1)"),
    ({"local": "big"}, 'local must be a table, not a string ("big")'),
    ({"partitions": {"gpu": {"node_cpus": "96"}}},
     'partitions.gpu.node_cpus must be an integer, not a string ("96")'),
    ({"partitions": {"gpu": {"image": 3}}},
     "partitions.gpu.image must be a string, not an integer (3)"),
    ({"partitions": {"gpu": {"node_selector": ["a"]}}},
     "partitions.gpu.node_selector must be a table of strings, not an array"),
    ({"partitions": {"gpu": {"node_selector": {"zone": 1}}}},
     "partitions.gpu.node_selector.zone must be a string, not an integer (1)"),
    ({"partitions": {"gpu": {"tolerations": {"key": "x"}}}},
     "partitions.gpu.tolerations must be an array of tables, not a table"),
    ({"partitions": {"gpu": {"volumes": [{"name": "h", "mount_path": "/h", "pvc": "h",
                                          "read_only": "yes"}]}}},
     'partitions.gpu.volumes[0].read_only must be true or false, not a string ("yes")'),
    ({"partitions": {"gpu": {"target": "deployment"}}},
     "partitions.gpu.target must be one of indexed-job, jobset, pytorchjob, mpijob, "
     "not 'deployment'"),
    ({"cluster_name": ["a"]}, "cluster_name must be a string, not an array"),
    ({"backend": "slurm"}, "backend must be one of local, kubernetes, not 'slurm'"),
    ({"nonsense": 1}, "config: unknown key 'nonsense'"),
    ({"partitions": {"gpu": {"name": "x"}}}, "partitions.gpu: unknown key 'name'"),
    ({"partitions": {"gpu": {}}, "partition_aliases": {"a100": "h100"}},
     "partition_aliases.a100: partition 'h100' is not defined"),
    ({"partition_aliases": {"*": 3}}, "partition_aliases.* must be a string, not an integer (3)"),
    ({"partitions": {"gpu": {"contract": "mpijob"}}},
     "partitions.gpu.contract must be one of slurm, pytorchjob, aihub, aistation, "
     "task-training, task-training-deepspeed, task-training-horovod, "
     "task-training-tensorflow, volcano, modelarts, not 'mpijob'"),
])
def test_mistyped_values_are_refused_naming_the_key(data, message):
    with pytest.raises(ConfigError) as e:
        cluster_config_from_dict(data)
    assert str(e.value) == message


def test_every_annotation_has_a_toml_type_and_every_key_a_doc():
    for cls in (ClusterConfig, PartitionConfig, VolumeConfig, LocalConfig):
        for key in schema_keys(cls):
            assert key.type in VALUE_TYPES.values()
            assert key.doc, f"{cls.__name__}.{key.name} has no doc"


def test_well_typed_values_are_converted():
    config = cluster_config_from_dict({
        "partition_aliases": {"gpu": "a100", "*": "debug"},
        "local": {"gpus": 4, "cpus": 8},
        "partitions": {"debug": {"node_cpus": 4},
                       "a100": {"node_gpus": 8, "def_mem_per_cpu_mb": 2000,
                                "pod_security": "baseline",
                                "node_selector": {"zone": "b", "arch": "amd64"},
                                "tolerations": [{"key": "k", "operator": "Exists"}],
                                "volumes": [{"name": "h", "mount_path": "/h",
                                             "nfs": {"server": "s", "path": "/p"}}]}}})
    assert config.local == LocalConfig(cpus=8, gpus=4)
    assert config.default_partition == "debug"
    gpu = config.partition("a100")
    assert gpu is not None and gpu.node_gpus == 8 and gpu.def_mem_per_cpu_mb == 2000
    assert gpu.node_selector == (("arch", "amd64"), ("zone", "b"))
    assert gpu.tolerations == ((("key", "k"), ("operator", "Exists")),)
    assert gpu.volumes[0].nfs == (("path", "/p"), ("server", "s"))
    assert config.alias_of("gpu") == "a100" and config.catch_all() == "debug"


def test_the_built_in_configuration_takes_any_partition_name():
    assert BUILT_IN.catch_all() == "debug"
    assert BUILT_IN.partition(None) == ClusterConfig().partition(None)
    assert ClusterConfig().catch_all() is None
