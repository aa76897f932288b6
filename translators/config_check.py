"""Checking a parsed TOML document against the schema of :mod:`translators.config`.

Every key's TOML type comes from its dataclass field's annotation, through one table
(:data:`VALUE_TYPES`): ``int`` is an integer, ``Tuple[Tuple[str, str], ...]`` a table of
strings, ``Tuple[VolumeConfig, ...]`` an array of tables… So a mistyped value
(``gpus = "four"``) is refused with a message naming the key, never met later as a crash.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Tuple

from translators.config import (
    ClusterConfig,
    REQUIRED,
    ConfigError,
    LocalConfig,
    PartitionConfig,
    UsersConfig,
    VolumeConfig,
)
from translators.security import partition_security_problems

_PAIRS = Tuple[Tuple[str, str], ...]


class ValueType(NamedTuple):
    """How a key is written in TOML (for messages and docs) and how it is read."""

    toml: str
    read: Callable[[Any, str], Any]


#: TOML's names for the Python types tomllib returns (bool before int: a bool is an int).
_TOML_KINDS = ((bool, "a boolean"), (int, "an integer"), (float, "a float"),
               (str, "a string"), (list, "an array"), (dict, "a table"))


def _shown(value: Any) -> str:
    """A wrong value as the message shows it: ``a string ("96")``, ``an array``."""
    kind = next((name for cls, name in _TOML_KINDS if isinstance(value, cls)), "a value")
    if isinstance(value, (list, dict)):
        return kind
    if isinstance(value, bool):
        return f"{kind} ({str(value).lower()})"
    if isinstance(value, str):
        return f'{kind} ("{value[:40]}")'
    return f"{kind} ({value})"


def _wrong(where: str, wanted: str, value: Any) -> ConfigError:
    return ConfigError(f"{where} must be {wanted}, not {_shown(value)}")


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _wrong(where, "a string", value)
    return value


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(where, "an integer", value)
    if value < 0:
        raise ConfigError(f"{where} must not be negative ({value})")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _wrong(where, "true or false", value)
    return value


def _pairs(value: Any, where: str) -> _PAIRS:
    if not isinstance(value, Mapping):
        raise _wrong(where, "a table of strings", value)
    return tuple(sorted((str(k), _string(v, f"{where}.{k}")) for k, v in value.items()))


def _array_of_pairs(value: Any, where: str) -> Tuple[_PAIRS, ...]:
    if not isinstance(value, list):
        raise _wrong(where, "an array of tables", value)
    return tuple(_pairs(item, f"{where}[{i}]") for i, item in enumerate(value))


def _volumes(value: Any, where: str) -> Tuple[VolumeConfig, ...]:
    if not isinstance(value, list):
        raise _wrong(where, "an array of tables", value)
    return tuple(_volume(item, f"{where}[{i}]") for i, item in enumerate(value))


def _local(value: Any, where: str) -> LocalConfig:
    return LocalConfig(**_fields_from(LocalConfig, value, where))


def _users(value: Any, where: str) -> UsersConfig:
    return UsersConfig(**_fields_from(UsersConfig, value, where))


def _integer_pairs(value: Any, where: str) -> Tuple[Tuple[str, int], ...]:
    if not isinstance(value, Mapping):
        raise _wrong(where, "a table of integers", value)
    return tuple(sorted((str(k), _integer(v, f"{where}.{k}")) for k, v in value.items()))


def _partitions(value: Any, where: str) -> Tuple[PartitionConfig, ...]:
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{where} must be a table of partition tables")
    return tuple(_partition(name, data, f"{where}.{name}") for name, data in value.items())


#: The one type table: a field's annotation (``Optional[...]`` removed) → its TOML type.
VALUE_TYPES: Dict[Any, ValueType] = {
    str: ValueType("string", _string),
    int: ValueType("integer", _integer),
    bool: ValueType("boolean", _boolean),
    _PAIRS: ValueType("table of strings", _pairs),
    Tuple[_PAIRS, ...]: ValueType("array of tables of strings", _array_of_pairs),
    Tuple[VolumeConfig, ...]: ValueType("array of tables", _volumes),
    Tuple[PartitionConfig, ...]: ValueType("table of tables", _partitions),
    LocalConfig: ValueType("table", _local),
    UsersConfig: ValueType("table", _users),
    Tuple[Tuple[str, int], ...]: ValueType("table of integers", _integer_pairs),
}


def _without_optional(annotation: Any) -> Any:
    args = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if getattr(annotation, "__origin__", None) is typing.Union and len(args) == 1:
        return args[0]
    return annotation


class Key(NamedTuple):
    """One configuration key of a table: name, type, default, meaning, allowed values."""

    name: str
    type: ValueType
    default: Any
    doc: str
    choices: Tuple[str, ...]


def schema_keys(cls: type) -> List[Key]:
    """The keys of the table ``cls`` describes, in declaration order."""
    hints = typing.get_type_hints(cls)
    keys = []
    for item in dataclasses.fields(cls):
        if item.metadata.get("internal"):
            continue
        default = item.default if item.default is not dataclasses.MISSING else (
            item.default_factory() if item.default_factory is not dataclasses.MISSING
            else REQUIRED)
        keys.append(Key(item.name, VALUE_TYPES[_without_optional(hints[item.name])], default,
                        item.metadata.get("doc", ""), item.metadata.get("choices", ())))
    return keys


def _fields_from(cls: type, data: Any, where: str) -> Dict[str, Any]:
    """``data`` (a TOML table) checked key by key against ``cls``'s schema."""
    if not isinstance(data, Mapping):
        raise _wrong(where, "a table", data)
    keys = {key.name: key for key in schema_keys(cls)}
    values: Dict[str, Any] = {}
    for name, raw in data.items():
        key = keys.get(name)
        spelled = f"{where}.{name}" if where else name
        if key is None:
            raise ConfigError(f"{where or 'config'}: unknown key {name!r}")
        value = key.type.read(raw, spelled)
        if key.choices and value not in key.choices:
            raise ConfigError(f"{spelled} must be one of {', '.join(key.choices)}, "
                              f"not {value!r}")
        values[name] = value
    return values


def _volume(data: Any, where: str) -> VolumeConfig:
    values = _fields_from(VolumeConfig, data, where)
    if "name" not in values or "mount_path" not in values:
        raise ConfigError(f"{where}: a volume needs name and mount_path")
    sources = [k for k in ("pvc", "nfs", "host_path") if values.get(k)]
    if len(sources) != 1:
        raise ConfigError(f"{where}: a volume needs exactly one of pvc, nfs, host_path")
    return VolumeConfig(**values)


def _partition(name: str, data: Any, where: str) -> PartitionConfig:
    partition = PartitionConfig(name=name, **_fields_from(PartitionConfig, data, where))
    problems = partition_security_problems(partition, where)
    if problems:
        raise ConfigError(problems[0])
    return partition


def _check_aliases(config: ClusterConfig) -> None:
    defined = {p.name for p in config.partitions}
    for alias, target in config.partition_aliases:
        if target not in defined:
            raise ConfigError(f"partition_aliases.{alias}: partition {target!r} is not "
                              "defined")


def cluster_config_from_toml(data: Mapping[str, Any]) -> ClusterConfig:
    """Check and convert a parsed TOML document; raises :class:`ConfigError`."""
    values = _fields_from(ClusterConfig, data, "")
    if "partitions" in values and "default_partition" not in values:
        values["default_partition"] = values["partitions"][0].name
    config = ClusterConfig(**values)
    if config.partition(None) is None:
        raise ConfigError(f"default_partition {config.default_partition!r} is not defined")
    _check_aliases(config)
    return config

