"""Quantities the way the HPA controller reads them: MilliValue() and AsApproximateFloat64().

Ported rows (``QUANTITY_TEST``, apimachinery ``quantity_test.go``) keep upstream's test
names; the rest pin down ParseQuantity's two representations and their rounding, which
upstream only exercises through other functions.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuscale.controllers.hpa import approximate_float64, milli_value
from gpuscale.errors import InputError

from ._upstream import MAX_INT64, QUANTITY_TEST

# TestScaledValue rows with toScale = Milli: NewScaledQuantity(1, fromScale).ScaledValue(Milli).
SCALED_TO_MILLI = [
    ("TestScaledValue/Nano to Milli", "1n", 1),
    ("TestScaledValue/Micro to Milli", "1u", 1),
    ("TestScaledValue/Milli to Milli", "1m", 1),
    ("TestScaledValue/0 to Milli", "1", 1000),
]

APPROXIMATE = [
    ("TestStringQuantityAsApproximateFloat64/2Ki", "2Ki", 2048.0),
    ("TestStringQuantityAsApproximateFloat64/1.1Ki", "1.1Ki", 1126.4),
    ("TestStringQuantityAsApproximateFloat64/1Mi", "1Mi", 1.048576e06),
    ("TestStringQuantityAsApproximateFloat64/2Gi", "2Gi", 2.147483648e09),
]

MILLI = [
    ("float at its shortest spelling", 8.6, 8600),
    ("float with three decimals", 20.666, 20666),
    ("milli suffix", "8600m", 8600),
    ("integer", 15, 15000),
    ("exponent suffix", "1e3", 1_000_000),
    ("binary suffix", "1Ki", 1_024_000),
    ("binary suffix with a fraction (Dec path)", "1.5Gi", 1_610_612_736_000),
    ("sub-milli positive rounds up", "0.0001", 1),
    ("sub-milli negative rounds away from zero on the int64 path", "-0.0001", -1),
    ("nano rounds up to one milli", "1n", 1),
    ("negative sub-nano on the Dec path: truncate, then plus one", "-1e-10", 1),
    ("negative on the Dec path with a milli remainder", "-0.00150000000000000001", 0),
    ("exact MaxInt64 milli-units as a Decimal", Decimal("9223372036854775.807"), MAX_INT64),
    ("exact MaxInt64 milli-units as a string", "9223372036854775807m", MAX_INT64),
    ("float nearest MaxInt64/1000 saturates", 9223372036854776.0, MAX_INT64),
    ("past int64 saturates (upstream would wrap)", "12345678901234567890", MAX_INT64),
    ("negative past int64 saturates", "-12345678901234567890", -MAX_INT64 - 1),
    ("zero", 0.0, 0),
    ("negative zero", -0.0, 0),
]


@pytest.mark.upstream(QUANTITY_TEST)
@pytest.mark.parametrize(
    ("name", "text", "expected"), SCALED_TO_MILLI, ids=[r[0] for r in SCALED_TO_MILLI]
)
def test_scaled_value_to_milli(name: str, text: str, expected: int) -> None:
    assert milli_value(text) == expected, f"{name} ({QUANTITY_TEST})"


@pytest.mark.upstream(QUANTITY_TEST)
@pytest.mark.parametrize(("name", "text", "expected"), APPROXIMATE, ids=[r[0] for r in APPROXIMATE])
def test_string_quantity_as_approximate_float64(name: str, text: str, expected: float) -> None:
    assert approximate_float64(text) == expected, f"{name} ({QUANTITY_TEST})"


@pytest.mark.parametrize(("name", "value", "expected"), MILLI, ids=[r[0] for r in MILLI])
def test_milli_value(name: str, value: object, expected: int) -> None:
    assert milli_value(value) == expected, name  # type: ignore[arg-type]


def test_tolerance_quantities_read_like_the_controller() -> None:
    """tolerancesForHpa reads behavior tolerances with AsApproximateFloat64."""
    assert approximate_float64("0.05") == 0.05
    assert approximate_float64("10m") == 0.01
    assert approximate_float64(0.1) == 0.1


@pytest.mark.parametrize("value", ["abc", "1.2.3", "5 m", "", float("nan"), float("inf"), True])
def test_bad_quantities_are_input_errors(value: object) -> None:
    with pytest.raises(InputError) as error:
        milli_value(value)  # type: ignore[arg-type]
    assert error.value.fix
