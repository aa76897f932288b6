"""sacct's usage texts: CPU times and KiB amounts as Slurm prints them."""

from __future__ import annotations

from parsers.formats.usage_values import cpu_time_text, kib_text


def test_cpu_time_forms() -> None:
    assert cpu_time_text(0) == "00:00.000"
    assert cpu_time_text(2.3456) == "00:02.346"
    assert cpu_time_text(125.5) == "02:05.500"
    assert cpu_time_text(3723.9) == "01:02:03"
    assert cpu_time_text(90061) == "1-01:01:01"


def test_kib_amounts_scale_only_when_exact() -> None:
    assert kib_text(0) == "0"
    assert kib_text(10452) == "10452K"
    assert kib_text(5266672) == "5266672K"
    assert kib_text(102400) == "100M"
    assert kib_text(1024 * 1024) == "1G"
