"""Go's standard-library parsers, reproduced where KEDA's behaviour depends on their corners.

KEDA reads trigger metadata, annotations and Prometheus answers with Go's ``strconv``,
``time`` and ``encoding/json``. Python's own parsers accept different things (``float``
takes ``" 1"``, ``"infinity"`` with a sign, ``"1_0"`` anywhere; ``json`` takes ``NaN``), so
the model would admit or reject inputs KEDA does not. Each function here names the Go
function it follows, as the Go 1.19 standard library has it; the functions KEDA calls behave
the same in Go 1.26, which KEDA 8b4f083 builds with (go.mod). ``strconv.ParseFloat`` and the
float-to-int64 conversion are shared with the other models and live in ``gpuscale._gomath``;
this module holds the parsers only KEDA uses. The golden table
``tests/unit/controllers/data/keda_go_oracle.json`` was produced by the real Go functions
and pins these ports.
"""

from __future__ import annotations

import math
import re

from gpuscale._gomath import INT64_MAX, GoSyntaxError

__all__ = [
    "GO_SPACE",
    "go_json_float",
    "go_trim_space",
    "parse_go_bool",
    "parse_go_duration",
    "parse_go_int",
]

GO_SPACE = frozenset(
    "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What ``unicode.IsSpace`` reports: the Latin-1 spaces and the White_Space property above."""


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``: strips the characters ``unicode.IsSpace`` reports."""
    start, end = 0, len(text)
    while start < end and text[start] in GO_SPACE:
        start += 1
    while end > start and text[end - 1] in GO_SPACE:
        end -= 1
    return text[start:end]


def parse_go_bool(text: str) -> bool:
    """``strconv.ParseBool``: exactly 1/t/T/TRUE/true/True or 0/f/F/FALSE/false/False."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise GoSyntaxError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_go_int(text: str, bits: int = 64) -> int:
    """``strconv.ParseInt(text, 10, bits)``: optional sign, decimal digits, range-checked."""
    match = re.fullmatch(r"[+-]?[0-9]+", text)
    if not match:
        raise GoSyntaxError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise GoSyntaxError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def go_json_float(text: str) -> float:
    """``json.Unmarshal`` of ``text`` into a ``float64``: a JSON number literal that fits.

    This is how KEDA's typed config reads float metadata (``threshold``,
    ``activationThreshold``): ``"+1"``, ``".5"``, ``"1."``, ``"01"`` and ``"NaN"`` are rejected.
    """
    body = text.strip(" \t\r\n")
    if not _JSON_NUMBER.fullmatch(body):
        raise GoSyntaxError(f"json: cannot unmarshal {text!r} into Go value of type float64")
    value = float(body)
    if math.isinf(value):
        raise GoSyntaxError(f"json: cannot unmarshal number {body} into Go value of type float64")
    return value


_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def parse_go_duration(text: str) -> int:
    """``time.ParseDuration``: nanoseconds in ``text`` such as ``"1h30m"``, ``"1.5s"``, ``"-2ms"``.

    A bare number other than ``"0"`` is an error ("missing unit"); so is anything beyond
    an int64 of nanoseconds.
    """
    original, rest = text, text
    negative = False
    if rest[:1] in ("-", "+"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise GoSyntaxError(f'time: invalid duration "{original}"')
    total = 0
    while rest:
        if not (rest[0] == "." or "0" <= rest[0] <= "9"):
            raise GoSyntaxError(f'time: invalid duration "{original}"')
        match = re.match(r"[0-9]*", rest)
        assert match is not None
        int_digits = match.group(0)
        rest = rest[len(int_digits) :]
        whole = int(int_digits) if int_digits else 0
        if whole > 1 << 63:
            raise GoSyntaxError(f'time: invalid duration "{original}"')
        fraction_digits = ""
        had_point = False
        if rest[:1] == ".":
            had_point = True
            rest = rest[1:]
            match = re.match(r"[0-9]*", rest)
            assert match is not None
            fraction_digits = match.group(0)
            rest = rest[len(fraction_digits) :]
        if not int_digits and not (had_point and fraction_digits):
            raise GoSyntaxError(f'time: invalid duration "{original}"')
        unit_end = 0
        while unit_end < len(rest) and not (rest[unit_end] == "." or "0" <= rest[unit_end] <= "9"):
            unit_end += 1
        if unit_end == 0:
            raise GoSyntaxError(f'time: missing unit in duration "{original}"')
        unit_name, rest = rest[:unit_end], rest[unit_end:]
        unit = _DURATION_UNITS.get(unit_name)
        if unit is None:
            raise GoSyntaxError(f'time: unknown unit "{unit_name}" in duration "{original}"')
        if whole > (1 << 63) // unit:
            raise GoSyntaxError(f'time: invalid duration "{original}"')
        value = whole * unit
        fraction, scale = _leading_fraction(fraction_digits)
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > 1 << 63:
                raise GoSyntaxError(f'time: invalid duration "{original}"')
        total += value
        if total > 1 << 63:
            raise GoSyntaxError(f'time: invalid duration "{original}"')
    if negative:
        return -total
    if total > INT64_MAX:
        raise GoSyntaxError(f'time: invalid duration "{original}"')
    return total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """time.leadingFraction: the fraction digits as an integer and their scale, stopping
    accumulation (but not consumption) once more digits would overflow."""
    value, scale, overflow = 0, 1.0, False
    for char in digits:
        if overflow:
            continue
        if value > INT64_MAX // 10:
            overflow = True
            continue
        candidate = value * 10 + int(char)
        if candidate > 1 << 63:
            overflow = True
            continue
        value = candidate
        scale *= 10
    return value, scale
