"""Kubernetes resource quantities, exact: what the HPA compares and the scheduler counts.

Upstream: ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go: ParseQuantity,
parseQuantityString, MilliValue, ScaledValue, AsApproximateFloat64``; ``amount.go:
int64Amount.AsScaledInt64, negativeScaleInt64, positiveScaleInt64``; ``scale_int.go:
scaledValue``), read at kubernetes/apimachinery@eed236ceee2c19c2753a3d93ac0631dc20750454
(kubernetes-1.36.0-alpha.2-226).

The HPA controller turns every target and every metric sample into an int64 count of
milli-units with ``Quantity.MilliValue()`` (``horizontal.go: computeStatusFor*Metric``,
``metrics/client.go``); the scheduler counts cpu the same way and memory, pods and
extended resources with ``Quantity.Value()`` (``pkg/scheduler/framework/types.go``,
``Resource.Add``). A number given to gpuscale is read the way the API server would
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
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from gpuscale._gomath import INT64_MAX, INT64_MIN, go_trunc_div
from gpuscale.errors import InputError

__all__ = [
    "Amount",
    "QuantityLike",
    "milli_value",
    "parse_quantity",
    "parse_quantity_amount",
    "quantity_or_none",
    "scaled_value",
    "whole_value",
]

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


def _saturate(value: int) -> int:
    return max(INT64_MIN, min(INT64_MAX, value))


_SCALED: dict[tuple[str, int], int] = {}
"""Answers of :func:`scaled_value` by the quantity's text (what the parse reads) and scale:
a pure function, which the simulated HPA calls with the same few values thousands of
times a run."""


def scaled_value(value: QuantityLike, scale: int) -> int:
    """``resource.Quantity.ScaledValue(scale)``: ``value`` in units of ``10**scale``,
    rounded up as upstream rounds (see the module docstring), saturated to int64."""
    text = _text(value)
    key = (text, scale)
    known = _SCALED.get(key)
    if known is None:
        known = _scaled_value(text, scale)
        if len(_SCALED) >= 4096:
            _SCALED.clear()
        _SCALED[key] = known
    return known


def _scaled_value(value: QuantityLike, scale: int) -> int:
    amount = parse_quantity_amount(value)
    shift = amount.exponent - scale
    if shift >= 0:
        return _saturate(amount.unscaled * 10**shift)
    if amount.fast:
        return _saturate(_negative_scale(amount.unscaled, -shift))
    return _saturate(_dec_scaled(amount.unscaled, -shift))


def milli_value(value: QuantityLike) -> int:
    """``Quantity.MilliValue()`` (``ScaledValue(Milli)``): what the HPA compares and the
    scheduler counts cpu in."""
    return scaled_value(value, -3)


def whole_value(value: QuantityLike) -> int:
    """``Quantity.Value()`` (``ScaledValue(0)``, rounded up): what the scheduler counts
    memory, pods and extended resources such as ``amd.com/gpu`` in."""
    return scaled_value(value, 0)


_QUANTITY_SUFFIX = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$"
)


def parse_quantity(value: str | float | int) -> float:
    """A Kubernetes resource quantity (``"500m"``, ``"2Gi"``, ``1``) as a float in base units.

    The float form is for arithmetic that is a float anyway (costs, capacity ratios, lint's
    explanations); counts the scheduler compares go through :func:`milli_value` and
    :func:`whole_value`, which read a float at its shortest decimal spelling and so give
    back exactly what the text said.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}")
    try:
        number = Decimal(match.group(1))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}") from exc
    return float(number * _QUANTITY_SUFFIX[match.group(2) or ""])


def quantity_or_none(value: object) -> float | None:
    """:func:`parse_quantity` of a field read from a live object (its text form), or None
    when the field is absent or holds no quantity: a status to show, not input to refuse."""
    if value is None:
        return None
    try:
        return parse_quantity(str(value))
    except ValueError:
        return None
