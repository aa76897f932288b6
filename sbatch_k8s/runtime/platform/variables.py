"""A platform's variables read back into Slurm's facts, through the one table of
:mod:`parsers.platforms.contract_facts`.

An adapter asks :func:`facts_from_environment` for its contract's reading and takes each
fact from it (:meth:`PlatformVariables.get`, :meth:`PlatformVariables.require`): the first
row of the reading that is set carries it, parsed by the fact's own inverse. A value that is
not the fact is one line naming the variable (``RANK='x' is not a node rank``); a lenient
row's such value says nothing (``PET_NPROC_PER_NODE=auto``); an elastic row accepts
torchrun's ``N:N``. Facts are read when first asked, so an adapter's checks run in its own
order.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from parsers.platforms.contract_facts import READINGS, Fact, Variable
from sbatch_k8s.runtime.contract import ContractError

#: A fact as read: its value and the variable that gave it.
Found = Tuple[Any, str]


def read_variable(variable: Variable, text: str) -> Any:
    """``text``, the value of ``variable``, as the fact it carries; ContractError naming the
    variable when it is not one."""
    fact = variable.fact
    assert fact is not None, variable.name
    if variable.elastic and ":" in text:
        low, _, high = text.partition(":")
        if low.strip() != high.strip():
            raise ContractError(f"{variable.name}={text!r} is an elastic range; platform "
                                "mode runs a fixed number of nodes (set min = max)")
        text = low
    try:
        return fact.parse(text)
    except ValueError:
        raise ContractError(f"{variable.name}={text!r} is not {variable.what}") from None


class PlatformVariables:
    """One container's variables under a contract's reading."""

    def __init__(self, reading: Sequence[Variable], environ: Mapping[str, str]) -> None:
        self.reading = tuple(row for row in reading if row.fact is not None)
        self.environ = environ
        self._found: Dict[Fact, Optional[Found]] = {}

    def carriers(self, fact: Fact) -> Tuple[str, ...]:
        """The variables that may carry ``fact``, preferred first."""
        return tuple(row.name for row in self.reading if row.fact is fact)

    def name_of(self, fact: Fact) -> str:
        """The variable preferred for ``fact`` (for messages and evidence)."""
        return self.carriers(fact)[0]

    def found(self, fact: Fact) -> Optional[Found]:
        """``fact``'s value and its variable, or None when no variable gives it."""
        if fact not in self._found:
            self._found[fact] = self._read(fact)
        return self._found[fact]

    def _read(self, fact: Fact) -> Optional[Found]:
        for row in self.reading:
            if row.fact is not fact or row.name not in self.environ:
                continue
            try:
                return read_variable(row, self.environ[row.name]), row.name
            except ContractError:
                if not row.lenient:
                    raise
        return None

    def get(self, fact: Fact) -> Any:
        """``fact``'s value, or None when no variable gives it."""
        found = self.found(fact)
        return None if found is None else found[0]

    def variable(self, fact: Fact) -> Optional[str]:
        """The variable that gives ``fact``, or None."""
        found = self.found(fact)
        return None if found is None else found[1]

    def require(self, fact: Fact, unset: str = "") -> Any:
        """``fact``'s value; ContractError ``unset`` (by default: which variables are not
        set) when no variable gives it."""
        found = self.found(fact)
        if found is None:
            names = self.carriers(fact)
            raise ContractError(unset or (f"{names[0]} is not set" if len(names) == 1 else
                                          f"neither {' nor '.join(names)} is set"))
        return found[0]


def facts_from_environment(reading: Union[str, Sequence[Variable]],
                           environ: Mapping[str, str]) -> PlatformVariables:
    """``environ`` read as the contract ``reading`` names (a key of
    :data:`parsers.platforms.contract_facts.READINGS`) or as the given rows."""
    rows = READINGS[reading] if isinstance(reading, str) else reading
    return PlatformVariables(rows, environ)
