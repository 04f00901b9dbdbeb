"""Float arithmetic, parsing and formatting with Go's semantics, as Prometheus computes them.

Python's ``math`` module raises where Go's ``math`` package returns NaN or ±Inf (``log(0)``,
``sqrt(-1)``, ``x / 0``, ``pow(0, -1)``, overflow in ``exp``). PromQL answers with the IEEE
special values, so every operation the evaluator applies to sample values goes through the
helpers here. Formatting follows ``strconv.FormatFloat`` as the HTTP API uses it
(``util/jsonutil/marshal.go`` ``MarshalValue`` in Prometheus 2.42 and 3.x), and parsing of
label values such as ``le`` follows ``strconv.ParseFloat``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from math import isnan

__all__ = [
    "format_float",
    "format_float_f",
    "go_div",
    "go_mod",
    "go_pow",
    "kahan_inc",
    "parse_go_float",
    "safe_unary",
]

_INF = math.inf
_NAN = math.nan


def go_div(a: float, b: float) -> float:
    """``a / b`` with IEEE results for a zero divisor (Go never raises)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or isnan(a):
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def go_mod(a: float, b: float) -> float:
    """``math.Mod``: the remainder with the sign of ``a``; NaN for ``b == 0`` or infinite ``a``."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return _NAN


def _is_odd_int(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0


def go_pow(x: float, y: float) -> float:
    """``math.Pow`` with its special cases (C99 ``pow`` without the exceptions)."""
    try:
        return math.pow(x, y)
    except ValueError:
        if x == 0:
            if _is_odd_int(y):
                return math.copysign(_INF, x)
            return _INF
        return _NAN
    except OverflowError:
        if x < 0 and _is_odd_int(y):
            return -_INF
        return _INF


def safe_unary(
    fn: Callable[[float], float],
    on_domain_error: Callable[[float], float],
    on_overflow: Callable[[float], float] = lambda x: _INF,
) -> Callable[[float], float]:
    """Wrap a ``math`` function so that it answers as Go's does instead of raising:
    ``on_domain_error(x)`` where Python raises ValueError, ``on_overflow(x)`` where it
    raises OverflowError."""

    def wrapped(x: float) -> float:
        try:
            return fn(x)
        except ValueError:
            return on_domain_error(x)
        except OverflowError:
            return on_overflow(x)

    return wrapped


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """One step of Neumaier's compensated sum, as ``kahanSumInc`` in promql/functions.go."""
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def format_float_f(v: float) -> str:
    """``strconv.FormatFloat(v, 'f', -1, 64)``: shortest digits, never an exponent."""
    if isnan(v):
        return "NaN"
    if v == _INF:
        return "+Inf"
    if v == -_INF:
        return "-Inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    text = repr(v)
    if "e" in text:
        text = format(Decimal(text), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_float(v: float) -> str:
    """A sample value as the HTTP API writes it: ``'f'`` format, or ``'e'`` when
    ``|v| < 1e-6`` or ``|v| >= 1e21`` (jsonutil.MarshalValue)."""
    a = abs(v)
    if a != 0 and (a < 1e-6 or a >= 1e21) and a != _INF and not isnan(v):
        return _format_e(v)
    return format_float_f(v)


def _format_e(v: float) -> str:
    mantissa, _, exponent = repr(v).partition("e")
    if not exponent:
        # repr chose positional notation; rebuild the shortest digits in exponent form.
        digits = Decimal(repr(v)).normalize()
        mantissa, _, exponent = f"{digits:e}".partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    sign = "-" if exponent.startswith("-") else "+"
    number = exponent.lstrip("+-").lstrip("0") or "0"
    if len(number) < 2:
        number = "0" + number
    return f"{mantissa}e{sign}{number}"


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?\d+")
_SPECIAL = {
    "inf": _INF,
    "+inf": _INF,
    "-inf": -_INF,
    "infinity": _INF,
    "+infinity": _INF,
    "-infinity": -_INF,
}


def parse_go_float(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)``, or None where Go returns an error.

    Go accepts decimal and hexadecimal (``0x1p-2``) forms and case-insensitive ``Inf``,
    ``Infinity`` and ``NaN`` with an optional sign; it rejects surrounding spaces and, unlike
    Python, underscores in decimal numbers. Out-of-range values are an error in Go too.
    """
    lowered = text.lower()
    if lowered in _SPECIAL:
        return _SPECIAL[lowered]
    if lowered == "nan":
        return _NAN
    if _DECIMAL.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            return None
        return value
    if _HEX.fullmatch(text) and "__" not in text:
        try:
            value = float.fromhex(text.replace("_", ""))
        except (ValueError, OverflowError):
            return None
        return value
    return None
