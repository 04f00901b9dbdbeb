"""Go's int32 semantics and ``math.Pow10``, as only the HPA controller meets them.

The controller computes replica counts in ``int32`` and metric quantities in ``int64``,
mixes them with ``float64`` ratios, and converts back with ``int32(math.Ceil(x))``.
Python integers never overflow, so every such step goes through a helper that does what
the Go program does on amd64, the architecture kube-controller-manager ships for by
default. The int64, division, ``Ceil`` and float-to-int64 helpers the KEDA and PromQL
models share live in ``gpuscale._gomath``; the int32 ones, the saturation gpuscale applies
on purpose and ``math.Pow10`` are the HPA's alone and live here:

- int32 additions wrap modulo 2^32 (Go spec, "Integer overflow");
- a float64 outside the int32 range (or NaN) converts to the "integer indefinite" value,
  ``math.MinInt32`` (CVTTSD2SL on amd64; arm64 saturates instead, see the Go spec's
  "implementation-dependent" note on conversions);
- ``math.Pow10`` is built from the same exact power-of-ten tables.
"""

from __future__ import annotations

import math

from gpuscale._gomath import INT64_MAX, INT64_MIN

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "go_float_to_int32",
    "go_pow10",
    "saturate_int64",
    "wrap_int32",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def wrap_int32(value: int) -> int:
    """``value`` reduced to int32 the way Go's two's-complement arithmetic wraps it."""
    return (value - INT32_MIN) % 2**32 + INT32_MIN


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
