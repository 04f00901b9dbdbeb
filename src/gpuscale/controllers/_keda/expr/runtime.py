"""Values at run time with Go's semantics: expr-lang ``vm/runtime/runtime.go`` (``Equal``,
``Less``, ``%T`` names, ``fmt``'s printing) and Go's ``math.Round`` and integer ``%``."""

from __future__ import annotations

import math

from gpuscale._gomath import format_go_float

__all__ = [
    "NilChainError",
    "Value",
    "as_float",
    "as_int",
    "equal",
    "go_mod",
    "go_round",
    "is_int",
    "is_number",
    "less",
    "to_string",
    "type_name",
]

Value = object  # None (nil) | bool | int (Go int) | float | str | list | dict
"""A run-time value."""


class NilChainError(Exception):
    """Raised inside a ``?.`` chain when an optional step meets nil; the chain yields nil."""


def type_name(value: Value) -> str:
    """Go's ``%T`` of the runtime value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def as_int(value: Value) -> int:
    assert isinstance(value, int)
    return value


def as_float(value: Value) -> float:
    assert isinstance(value, int | float)
    return float(value)


def less(left: Value, right: Value) -> bool:
    """runtime.Less on two numbers: exact for two ints, else in float64."""
    if is_int(left) and is_int(right):
        return as_int(left) < as_int(right)
    return as_float(left) < as_float(right)


def is_int(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Value) -> bool:
    return is_int(value) or isinstance(value, float)


def go_round(value: float) -> float:
    """``math.Round``: half away from zero."""
    if math.isinf(value) or math.isnan(value):
        return value
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return math.copysign(whole, value) if whole == 0 else whole


def to_string(value: Value) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_int(value):
        return str(value)
    if isinstance(value, float):
        return format_go_float(value, "g")
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(to_string(item) for item in value) + "]"
    assert isinstance(value, dict)
    items = " ".join(f"{to_string(k)}:{to_string(v)}" for k, v in sorted(value.items()))
    return f"map[{items}]"


def equal(left: Value, right: Value) -> bool:
    """runtime.Equal: numbers compare across int and float; other values must match in type."""
    if is_number(left) and is_number(right):
        if is_int(left) and is_int(right):
            return left == right
        return float(left) == float(right)  # type: ignore[arg-type]
    return _deep_equal(left, right)


def _deep_equal(left: Value, right: Value) -> bool:
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return left.keys() == right.keys() and all(_deep_equal(left[k], right[k]) for k in left)
    return left == right


def go_mod(left: int, right: int) -> int:
    remainder = abs(left) % abs(right)
    return -remainder if left < 0 else remainder
