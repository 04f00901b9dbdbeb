"""Go's standard-library parsers, reproduced where KEDA's behaviour depends on their corners.

KEDA reads trigger metadata, annotations and Prometheus answers with Go's ``strconv``,
``time`` and ``encoding/json``. Python's own parsers accept different things (``float``
takes ``" 1"``, ``"infinity"`` with a sign, ``"1_0"`` anywhere; ``json`` takes ``NaN``), so
the model would admit or reject inputs KEDA does not. Each function here names the Go
function it follows (Go 1.19+ standard library; unchanged in the Go 1.26 KEDA builds with
for these entry points). The golden table ``tests/unit/controllers/data/keda_go_oracle.json``
was produced by the real Go functions and pins these ports.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "GoSyntaxError",
    "go_float64_to_int64",
    "go_json_float",
    "go_trim_space",
    "parse_go_bool",
    "parse_go_duration",
    "parse_go_float",
    "parse_go_int",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# unicode.IsSpace: the Latin-1 spaces plus the White_Space property above Latin-1.
_GO_SPACE = frozenset(
    "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class GoSyntaxError(ValueError):
    """The text is not something the Go parser accepts (syntax or range)."""


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``: strips the characters ``unicode.IsSpace`` reports."""
    start, end = 0, len(text)
    while start < end and text[start] in _GO_SPACE:
        start += 1
    while end > start and text[end - 1] in _GO_SPACE:
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


def _underscore_ok(text: str) -> bool:
    """strconv's underscoreOK: ``_`` only between digits, or between a base prefix and a digit."""
    saw = "^"
    i = 0
    if text[:1] in ("+", "-"):
        text = text[1:]
    hexadecimal = False
    if len(text) >= 2 and text[0] == "0" and text[1].lower() in "box":
        i = 2
        saw = "0"
        hexadecimal = text[1].lower() == "x"
    while i < len(text):
        char = text[i]
        if (char.isdigit() and char.isascii()) or (hexadecimal and char.lower() in "abcdef"):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?")
_HEX_FLOAT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+"
)


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``.

    Accepts decimal and hexadecimal (``0x1p-2``, exponent required) literals with Go's
    underscore rule, and ``inf``/``infinity`` (optionally signed) and ``nan`` in any case.
    A finite literal beyond float64 is an error (Go returns ``ErrRange``); an underflow
    rounds to zero without error. No surrounding spaces are allowed.
    """
    lowered = text.lower()
    unsigned = lowered[1:] if lowered[:1] in ("+", "-") else lowered
    if unsigned in ("inf", "infinity"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == "nan":
        return math.nan
    is_hex = bool(_HEX_FLOAT.fullmatch(text))
    if not is_hex and not _DECIMAL_FLOAT.fullmatch(text):
        raise GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    if "_" in text and not _underscore_ok(text):
        raise GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    digits = text.replace("_", "")
    mantissa = re.sub(r"[eEpP].*", "", digits.lstrip("+-"))
    if not re.search(r"[0-9a-fA-F]", mantissa[2:] if is_hex else mantissa):
        raise GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    try:
        value = float.fromhex(digits) if is_hex else float(digits)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": value out of range')
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


def go_float64_to_int64(value: float) -> int:
    """Go's ``int64(f)`` on amd64: truncation toward zero; NaN and out-of-range values give
    the "integer indefinite" value, the minimum int64 (CVTTSD2SQ)."""
    if math.isnan(value) or not -9.223372036854775808e18 <= value < 9.223372036854775808e18:
        return INT64_MIN
    return int(value)
