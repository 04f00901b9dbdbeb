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
    frac, whole = math.modf(y)
    return frac == 0 and abs(whole) < 2**63 and int(whole) & 1 == 1


def _ldexp(frac: float, exp: int) -> float:
    try:
        return math.ldexp(frac, exp)
    except OverflowError:
        return math.copysign(_INF, frac)


def go_pow(x: float, y: float) -> float:
    """``math.Pow`` of Go 1.19 (pure Go; Debian's Prometheus 2.42 is built with it).

    Integer exponents use Go's repeated squaring on the mantissa, so they match Go to the
    bit; fractional parts go through ``exp(yf * log(x))``, where the C library and Go's
    assembly ``Exp``/``Log`` may differ in the last bit.
    """
    if y == 0 or x == 1:
        return 1.0
    if y == 1:
        return x
    if isnan(x) or isnan(y):
        return _NAN
    if x == 0:
        if y < 0:
            return math.copysign(_INF, x) if _is_odd_int(y) else _INF
        return x if _is_odd_int(y) else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        if (abs(x) < 1) == (y > 0):
            return 0.0
        return _INF
    if math.isinf(x):
        if x < 0:
            return go_pow(1 / x, -y)
        return 0.0 if y < 0 else _INF
    if y == 0.5:
        return math.sqrt(x) if x >= 0 else _NAN
    if y == -0.5:
        return go_div(1.0, math.sqrt(x)) if x >= 0 else _NAN
    yf, yi = math.modf(abs(y))
    if yf != 0 and x < 0:
        return _NAN
    if yi >= 2.0**63:
        if x == -1:
            return 1.0
        if (abs(x) < 1) == (y > 0):
            return 0.0
        return _INF
    a1 = 1.0
    ae = 0
    if yf != 0:
        if yf > 0.5:
            yf -= 1
            yi += 1
        try:
            a1 = math.exp(yf * math.log(x))
        except OverflowError:
            a1 = _INF
    x1, xe = math.frexp(x)
    i = int(yi)
    while i != 0:
        if xe < -(1 << 12) or xe > (1 << 12):
            ae += xe
            break
        if i & 1 == 1:
            a1 *= x1
            ae += xe
        x1 *= x1
        xe <<= 1
        if x1 < 0.5:
            x1 += x1
            xe -= 1
        i >>= 1
    if y < 0:
        a1 = go_div(1.0, a1)
        ae = -ae
    return _ldexp(a1, ae)


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
