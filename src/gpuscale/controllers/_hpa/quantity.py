"""Kubernetes resource quantities as the HPA controller reads them: milli-units, rounded up.

Upstream: ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go: ParseQuantity,
parseQuantityString, MilliValue, ScaledValue, AsApproximateFloat64``; ``amount.go:
int64Amount.AsScaledInt64, negativeScaleInt64, positiveScaleInt64``; ``scale_int.go:
scaledValue``), read at kubernetes/apimachinery@eed236ceee2c19c2753a3d93ac0631dc20750454
(kubernetes-1.36.0-alpha.2-226).

The controller turns every target and every metric sample into an int64 count of
milli-units with ``Quantity.MilliValue()`` (``horizontal.go: computeStatusFor*Metric``,
``metrics/client.go``). A number given to gpuscale is read the way the API server would
read it written out in a manifest: a float is taken at its shortest decimal spelling
(``8.6`` is ``"8.6"``, not the binary fraction), then parsed with ParseQuantity's rules
(which representation it lands in decides the rounding) and scaled to milli-units:

- a value that fits the int64 fast path (at most 18 digits, at most 9 decimals) with
  digits below a milli-unit rounds *away from zero* (``negativeScaleInt64``):
  ``0.0001`` -> 1, ``-0.0001`` -> -1;
- any other value is first rounded up to a nano-unit and then scaled by
  ``scaledValue``, which truncates and adds one when inexact, so a negative value
  rounds toward +Inf plus one (``-0.0015`` written with more than 18 digits -> 0).

One deliberate difference: where MilliValue would overflow int64 and return a wrapped
or zero value, gpuscale saturates at ``math.MaxInt64``/``MinInt64``. Upstream's own
overflow tests build such values with ``NewMilliQuantity(math.MaxInt64)``, which a float
can only approximate (9223372036854775.807 is the float 9223372036854776.0); saturating
makes that approximation mean what the tests mean. Pass a ``Decimal`` or a string such
as ``"9223372036854775807m"`` to give a quantity exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from gpuscale._gomath import INT64_MAX, INT64_MIN, go_trunc_div
from gpuscale.controllers._hpa.gonum import go_pow10, saturate_int64
from gpuscale.errors import InputError

__all__ = ["QuantityLike", "approximate_float64", "milli_value", "parse_quantity_amount"]

QuantityLike = int | float | Decimal | str
"""A quantity as gpuscale accepts it: a number in plain units, or a Kubernetes quantity string."""

_MAX_INT64_FACTORS = 18
_NANO = -9
_SUFFIX_CHARS = "eEinumkKMGTP"
_DECIMAL_SUFFIXES = {
    "": 0,
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_FIX = "write a number such as 8.6, or a Kubernetes quantity such as 8600m or 2Gi"


@dataclass(frozen=True, slots=True)
class Amount:
    """A parsed quantity: ``unscaled * 10**exponent``, and which upstream representation holds it.

    ``fast`` is True for apimachinery's ``int64Amount`` and False for its ``inf.Dec`` form;
    the two round differently when scaled to milli-units.
    """

    unscaled: int
    exponent: int
    fast: bool


def _text(value: QuantityLike) -> str:
    if isinstance(value, bool):
        raise InputError(f"expected a quantity, got {value!r}", fix=_FIX)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"expected a finite quantity, got {value!r}", fix=_FIX)
        return repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InputError(f"expected a finite quantity, got {value}", fix=_FIX)
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    raise InputError(f"expected a quantity, got {type(value).__name__} {value!r}", fix=_FIX)


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, numerator, denominator, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise InputError(f"quantity {text!r} does not match the quantity grammar", fix=_FIX)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str, text: str) -> tuple[int, int, str]:
    """The suffixer: (base, exponent, format) for a suffix such as ``m``, ``Ki`` or ``e3``."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body.isdigit():
            return 10, int(digits), "DecimalExponent"
    raise InputError(f"quantity {text!r} has an unknown suffix {suffix!r}", fix=_FIX)


def _multiply_fits(a: int, b: int) -> tuple[int, bool]:
    product = a * b
    return product, INT64_MIN < product <= INT64_MAX or a in (0, 1) or b in (0, 1)


def parse_quantity_amount(value: QuantityLike) -> Amount:
    """ParseQuantity: the exact amount ``value`` denotes and the representation it parses into."""
    text = _text(value)
    if not text:
        raise InputError("empty quantity", fix=_FIX)
    if text == "0":
        return Amount(0, 0, fast=True)
    positive, digits, num, denom, suffix = _scan(text)
    base, exponent, form = _interpret(suffix, text)
    mantissa = 1
    if form == "BinarySI":
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            result, fits = _multiply_fits(int(num + denom), mantissa)
            if fits:
                return Amount(result if positive else -result, scale, fast=True)
    return _parse_decimal(digits, base, exponent, form)


def _parse_decimal(digits: str, base: int, exponent: int, form: str) -> Amount:
    """The inf.Dec branch of ParseQuantity: exact value, magnitude rounded up to a nano-unit."""
    try:
        exact = Decimal(digits)
    except ArithmeticError:
        raise InputError(f"quantity {digits!r} has no numeric part", fix=_FIX) from None
    sign, digit_tuple, dec_exponent = exact.as_tuple()
    unscaled = int("".join(map(str, digit_tuple)) or "0")
    scale = -int(dec_exponent)
    if base == 10:
        scale -= exponent
    else:
        unscaled <<= exponent
    if unscaled != 0:
        if scale > -_NANO:
            divisor = 10 ** (scale + _NANO)
            unscaled = -(-unscaled // divisor)
        else:
            unscaled *= 10 ** (-_NANO - scale)
        scale = -_NANO
    if form == "BinarySI" and unscaled > INT64_MAX * 10 ** (scale):
        unscaled = INT64_MAX * 10**scale
    return Amount(-unscaled if sign else unscaled, -scale, fast=False)


def _negative_scale(base: int, scale: int) -> int:
    """negativeScaleInt64: divide by 10**scale, rounding any remainder away from zero."""
    value = base
    fraction = False
    for _ in range(scale):
        if not fraction and value % 10 != 0:
            fraction = True
        value = go_trunc_div(value, 10)
        if value == 0:
            if fraction:
                return 1 if base > 0 else -1
            return 0
    if fraction:
        value += 1 if base > 0 else -1
    return value


def _dec_scaled(unscaled: int, difference: int) -> int:
    """scaledValue's scale-down branch: truncate (or floor, past int64), plus one when inexact."""
    divisor = 10**difference
    if unscaled < INT64_MAX and difference < 19:
        quotient = go_trunc_div(unscaled, divisor)
        remainder = unscaled - quotient * divisor
    else:
        quotient, remainder = divmod(unscaled, divisor)
    return quotient + 1 if remainder != 0 else quotient


def milli_value(value: QuantityLike) -> int:
    """``resource.Quantity.MilliValue()`` of ``value``, saturated to int64 (see module docstring).

    Upstream: apimachinery ``Quantity.MilliValue`` -> ``ScaledValue(Milli)``.
    """
    amount = parse_quantity_amount(value)
    shift = amount.exponent + 3
    if shift >= 0:
        return saturate_int64(amount.unscaled * 10**shift)
    if amount.fast:
        return saturate_int64(_negative_scale(amount.unscaled, -shift))
    return saturate_int64(_dec_scaled(amount.unscaled, -shift))


def approximate_float64(value: QuantityLike) -> float:
    """``Quantity.AsApproximateFloat64()``: float(unscaled) times ``math.Pow10(exponent)``.

    The controller reads ``behavior.scaleUp/scaleDown.tolerance`` this way
    (``horizontal.go: tolerancesForHpa``).
    """
    amount = parse_quantity_amount(value)
    base = float(amount.unscaled)
    if amount.exponent == 0:
        return base
    return base * go_pow10(amount.exponent)
