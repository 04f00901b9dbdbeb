"""``gpuscale._gomath`` answers as Go does: expected values are what Go 1.19's ``math``,
``strconv`` and ``fmt`` answered on amd64 (with FMA), for the corners where Python's own
functions, or earlier ports in gpuscale, answered differently. The KEDA golden table
(``controllers/data/keda_go_oracle.json``) pins many more cases of ``Pow`` and
``ParseFloat``; ``promql/test_gofloat_and_regex.py`` pins ``Pow``'s special cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale._gomath import (
    INT64_MIN,
    GoSyntaxError,
    format_go_float,
    go_ceil,
    go_div,
    go_exp,
    go_float_to_int64,
    go_floor,
    go_log,
    go_pow,
    go_trunc_div,
    parse_go_float,
    wrap_int64,
)


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.mark.parametrize(
    ("x", "y", "want"),
    [
        # Fractional powers go through Go's Exp and Log, not the C library's.
        (9.503, -1.18, 0.07016561553699281),
        (9.158, 1.86, 61.51049031395038),
        (50.027, 0.97, 44.486508965398286),
        (19.149, 1.39, 60.559611135812695),
        # A subnormal base meets the amd64 Log, which reads it as a normal number.
        (1e-310, 0.3, 4.116030317769531e-93),
        (5e-324, 0.75, 4.8106753340616725e-247),
    ],
)
def test_pow_is_gos(x: float, y: float, want: float) -> None:
    assert _same(go_pow(x, y), want)


@pytest.mark.parametrize(
    ("x", "want"),
    [(5e-324, -709.0895657128241), (1e-310, -709.0850815488945), (1.0, 0.0), (0.0, -math.inf)],
)
def test_log_is_amd64s(x: float, want: float) -> None:
    assert _same(go_log(x), want)


@pytest.mark.parametrize(
    ("x", "want"), [(-1e10, 0.0), (-1.5e9, 0.0), (-745.2, 0.0), (709.7, math.inf), (0.0, 1.0)]
)
def test_exp_far_out_of_range(x: float, want: float) -> None:
    """Beyond ±2^31 in units of ln 2 the assembly's integer conversion gives its
    "indefinite" value; the result underflows to 0 there as in Go."""
    assert _same(go_exp(x), want)


@pytest.mark.parametrize(
    ("value", "g", "e", "f"),
    [
        (1e6, "1e+06", "1e+06", "1000000"),
        (999999.0, "999999", "9.99999e+05", "999999"),
        (1234567.0, "1.234567e+06", "1.234567e+06", "1234567"),
        (1e20, "1e+20", "1e+20", "100000000000000000000"),
        (0.0001, "0.0001", "1e-04", "0.0001"),
        (1.234e-05, "1.234e-05", "1.234e-05", "0.00001234"),
        (-2.5e-7, "-2.5e-07", "-2.5e-07", "-0.00000025"),
        (-0.0, "-0", "-0e+00", "-0"),
        (math.inf, "+Inf", "+Inf", "+Inf"),
        (math.nan, "NaN", "NaN", "NaN"),
    ],
)
def test_format_float(value: float, g: str, e: str, f: str) -> None:
    """strconv.FormatFloat(v, fmt, -1, 64); 'g' is also fmt's %v."""
    assert (format_go_float(value, "g"), format_go_float(value, "e")) == (g, e)
    assert format_go_float(value, "f") == f


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_formatted_floats_read_back(value: float) -> None:
    for fmt in "efg":
        assert _same(parse_go_float(format_go_float(value, fmt)), value)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0XE1p-3", 28.125),
        ("0xE1p-3", 28.125),
        ("1_000", 1000.0),
        ("0x_1p0", 1.0),
        ("1e1_0", 1e10),
        ("+0X.EP1_0", 896.0),
        ("infinity", math.inf),
        ("-Inf", -math.inf),
        ("0x1p-1075", 0.0),
    ],
)
def test_parse_float_accepts(text: str, want: float) -> None:
    assert _same(parse_go_float(text), want)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1_", "invalid syntax"),
        ("\u0663", "invalid syntax"),  # Python's float() takes an Arabic-Indic 3
        ("+nan", "invalid syntax"),
        ("", "invalid syntax"),
        ("1e309", "value out of range"),
        ("0x1p1024", "value out of range"),
    ],
)
def test_parse_float_refuses(text: str, message: str) -> None:
    with pytest.raises(GoSyntaxError) as caught:
        parse_go_float(text)
    assert str(caught.value) == f'strconv.ParseFloat: parsing "{text}": {message}'


def test_integer_semantics() -> None:
    assert wrap_int64(2**63) == INT64_MIN
    assert go_trunc_div(-7, 2) == -3
    assert go_float_to_int64(-1.9) == -1
    assert go_float_to_int64(9.3e18) == INT64_MIN
    assert _same(go_div(-1.0, 0.0), -math.inf)
    assert _same(go_div(0.0, 0.0), math.nan)
    assert _same(go_ceil(-0.5), -0.0)
    assert _same(go_floor(-0.0), -0.0)
    assert _same(go_ceil(math.inf), math.inf)
