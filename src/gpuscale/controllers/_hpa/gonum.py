"""Go's fixed-width integer and float-conversion semantics, as the HPA controller meets them.

The controller computes replica counts in ``int32`` and metric quantities in ``int64``,
mixes them with ``float64`` ratios, and converts back with ``int32(math.Ceil(x))``.
Python integers never overflow and ``math.ceil`` raises on infinities, so every such
step goes through a helper here that does what the Go program does on amd64, the
architecture kube-controller-manager ships for by default:

- integer additions wrap modulo 2^32 or 2^64 (Go spec, "Integer overflow");
- a float64 outside the target range (or NaN) converts to the "integer indefinite"
  value, ``math.MinInt32`` / ``math.MinInt64`` (CVTTSD2SL / CVTTSD2SQ on amd64; arm64
  saturates instead, see the Go spec's "implementation-dependent" note on conversions);
- float division by zero gives an infinity or NaN instead of raising;
- ``math.Pow10`` is built from the same exact power-of-ten tables.
"""

from __future__ import annotations

import math

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "go_ceil",
    "go_div",
    "go_float_to_int32",
    "go_float_to_int64",
    "go_pow10",
    "go_trunc_div",
    "saturate_int64",
    "wrap_int32",
    "wrap_int64",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def wrap_int32(value: int) -> int:
    """``value`` reduced to int32 the way Go's two's-complement arithmetic wraps it."""
    return (value - INT32_MIN) % 2**32 + INT32_MIN


def wrap_int64(value: int) -> int:
    """``value`` reduced to int64 the way Go's two's-complement arithmetic wraps it."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


def saturate_int64(value: int) -> int:
    """``value`` clamped to the int64 range (used where gpuscale saturates on purpose)."""
    return max(INT64_MIN, min(INT64_MAX, value))


def _float_to_int(value: float, low: int, high: int) -> int:
    if math.isnan(value) or math.isinf(value):
        return low
    truncated = math.trunc(value)
    if truncated < low or truncated > high:
        return low
    return truncated


def go_float_to_int32(value: float) -> int:
    """Go ``int32(value)`` on amd64: truncation toward zero, MinInt32 when out of range or NaN."""
    return _float_to_int(value, INT32_MIN, INT32_MAX)


def go_float_to_int64(value: float) -> int:
    """Go ``int64(value)`` on amd64: truncation toward zero, MinInt64 when out of range or NaN."""
    return _float_to_int(value, INT64_MIN, INT64_MAX)


def go_ceil(value: float) -> float:
    """Go ``math.Ceil``: infinities and NaN pass through unchanged."""
    if math.isnan(value) or math.isinf(value):
        return value
    return float(math.ceil(value))


def go_div(numerator: float, denominator: float) -> float:
    """IEEE-754 division as Go does it: ``x/0`` is ±Inf and ``0/0`` is NaN, never an error."""
    if denominator == 0.0:
        if math.isnan(numerator) or numerator == 0.0:
            return math.nan
        positive = (numerator > 0) == (math.copysign(1.0, denominator) > 0)
        return math.inf if positive else -math.inf
    return numerator / denominator


def go_trunc_div(numerator: int, denominator: int) -> int:
    """Go integer division: the quotient truncated toward zero (Python's ``//`` floors)."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


_POW10_SMALL = [float(f"1e{n}") for n in range(32)]
_POW10_POS32 = [float(f"1e{32 * n}") for n in range(10)]
_POW10_NEG32 = [float(f"1e-{32 * n}") for n in range(11)]


def go_pow10(exponent: int) -> float:
    """Go ``math.Pow10``: 10**exponent from the same exact tables (0 or +Inf outside range)."""
    if 0 <= exponent <= 308:
        return _POW10_POS32[exponent // 32] * _POW10_SMALL[exponent % 32]
    if -323 <= exponent < 0:
        return _POW10_NEG32[-exponent // 32] / _POW10_SMALL[-exponent % 32]
    return 0.0 if exponent < 0 else math.inf
