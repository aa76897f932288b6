"""A backend refuses and warns about exactly what the option table's per-backend level says
(``parsers.backend_support``): checked on the live table and on a row changed to say less."""

from __future__ import annotations

import copy

import pytest

from parsers import backend_support
from parsers.jobspec import OptionRecord
from parsers.options import KUBERNETES, LOCAL, REJECTED, SBATCH, long_names
from parsers.sbatch_input import RESET


def _given(*pairs):
    return tuple(OptionRecord(name, raw, "command line") for name, raw in pairs)


def _with_row(monkeypatch, name, backend, level, why):
    rows = dict(long_names(SBATCH))
    changed = copy.copy(rows[name])
    changed.on_backend = {**changed.on_backend, backend: (level, why)}
    rows[name] = changed
    monkeypatch.setattr(backend_support, "long_names", lambda command: rows)


@pytest.mark.parametrize("backend", [LOCAL, KUBERNETES])
def test_the_live_table_refuses_only_rows_it_marks_rejected(backend):
    rows = long_names(SBATCH)
    for option in {id(o): o for o in rows.values()}.values():
        refusal = backend_support.backend_refusal(_given((option.long, "1")), backend)
        marked = option.differs_on(backend) and option.level(SBATCH, backend) == REJECTED
        assert (refusal is not None) == marked, option.long


def test_a_row_rejected_on_one_backend_is_refused_there_only(monkeypatch):
    _with_row(monkeypatch, "comment", KUBERNETES, REJECTED, "not kept on a cluster")
    given = _given(("comment", "hello"))
    assert backend_support.backend_refusal(given, KUBERNETES) == (
        "--comment is not available on the Kubernetes backend: not kept on a cluster")
    assert backend_support.backend_refusal(given, LOCAL) is None


def test_an_option_reset_by_its_variable_is_not_refused(monkeypatch):
    _with_row(monkeypatch, "requeue", KUBERNETES, REJECTED, "no requeue")
    given = _given(("requeue", None), ("requeue", RESET))
    assert backend_support.backend_refusal(given, KUBERNETES) is None
