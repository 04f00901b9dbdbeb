"""``parse_go_float`` and ``go_query_value`` answer as Go 1.19 does.

The tables are transcribed from Go 1.19's own tests and keep their names:
``atoftests`` from ``src/strconv/atof_test.go`` (the float64 cases, with Go's expected
output written the way ``strconv.FormatFloat(f, 'g', -1, 64)`` prints it) and
``parseTests`` from ``src/net/url/url_test.go``. The integration test
``tests/integration/app/test_go_parity.py`` compares against the built Go program itself.
"""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale._gomath import _read_float, _special
from gpuscale.app import go_query_value, parse_go_float

SYNTAX = "syntax"
RANGE = "range"

# Go 1.19 src/strconv/atof_test.go: atoftests (input, expected output or error kind).
atoftests: list[tuple[str, str]] = [
    ("", SYNTAX),
    ("1", "1"),
    ("+1", "1"),
    ("1x", SYNTAX),
    ("1.1.", SYNTAX),
    ("1e23", "1e+23"),
    ("1E23", "1e+23"),
    ("100000000000000000000000", "1e+23"),
    ("1e-100", "1e-100"),
    ("123456700", "1.234567e+08"),
    ("99999999999999974834176", "9.999999999999997e+22"),
    ("100000000000000000000001", "1.0000000000000001e+23"),
    ("100000000000000008388608", "1.0000000000000001e+23"),
    ("100000000000000016777215", "1.0000000000000001e+23"),
    ("100000000000000016777216", "1.0000000000000003e+23"),
    ("-1", "-1"),
    ("-0.1", "-0.1"),
    ("-0", "-0"),
    ("1e-20", "1e-20"),
    ("625e-3", "0.625"),
    ("0x1p0", "1"),
    ("0x1p1", "2"),
    ("0x1p-1", "0.5"),
    ("0x1ep-1", "15"),
    ("-0x1ep-1", "-15"),
    ("-0x1_ep-1", "-15"),
    ("0x1p-200", "6.223015277861142e-61"),
    ("0x1p200", "1.6069380442589903e+60"),
    ("0x1fFe2.p0", "131042"),
    ("0x1fFe2.P0", "131042"),
    ("-0x2p3", "-16"),
    ("0x0.fp4", "15"),
    ("0x0.fp0", "0.9375"),
    ("0x1e2", SYNTAX),
    ("1p2", SYNTAX),
    ("0", "0"),
    ("0e0", "0"),
    ("-0e0", "-0"),
    ("+0e0", "0"),
    ("0e-0", "0"),
    ("-0e-0", "-0"),
    ("+0e-0", "0"),
    ("0e+0", "0"),
    ("-0e+0", "-0"),
    ("+0e+0", "0"),
    ("0e+01234567890123456789", "0"),
    ("0.00e-01234567890123456789", "0"),
    ("-0e+01234567890123456789", "-0"),
    ("-0.00e-01234567890123456789", "-0"),
    ("0x0p+01234567890123456789", "0"),
    ("0x0.00p-01234567890123456789", "0"),
    ("-0x0p+01234567890123456789", "-0"),
    ("-0x0.00p-01234567890123456789", "-0"),
    ("0e291", "0"),
    ("0e292", "0"),
    ("0e347", "0"),
    ("0e348", "0"),
    ("-0e291", "-0"),
    ("-0e292", "-0"),
    ("-0e347", "-0"),
    ("-0e348", "-0"),
    ("0x0p126", "0"),
    ("0x0p127", "0"),
    ("0x0p128", "0"),
    ("0x0p129", "0"),
    ("0x0p130", "0"),
    ("0x0p1022", "0"),
    ("0x0p1023", "0"),
    ("0x0p1024", "0"),
    ("0x0p1025", "0"),
    ("0x0p1026", "0"),
    ("-0x0p126", "-0"),
    ("-0x0p127", "-0"),
    ("-0x0p128", "-0"),
    ("-0x0p129", "-0"),
    ("-0x0p130", "-0"),
    ("-0x0p1022", "-0"),
    ("-0x0p1023", "-0"),
    ("-0x0p1024", "-0"),
    ("-0x0p1025", "-0"),
    ("-0x0p1026", "-0"),
    ("nan", "NaN"),
    ("NaN", "NaN"),
    ("NAN", "NaN"),
    ("inf", "+Inf"),
    ("-Inf", "-Inf"),
    ("+INF", "+Inf"),
    ("-Infinity", "-Inf"),
    ("+INFINITY", "+Inf"),
    ("Infinity", "+Inf"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("-1.7976931348623157e308", "-1.7976931348623157e+308"),
    ("0x1.fffffffffffffp1023", "1.7976931348623157e+308"),
    ("-0x1.fffffffffffffp1023", "-1.7976931348623157e+308"),
    ("0x1fffffffffffffp+971", "1.7976931348623157e+308"),
    ("-0x1fffffffffffffp+971", "-1.7976931348623157e+308"),
    ("0x.1fffffffffffffp1027", "1.7976931348623157e+308"),
    ("-0x.1fffffffffffffp1027", "-1.7976931348623157e+308"),
    ("1.7976931348623159e308", RANGE),
    ("-1.7976931348623159e308", RANGE),
    ("0x1p1024", RANGE),
    ("-0x1p1024", RANGE),
    ("0x2p1023", RANGE),
    ("-0x2p1023", RANGE),
    ("0x.1p1028", RANGE),
    ("-0x.1p1028", RANGE),
    ("0x.2p1027", RANGE),
    ("-0x.2p1027", RANGE),
    ("1.7976931348623158e308", "1.7976931348623157e+308"),
    ("-1.7976931348623158e308", "-1.7976931348623157e+308"),
    ("0x1.fffffffffffff7fffp1023", "1.7976931348623157e+308"),
    ("-0x1.fffffffffffff7fffp1023", "-1.7976931348623157e+308"),
    ("1.797693134862315808e308", RANGE),
    ("-1.797693134862315808e308", RANGE),
    ("0x1.fffffffffffff8p1023", RANGE),
    ("-0x1.fffffffffffff8p1023", RANGE),
    ("0x1fffffffffffff.8p+971", RANGE),
    ("-0x1fffffffffffff8p+967", RANGE),
    ("0x.1fffffffffffff8p1027", RANGE),
    ("-0x.1fffffffffffff9p1027", RANGE),
    ("1e308", "1e+308"),
    ("2e308", RANGE),
    ("1e309", RANGE),
    ("0x1p1025", RANGE),
    ("1e310", RANGE),
    ("-1e310", RANGE),
    ("1e400", RANGE),
    ("-1e400", RANGE),
    ("1e400000", RANGE),
    ("-1e400000", RANGE),
    ("0x1p1030", RANGE),
    ("0x1p2000", RANGE),
    ("0x1p2000000000", RANGE),
    ("-0x1p1030", RANGE),
    ("-0x1p2000", RANGE),
    ("-0x1p2000000000", RANGE),
    ("1e-305", "1e-305"),
    ("1e-306", "1e-306"),
    ("1e-307", "1e-307"),
    ("1e-308", "1e-308"),
    ("1e-309", "1e-309"),
    ("1e-310", "1e-310"),
    ("1e-322", "1e-322"),
    ("5e-324", "5e-324"),
    ("4e-324", "5e-324"),
    ("3e-324", "5e-324"),
    ("2e-324", "0"),
    ("1e-350", "0"),
    ("1e-400000", "0"),
    ("0x2.00000000000000p-1010", "1.8227805048890994e-304"),
    ("0x1.fffffffffffff0p-1010", "1.8227805048890992e-304"),
    ("0x1.fffffffffffff7p-1010", "1.8227805048890992e-304"),
    ("0x1.fffffffffffff8p-1010", "1.8227805048890994e-304"),
    ("0x1.fffffffffffff9p-1010", "1.8227805048890994e-304"),
    ("0x2.00000000000000p-1022", "4.450147717014403e-308"),
    ("0x1.fffffffffffff0p-1022", "4.4501477170144023e-308"),
    ("0x1.fffffffffffff7p-1022", "4.4501477170144023e-308"),
    ("0x1.fffffffffffff8p-1022", "4.450147717014403e-308"),
    ("0x1.fffffffffffff9p-1022", "4.450147717014403e-308"),
    ("0x1.00000000000000p-1022", "2.2250738585072014e-308"),
    ("0x0.fffffffffffff0p-1022", "2.225073858507201e-308"),
    ("0x0.ffffffffffffe0p-1022", "2.2250738585072004e-308"),
    ("0x0.ffffffffffffe7p-1022", "2.2250738585072004e-308"),
    ("0x1.ffffffffffffe8p-1023", "2.225073858507201e-308"),
    ("0x1.ffffffffffffe9p-1023", "2.225073858507201e-308"),
    ("0x0.00000003fffff0p-1022", "2.072261e-317"),
    ("0x0.00000003456780p-1022", "1.694649e-317"),
    ("0x0.00000003456787p-1022", "1.694649e-317"),
    ("0x0.00000003456788p-1022", "1.694649e-317"),
    ("0x0.00000003456790p-1022", "1.6946496e-317"),
    ("0x0.00000003456789p-1022", "1.6946496e-317"),
    ("0x0.0000000345678800000000000000000000000001p-1022", "1.6946496e-317"),
    ("0x0.000000000000f0p-1022", "7.4e-323"),
    ("0x0.00000000000060p-1022", "3e-323"),
    ("0x0.00000000000058p-1022", "3e-323"),
    ("0x0.00000000000057p-1022", "2.5e-323"),
    ("0x0.00000000000050p-1022", "2.5e-323"),
    ("0x0.00000000000010p-1022", "5e-324"),
    ("0x0.000000000000081p-1022", "5e-324"),
    ("0x0.00000000000008p-1022", "0"),
    ("0x0.00000000000007fp-1022", "0"),
    ("1e-4294967296", "0"),
    ("1e+4294967296", RANGE),
    ("1e-18446744073709551616", "0"),
    ("1e+18446744073709551616", RANGE),
    ("0x1p-4294967296", "0"),
    ("0x1p+4294967296", RANGE),
    ("0x1p-18446744073709551616", "0"),
    ("0x1p+18446744073709551616", RANGE),
    ("1e", SYNTAX),
    ("1e-", SYNTAX),
    (".e-1", SYNTAX),
    ("1\x00.2", SYNTAX),
    ("0x", SYNTAX),
    ("0x.", SYNTAX),
    ("0x1", SYNTAX),
    ("0x.1", SYNTAX),
    ("0x1p", SYNTAX),
    ("0x.1p", SYNTAX),
    ("0x1p+", SYNTAX),
    ("0x.1p+", SYNTAX),
    ("0x1p-", SYNTAX),
    ("0x.1p-", SYNTAX),
    ("0x1p+2", "4"),
    ("0x.1p+2", "0.25"),
    ("0x1p-2", "0.25"),
    ("0x.1p-2", "0.015625"),
    ("2.2250738585072012e-308", "2.2250738585072014e-308"),
    ("2.2250738585072011e-308", "2.225073858507201e-308"),
    ("4.630813248087435e+307", "4.630813248087435e+307"),
    ("22.222222222222222", "22.22222222222222"),
    ("2." + "2" * 4000 + "e+1", "22.22222222222222"),
    ("0x1.1111111111111p222", "7.18931911124017e+66"),
    ("0x2.2222222222222p221", "7.18931911124017e+66"),
    ("0x2." + "2" * 4000 + "p221", "7.18931911124017e+66"),
    ("1.00000000000000011102230246251565404236316680908203125", "1"),
    ("0x1.00000000000008p0", "1"),
    ("1.00000000000000011102230246251565404236316680908203124", "1"),
    ("0x1.00000000000007Fp0", "1"),
    ("1.00000000000000011102230246251565404236316680908203126", "1.0000000000000002"),
    ("0x1.000000000000081p0", "1.0000000000000002"),
    ("0x1.00000000000009p0", "1.0000000000000002"),
    (
        "1.00000000000000011102230246251565404236316680908203125" + "0" * 10000 + "1",
        "1.0000000000000002",
    ),
    ("0x1.00000000000008" + "0" * 10000 + "1p0", "1.0000000000000002"),
    ("1.00000000000000033306690738754696212708950042724609375", "1.0000000000000004"),
    ("0x1.00000000000018p0", "1.0000000000000004"),
    ("1090544144181609348671888949248", "1.0905441441816093e+30"),
    ("1090544144181609348835077142190", "1.0905441441816094e+30"),
    ("1_23.50_0_0e+1_2", "1.235e+14"),
    ("-_123.5e+12", SYNTAX),
    ("+_123.5e+12", SYNTAX),
    ("_123.5e+12", SYNTAX),
    ("1__23.5e+12", SYNTAX),
    ("123_.5e+12", SYNTAX),
    ("123._5e+12", SYNTAX),
    ("123.5_e+12", SYNTAX),
    ("123.5__0e+12", SYNTAX),
    ("123.5e_+12", SYNTAX),
    ("123.5e+_12", SYNTAX),
    ("123.5e_-12", SYNTAX),
    ("123.5e-_12", SYNTAX),
    ("123.5e+1__2", SYNTAX),
    ("123.5e+12_", SYNTAX),
    ("0x_1_2.3_4_5p+1_2", "74565"),
    ("-_0x12.345p+12", SYNTAX),
    ("+_0x12.345p+12", SYNTAX),
    ("_0x12.345p+12", SYNTAX),
    ("0x__12.345p+12", SYNTAX),
    ("0x1__2.345p+12", SYNTAX),
    ("0x12_.345p+12", SYNTAX),
    ("0x12._345p+12", SYNTAX),
    ("0x12.3__45p+12", SYNTAX),
    ("0x12.345_p+12", SYNTAX),
    ("0x12.345p_+12", SYNTAX),
    ("0x12.345p+_12", SYNTAX),
    ("0x12.345p_-12", SYNTAX),
    ("0x12.345p-_12", SYNTAX),
    ("0x12.345p+1__2", SYNTAX),
    ("0x12.345p+12_", SYNTAX),
    ("1e100x", SYNTAX),
    ("1e1000x", SYNTAX),
]


def _bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


@pytest.mark.parametrize(("text", "expected"), atoftests)
def test_atoftests(text: str, expected: str) -> None:
    if expected in (SYNTAX, RANGE):
        with pytest.raises(ValueError, match="out of range" if expected == RANGE else "syntax"):
            parse_go_float(text)
        return
    got = parse_go_float(text)
    want = float(expected)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert _bits(got) == _bits(want), f"{text!r}: got {got!r}, want {expected}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("160", 160.0),
        (" 160", SYNTAX),
        ("160 ", SYNTAX),
        ("1_000", 1000.0),
        ("0x1p4", 16.0),
        ("0x10", SYNTAX),
        ("+nan", SYNTAX),
        ("-NaN", SYNTAX),
        ("infinit", SYNTAX),
        ("infinityx", SYNTAX),
        ("iNfInItY", math.inf),
        ("0b101", SYNTAX),
        ("0o7", SYNTAX),
        ("1e-400", 0.0),
        ("٣", SYNTAX),  # a non-ASCII digit: Python's float() takes it, Go does not
        ("１", SYNTAX),  # a fullwidth digit, the same
    ],
)
def test_forms_python_float_reads_differently(text: str, expected: float | str) -> None:
    if expected == SYNTAX:
        with pytest.raises(ValueError, match="syntax"):
            parse_go_float(text)
    else:
        assert parse_go_float(text) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_round_trips_through_repr_and_hex(value: float) -> None:
    assert _bits(parse_go_float(repr(value))) == _bits(value)
    assert _bits(parse_go_float(value.hex())) == _bits(value)


@given(st.text(alphabet="0123456789._eE+-xXpPaAfF", max_size=12))
def test_fast_path_agrees_with_the_port(text: str) -> None:
    """Plain decimals skip the port; where both apply they must agree."""
    try:
        fast: float | None = parse_go_float(text)
    except ValueError:
        fast = None
    if _special(text) is not None:
        return
    try:
        consumed, is_hex, underscores = _read_float(text)
    except ValueError:
        assert fast is None
        return
    if consumed != len(text):
        assert fast is None
        return
    digits = text.replace("_", "") if underscores else text
    try:
        slow = float.fromhex(digits) if is_hex else float(digits)
    except OverflowError:
        slow = math.inf
    if math.isinf(slow):
        assert fast is None
    else:
        assert fast is not None
        assert _bits(fast) == _bits(slow)


# Go 1.19 src/net/url/url_test.go: parseTests (as PARSE_TESTS), reduced to what Values.Get returns.
PARSE_TESTS: list[tuple[str, str, str | None]] = [
    ("a=1", "a", "1"),
    ("a=1&b=2", "b", "2"),
    ("a=1&a=2&a=banana", "a", "1"),
    ("ascii=%3Ckey%3A+0x90%3E", "ascii", "<key: 0x90>"),
    ("a=1;b=2", "a", None),
    ("a;b=1", "b", None),
    ("a=%3B", "a", ";"),
    ("a%3Bb=1", "a;b", "1"),
    ("a=1&a=2;a=banana", "a", "1"),
    ("a;b&c=1", "c", "1"),
    ("a=1&b=2;a=3&c=4", "c", "4"),
    ("a=1&b=2;c=3", "b", None),
    (";", "a", None),
    ("a=1;", "a", None),
    ("a=1&;", "a", "1"),
    (";a=1&b=2", "a", None),
    ("a=1&b=2;", "b", None),
]


@pytest.mark.parametrize(("query", "key", "expected"), PARSE_TESTS)
def test_parseTests(query: str, key: str, expected: str | None) -> None:
    got = go_query_value(query.encode(), key.encode())
    assert got == (None if expected is None else expected.encode())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("value=160", b"160"),
        ("value=", b""),
        ("value", b""),
        ("", None),
        ("Value=1", None),
        ("value=%31%36%30", b"160"),
        ("value=1+", b"1 "),
        ("value=%2B1", b"+1"),
        ("value=%zz&value=3", b"3"),
        ("value=%3", None),
        ("%76alue=7", b"7"),
        ("x=1&&value=2", b"2"),
    ],
)
def test_value_lookup(query: str, expected: bytes | None) -> None:
    assert go_query_value(query.encode(), b"value") == expected
