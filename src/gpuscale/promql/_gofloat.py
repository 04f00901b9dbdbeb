"""PromQL's float details with Go's semantics: the ones only the engine needs.

Python's ``math`` module raises where Go's ``math`` package returns NaN or ±Inf; PromQL
answers with the IEEE special values, so every operation the evaluator applies to sample
values goes through Go-semantics helpers. Those the models share (division, ``Pow``,
``Ceil``/``Floor``, ``strconv.ParseFloat`` and ``FormatFloat``) live in
``gpuscale._gomath``; here are the engine's own: ``math.Mod``, a wrapper that makes a
``math`` function answer as Go's does, and the number format of the HTTP API
(``util/jsonutil/marshal.go`` ``MarshalValue`` in Prometheus 2.42 and 3.x).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpuscale._gomath import format_go_float

__all__ = ["format_float", "format_float_f", "go_mod", "safe_unary"]

_INF = math.inf
_NAN = math.nan


def go_mod(a: float, b: float) -> float:
    """``math.Mod``: the remainder with the sign of ``a``; NaN for ``b == 0`` or infinite ``a``."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return _NAN


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


def format_float_f(v: float) -> str:
    """``strconv.FormatFloat(v, 'f', -1, 64)``: shortest digits, never an exponent."""
    return format_go_float(v, "f")


def format_float(v: float) -> str:
    """A sample value as the HTTP API writes it: ``'f'`` format, or ``'e'`` when
    ``|v| < 1e-6`` or ``|v| >= 1e21`` (jsonutil.MarshalValue)."""
    a = abs(v)
    if a != 0 and (a < 1e-6 or a >= 1e21) and a != _INF and not math.isnan(v):
        return format_go_float(v, "e")
    return format_go_float(v, "f")
