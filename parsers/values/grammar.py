"""Load the ``.lark`` grammars of this package and run them.

Each value language lives in ``<name>.lark`` beside the module that evaluates it. Grammars are
read with :func:`pkgutil.get_data` (so they load from a zipapp as well as from a directory),
compiled to LALR parsers on first use and cached for the life of the process.

lark itself is imported only when a value is first parsed: a command that merely formats values
(``squeue`` printing a time) never pays for it. For the same reason the transformer classes of
the value modules are plain classes whose methods are named after grammar rules and terminals;
:func:`parse_value` mixes them with :class:`lark.Transformer` at first use.
"""

from __future__ import annotations

import pkgutil
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from parsers.input_errors import ValueSyntaxError

if TYPE_CHECKING:  # pragma: no cover - typing only
    import lark


@lru_cache(maxsize=None)
def load_parser(name: str, start: str = "start") -> "lark.Lark":
    """The LALR parser of ``<name>.lark`` (contextual lexer), built once per process."""
    import lark

    data = pkgutil.get_data("parsers.values", f"{name}.lark")
    if data is None:  # pragma: no cover - only with an exotic loader
        raise FileNotFoundError(f"{name}.lark")
    return lark.Lark(data.decode("utf-8"), parser="lalr", lexer="contextual", start=start)


def build_all() -> None:
    """Build every grammar of the package now (a server does, so its forked children don't)."""
    import parsers.values as values

    for info in pkgutil.iter_modules(values.__path__):
        try:
            load_parser(info.name)
        except (OSError, ValueError):
            continue


@lru_cache(maxsize=None)
def _lark_transformer(rules: type) -> type:
    import lark

    return type(rules.__name__, (rules, lark.Transformer), {"__module__": rules.__module__})


def parse_value(name: str, text: str, rules: type, start: str = "start") -> Any:
    """Parse ``text`` with grammar ``name`` and evaluate the tree with the ``rules`` class.

    Every failure (a lexer or parser error, or a :class:`ValueSyntaxError` raised by a rule
    method) surfaces as :class:`ValueSyntaxError`; lark's own exceptions never escape.
    """
    import lark

    try:
        tree = load_parser(name, start).parse(text)
        return _lark_transformer(rules)().transform(tree)
    except lark.exceptions.VisitError as e:
        if isinstance(e.orig_exc, ValueSyntaxError):
            raise e.orig_exc from None
        raise
    except lark.exceptions.LarkError as e:
        raise ValueSyntaxError(f"invalid value {text!r}") from e
