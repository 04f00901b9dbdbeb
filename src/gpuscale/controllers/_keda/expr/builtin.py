"""expr's builtins: the list, written once, and the ones gpuscale evaluates.

expr-lang ``builtin/builtin.go`` (the list and each builtin's checks) and
``builtin/lib.go`` (how ``max``, ``min``, ``mean`` and ``median`` walk nested arrays). The
predicate builtins (``all``, ``filter``, ``reduce``, ...) run in the evaluator, which owns
their scopes; the rest run here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuscale._gomath import (
    GoSyntaxError,
    go_ceil,
    go_float_to_int64,
    go_floor,
    parse_go_float,
    wrap_int64,
)
from gpuscale.controllers._keda.expr.ast import Node
from gpuscale.controllers._keda.expr.runtime import (
    Value,
    go_round,
    is_int,
    is_number,
    less,
    to_string,
    type_name,
)
from gpuscale.controllers._keda.goparse import parse_go_int

if TYPE_CHECKING:
    from gpuscale.controllers._keda.expr.vm import Evaluator

__all__ = ["BUILTINS", "PREDICATES", "SUPPORTED_BUILTINS", "UNSUPPORTED_BUILTINS", "call_builtin"]

# Every builtin expr v1.17.8 knows, in ``builtin/builtin.go``'s order: its name, the
# argument kinds of a predicate builtin (``parser/parser.go``'s predicates table: "e" an
# expression, "p" a predicate, a trailing "?" an optional argument; None for the others),
# and whether gpuscale evaluates it (the checker refuses the others by name).
_TABLE: tuple[tuple[str, tuple[str, ...] | None, bool], ...] = (
    (
        "all",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "none",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "any",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "one",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "filter",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "map",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "find",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "findIndex",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "findLast",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "findLastIndex",
        (
            "e",
            "p",
        ),
        True,
    ),
    (
        "count",
        (
            "e",
            "p?",
        ),
        True,
    ),
    (
        "sum",
        (
            "e",
            "p?",
        ),
        True,
    ),
    (
        "groupBy",
        (
            "e",
            "p",
        ),
        False,
    ),
    (
        "sortBy",
        (
            "e",
            "p",
            "e?",
        ),
        False,
    ),
    (
        "reduce",
        (
            "e",
            "p",
            "e?",
        ),
        True,
    ),
    ("len", None, True),
    ("type", None, False),
    ("abs", None, True),
    ("ceil", None, True),
    ("floor", None, True),
    ("round", None, True),
    ("int", None, True),
    ("float", None, True),
    ("string", None, True),
    ("trim", None, False),
    ("trimPrefix", None, False),
    ("trimSuffix", None, False),
    ("upper", None, False),
    ("lower", None, False),
    ("split", None, False),
    ("splitAfter", None, False),
    ("replace", None, False),
    ("repeat", None, False),
    ("join", None, False),
    ("indexOf", None, False),
    ("lastIndexOf", None, False),
    ("hasPrefix", None, False),
    ("hasSuffix", None, False),
    ("max", None, True),
    ("min", None, True),
    ("mean", None, True),
    ("median", None, True),
    ("toJSON", None, False),
    ("fromJSON", None, False),
    ("toBase64", None, False),
    ("fromBase64", None, False),
    ("now", None, False),
    ("duration", None, False),
    ("date", None, False),
    ("timezone", None, False),
    ("first", None, True),
    ("last", None, True),
    ("get", None, False),
    ("take", None, False),
    ("keys", None, True),
    ("values", None, True),
    ("toPairs", None, False),
    ("fromPairs", None, False),
    ("reverse", None, True),
    ("uniq", None, False),
    ("concat", None, False),
    ("flatten", None, False),
    ("sort", None, False),
    ("bitnot", None, False),
    ("bitand", None, False),
    ("bitor", None, False),
    ("bitxor", None, False),
    ("bitnand", None, False),
    ("bitshl", None, False),
    ("bitshr", None, False),
    ("bitushr", None, False),
)
BUILTINS = frozenset(name for name, _, _ in _TABLE)
"""Every expr builtin name: a ``let`` cannot redeclare one, a call to one parses as a builtin."""
PREDICATES: dict[str, tuple[str, ...]] = {name: kinds for name, kinds, _ in _TABLE if kinds}
"""The predicate builtins and their argument kinds."""
UNSUPPORTED_BUILTINS = frozenset(name for name, _, supported in _TABLE if not supported)
"""Builtins expr has and gpuscale's evaluator does not."""
SUPPORTED_BUILTINS = tuple(name for name, _, supported in _TABLE if supported)
"""The builtins gpuscale evaluates, in expr's order."""


def _numbers(evaluator: Evaluator, node: Node, name: str, args: list[Value]) -> list[Value]:
    """Flatten the arguments of max/min/mean/median the way builtin/lib.go walks them."""
    flat: list[Value] = []

    def walk(value: Value, top: bool) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item, False)
        elif is_number(value):
            flat.append(value)
        else:
            raise evaluator.error(node, f"invalid argument for {name} (type {type_name(value)})")

    for arg in args:
        walk(arg, True)
    return flat


def call_builtin(evaluator: Evaluator, node: Node, name: str, args: list[Value]) -> Value:
    arg = args[0] if args else None
    if name == "len":
        if isinstance(arg, list | dict | str):
            return len(arg)
        raise evaluator.error(node, f"invalid argument for len (type {type_name(arg)})")
    if name == "abs":
        if is_int(arg):
            return wrap_int64(abs(arg))  # type: ignore[arg-type]
        if isinstance(arg, float):
            return abs(arg)
        raise evaluator.error(node, f"invalid argument for abs (type {type_name(arg)})")
    if name in ("ceil", "floor", "round"):
        if is_int(arg):
            return float(arg)  # type: ignore[arg-type]
        if not isinstance(arg, float):
            raise evaluator.error(node, f"invalid argument for {name} (type {type_name(arg)})")
        if name == "round":
            return go_round(arg)
        return go_ceil(arg) if name == "ceil" else go_floor(arg)
    if name == "int":
        if is_int(arg):
            return arg
        if isinstance(arg, float):
            return go_float_to_int64(arg)
        if isinstance(arg, str):
            try:
                return parse_go_int(arg)
            except GoSyntaxError:
                raise evaluator.error(node, f"invalid operation: int({arg})") from None
        raise evaluator.error(node, f"invalid operation: int({type_name(arg)})")
    if name == "float":
        if is_int(arg):
            return float(arg)  # type: ignore[arg-type]
        if isinstance(arg, float):
            return arg
        if isinstance(arg, str):
            try:
                return parse_go_float(arg)
            except GoSyntaxError:
                raise evaluator.error(node, f"invalid operation: float({arg})") from None
        raise evaluator.error(node, f"invalid operation: float({type_name(arg)})")
    if name == "string":
        return to_string(arg)
    if name in ("max", "min"):
        if len(args) == 1 and not isinstance(arg, list) and not is_number(arg):
            return arg
        best: Value = None
        for value in _numbers(evaluator, node, name, args):
            if best is None:
                best = value
                continue
            if (name == "max" and less(best, value)) or (name == "min" and less(value, best)):
                best = value
        return best
    if name in ("mean", "median"):
        floats = [float(v) for v in _numbers(evaluator, node, name, args)]  # type: ignore[arg-type]
        if not floats:
            return 0.0
        if name == "mean":
            return _go_sum(floats) / len(floats)
        floats.sort()
        middle = len(floats) // 2
        if len(floats) % 2:
            return floats[middle]
        return (floats[middle - 1] + floats[middle]) / 2
    if name in ("first", "last"):
        if not isinstance(arg, list):
            raise evaluator.error(node, f"cannot get {name} of {type_name(arg)}")
        if not arg:
            return None
        return arg[0] if name == "first" else arg[-1]
    if name == "reverse":
        if not isinstance(arg, list):
            raise evaluator.error(node, f"cannot reverse {type_name(arg)}")
        return list(reversed(arg))
    if name in ("keys", "values"):
        if not isinstance(arg, dict):
            raise evaluator.error(node, f"cannot get {name} from {type_name(arg)}")
        return list(arg.keys() if name == "keys" else arg.values())
    raise evaluator.error(node, f"builtin {name} is not supported by gpuscale's evaluator")


def _go_sum(values: list[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total
