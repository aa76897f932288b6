"""The option table's per-backend levels, applied to a submitted job.

The parser applies each row's own level (its refusals and warnings do not depend on where the
job runs). A row may add that one backend does less (``Option.on_backend``); that backend
then calls :func:`backend_refusal` before it creates anything, and prints
:func:`backend_warnings`. Both read the table only, so what a backend refuses or ignores is
exactly what the table (and so ``--help``, ``--k8s-lint`` and the README) says.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from parsers.jobspec import OptionRecord
from parsers.options import APPROXIMATED, IGNORED, REJECTED, SBATCH, Option, long_names
from parsers.sbatch_input import RESET

#: How a backend is named in messages.
BACKEND_WORDS = {"local": "the local backend", "kubernetes": "the Kubernetes backend"}


def options_in_effect(given: Sequence[OptionRecord]) -> Tuple[Option, ...]:
    """The options whose value the job keeps, in the order first given: for each field the
    last option that set it, unless an environment variable reset it (a flag variable set
    to ``no``)."""
    rows = long_names(SBATCH)
    last: Dict[str, Optional[Option]] = {}
    for record in given:
        option = rows.get(record.name)
        if option is None:
            continue
        last[option.field or option.long] = None if record.raw == RESET else option
    return tuple(o for o in last.values() if o is not None)


def _differing(given: Sequence[OptionRecord], backend: str, levels: Tuple[str, ...]
               ) -> List[Option]:
    return [o for o in options_in_effect(given)
            if o.differs_on(backend) and o.level(SBATCH, backend) in levels]


def backend_refusal(given: Sequence[OptionRecord], backend: str) -> Optional[str]:
    """Why ``backend`` refuses the job (the first option the table rejects there), or None."""
    for option in _differing(given, backend, (REJECTED,)):
        return (f"--{option.long} is not available on {BACKEND_WORDS[backend]}: "
                f"{option.note_on(backend)}")
    return None


def backend_warnings(given: Sequence[OptionRecord], backend: str) -> Tuple[str, ...]:
    """One warning per option that ``backend`` ignores or approximates although the row's
    own level says more (the parser has already warned about the row's own level)."""
    notes = []
    for option in _differing(given, backend, (IGNORED, APPROXIMATED)):
        verb = "has no effect" if option.level(SBATCH, backend) == IGNORED else \
            "is approximated"
        notes.append(f"--{option.long} {verb} on {BACKEND_WORDS[backend]}: "
                     f"{option.note_on(backend)}")
    return tuple(notes)
