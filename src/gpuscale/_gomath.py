"""Go's number semantics, for the models that must compute what Go programs compute.

The HPA controller, KEDA, expr-lang (KEDA's ``scalingModifiers`` formulas), Prometheus and
the tutorial's Go program are Go programs. Where a model of one of them must give the
same bits, it uses the helpers here instead of Python's own: Python's ``math`` raises where
Go's returns NaN or ±Inf, floors where Go truncates, and ``float()`` accepts and rejects
other texts than ``strconv.ParseFloat``. Each helper names the Go function it follows, from
the Go 1.19 standard library on amd64 (Debian's golang-1.19, which built Debian's
Prometheus 2.42; the golden tables in the tests were made with it). Kubernetes and KEDA
build with newer Go releases; these functions are assumed unchanged there, which only the
tables' regeneration with a newer Go would confirm.

This module is pure and private to gpuscale (no I/O, no clock); it is shared by
``gpuscale.controllers`` (HPA and KEDA), ``gpuscale.promql`` and ``gpuscale.app``. What
only one of them needs stays there (int32 arithmetic and ``Pow10`` in the HPA model,
``math.Mod``/``Max``/``Min`` and the HTTP API's number format in the PromQL engine,
``math.Round`` and integer ``%`` in the formula evaluator).
"""

from __future__ import annotations

import math
import re
import struct

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "GoSyntaxError",
    "format_go_float",
    "go_ceil",
    "go_div",
    "go_exp",
    "go_float_to_int64",
    "go_floor",
    "go_log",
    "go_pow",
    "go_trunc_div",
    "parse_go_float",
    "wrap_int64",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_INF = math.inf
_NAN = math.nan
_MANTISSA = (1 << 52) - 1
_HALF = 0x3FE0000000000000  # the bits of 0.5


# --------------------------------------------------------------------------- integers


def wrap_int64(value: int) -> int:
    """``value`` reduced to int64 the way Go's two's-complement arithmetic wraps it."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


def go_float_to_int64(value: float) -> int:
    """Go ``int64(value)`` on amd64 (CVTTSD2SQ): truncation toward zero; NaN and values
    outside the int64 range give the "integer indefinite" value, ``math.MinInt64`` (arm64
    saturates instead; the Go spec leaves it to the implementation)."""
    if math.isnan(value) or not -9.223372036854775808e18 <= value < 9.223372036854775808e18:
        return INT64_MIN
    return int(value)


def go_trunc_div(numerator: int, denominator: int) -> int:
    """Go integer division: the quotient truncated toward zero (Python's ``//`` floors)."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


# --------------------------------------------------------------------------- arithmetic


def go_div(a: float, b: float) -> float:
    """``a / b`` in float64: ``x/0`` is ±Inf and ``0/0`` is NaN, never an error."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def go_ceil(x: float) -> float:
    """``math.Ceil``: ±Inf and NaN pass through, and a result of zero keeps ``x``'s sign."""
    if math.isnan(x) or x in (_INF, -_INF):
        return x
    r = float(math.ceil(x))
    if r == 0 and x < 0:
        return -0.0
    return r if x != 0 else x


def go_floor(x: float) -> float:
    """``math.Floor``: ±Inf and NaN pass through (Python's ``math.floor`` raises)."""
    if math.isnan(x) or x in (_INF, -_INF):
        return x
    return float(math.floor(x)) if x != 0 else x


def _fma(a: float, b: float, c: float) -> float:
    """A fused multiply-add (``a*b + c`` rounded once). Finite floats are integers over
    powers of two, so the sum is exact in integers, and Python's integer division rounds
    correctly."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    cn, cd = c.as_integer_ratio()
    numerator, denominator = an * bn, ad * bd
    if denominator >= cd:
        numerator += cn * (denominator // cd)
    else:
        numerator = numerator * (cd // denominator) + cn
        denominator = cd
    try:
        return numerator / denominator
    except OverflowError:
        return _INF if numerator > 0 else -_INF


_EXP_TAYLOR = (
    2.4801587301587301587e-5,
    1.9841269841269841270e-4,
    1.3888888888888888889e-3,
    8.3333333333333333333e-3,
    4.1666666666666666667e-2,
    1.6666666666666666667e-1,
    0.5,
    1.0,
)


def go_exp(x: float) -> float:
    """``math.Exp`` on amd64 (math/exp_amd64.s, the AVX/FMA path that x86 CPUs of the last
    decade take): range reduction by ln 2, a Taylor series on x/16, four doublings, then
    the power of two."""
    if math.isnan(x) or x == _INF:
        return x
    if x == -_INF:
        return 0.0
    if x > 7.09782712893384e02:
        return _INF
    scaled = 1.4426950408889634073599246810018920 * x
    # CVTSD2SL: round to nearest even, the "integer indefinite" value when out of range.
    k = round(scaled) if abs(scaled) < 2.0**31 else -(2**31)
    kf = float(k)
    r = _fma(-kf, 0.69314718055966295651160180568695068359375, x)
    r = _fma(-kf, 0.28235290563031577122588448175013436025525412068e-12, r)
    r *= 0.0625
    poly = _EXP_TAYLOR[0]
    for coefficient in _EXP_TAYLOR[1:]:
        poly = _fma(poly, r, coefficient)
    r *= poly
    for _ in range(3):
        r *= r + 2.0
    r = _fma(r, r + 2.0, 1.0)
    biased = k + 0x3FF
    if biased <= 0:
        if biased < -52:
            return 0.0
        return r * 2.0 ** (biased + 0x3FE - 1023) * 2.0**-1022
    if biased >= 0x7FF:
        return _INF
    return r * 2.0 ** (biased - 1023)


def go_log(x: float) -> float:
    """``math.Log`` on amd64 (math/log_amd64.s): the steps of math/log.go, but with the
    assembly's own ``Frexp``, which takes the exponent bits as they are, so that a
    subnormal ``x`` is read as if it were normal (``Log(5e-324)`` is -709.09 there, not
    -744.44)."""
    if math.isnan(x) or x == _INF:
        return x
    if x < 0:
        return _NAN
    if x == 0:
        return -_INF
    bits: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    f1: float = struct.unpack("<d", struct.pack("<Q", (bits & _MANTISSA) | _HALF))[0]
    ki = ((bits >> 52) & 0x7FF) - 0x3FE
    if f1 < math.sqrt(2) / 2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (
        6.666666666666735130e-01
        + s4
        * (
            2.857142874366239149e-01
            + s4 * (1.818357216161805012e-01 + s4 * 1.479819860511658591e-01)
        )
    )
    t2 = s4 * (
        3.999999999940941908e-01 + s4 * (2.222219843214978396e-01 + s4 * 1.531383769920937332e-01)
    )
    big_r = t1 + t2
    hfsq = 0.5 * f * f
    return k * 6.93147180369123816490e-01 - (
        (hfsq - (s * (hfsq + big_r) + k * 1.90821492927058770002e-10)) - f
    )


def _is_odd_int(y: float) -> bool:
    """``isOddInt`` (math/pow.go)."""
    if abs(y) >= 1 << 53:
        return False
    fraction, whole = math.modf(y)
    return fraction == 0 and int(whole) & 1 == 1


def go_pow(x: float, y: float) -> float:
    """``math.Pow`` (math/pow.go): the special cases first, then ``x**yf`` through
    ``Exp(yf*Log(x))`` and ``x**yi`` by repeated squaring on the ``Frexp`` mantissa, so that
    integer powers round exactly as Go's do (not as the C library's ``pow``)."""
    if y == 0 or x == 1:
        return 1.0
    if y == 1:
        return x
    if math.isnan(x) or math.isnan(y):
        return _NAN
    if x == 0:
        negative_zero = math.copysign(1.0, x) < 0
        if y < 0:
            return -_INF if negative_zero and _is_odd_int(y) else _INF
        return x if negative_zero and _is_odd_int(y) else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else _INF
    if math.isinf(x):
        if x < 0:
            return go_pow(1 / x, -y)
        return 0.0 if y < 0 else _INF
    if y == 0.5:
        return math.sqrt(x) if x >= 0 else _NAN
    if y == -0.5:
        return 1 / math.sqrt(x) if x >= 0 else _NAN
    fraction, whole = math.modf(abs(y))
    if fraction != 0 and x < 0:
        return _NAN
    if whole >= 2.0**63:
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else _INF
    a1, ae = 1.0, 0
    yi = int(whole)
    if fraction != 0:
        if fraction > 0.5:
            fraction -= 1
            yi += 1
        a1 = go_exp(fraction * go_log(x))
    x1, xe = math.frexp(x)
    i = yi
    while i != 0:
        if xe < -(1 << 12) or xe > (1 << 12):
            ae += xe
            break
        if i & 1 == 1:
            a1 *= x1
            ae += xe
        x1 *= x1
        xe <<= 1
        if x1 < 0.5:
            x1 += x1
            xe -= 1
        i >>= 1
    if y < 0:
        a1 = 1 / a1
        ae = -ae
    try:
        return math.ldexp(a1, ae)
    except OverflowError:
        return math.copysign(_INF, a1)


# --------------------------------------------------------------------------- formatting


def format_go_float(value: float, fmt: str) -> str:
    """``strconv.FormatFloat(value, fmt, -1, 64)`` for ``fmt`` ``'e'``, ``'f'`` or ``'g'``:
    the shortest digits that read back as ``value``, laid out as ``ftoa.go`` lays them out
    (``'g'`` is ``'e'`` when the exponent is below -4 or at least 6, else ``'f'``; it is
    also what ``fmt``'s ``%v`` prints). NaN is ``NaN`` and infinities ``+Inf``/``-Inf``."""
    if math.isnan(value):
        return "NaN"
    if value in (_INF, -_INF):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        zero = "-0" if math.copysign(1.0, value) < 0 else "0"
        return zero + "e+00" if fmt == "e" else zero
    if fmt == "f" and abs(value) < 1e15 and value.is_integer():
        return str(int(value))
    digits, exponent = _shortest_digits(value)
    sign = "-" if value < 0 else ""
    if fmt == "e" or (fmt == "g" and (exponent < -4 or exponent >= 6)):
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest decimal digits of ``|value|`` (finite, not zero) that read back as it,
    without leading or trailing zeros, and the decimal exponent of the first digit.
    ``repr`` finds them (David Gay's shortest round-trip, as Go's ``ftoa`` does)."""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0")
    exponent += len(whole) - 1 - (len(digits) - len(significant))
    return significant.rstrip("0"), exponent


# --------------------------------------------------------------------------- parsing


class GoSyntaxError(ValueError):
    """The text is not something the Go parser accepts (syntax or range); the message is
    Go's error text."""


_PLAIN_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_LETTERS = frozenset("abcdefABCDEF")


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)`` (strconv/atof.go ``atof64``, ``special``,
    ``readFloat``; strconv/atoi.go ``underscoreOK``), or ``GoSyntaxError`` with Go's message.

    Accepted, as in Go: decimals with an optional exponent (``160``, ``-1.5``, ``.5``,
    ``1e3``), hexadecimal floats with a mandatory ``p`` exponent (``0x1p4``, ``0X1.8P1``),
    underscores between digits (``1_000``, ``0x_1p4``), and ``inf``/``infinity`` (any case,
    optional sign) and ``nan`` (any case, no sign). Refused: surrounding spaces, an empty
    string, hexadecimal without ``p``, misplaced underscores, and finite literals beyond
    float64 (Go's range error); an underflow rounds to zero without error. The grammar is
    checked here; the value comes from Python's correctly rounded ``float``/``fromhex``,
    which agree with Go's correctly rounded conversion. Plain decimals take a fast path.
    """
    if _PLAIN_DECIMAL.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            raise _range_error(text)
        return value
    special = _special(text)
    if special is not None:
        value, consumed = special
        if consumed == len(text):
            return value
        raise _syntax_error(text)
    consumed, is_hex, underscores = _read_float(text)
    if consumed != len(text):
        raise _syntax_error(text)
    digits = text.replace("_", "") if underscores else text
    if is_hex:
        try:
            return float.fromhex(digits)
        except OverflowError:
            raise _range_error(text) from None
    value = float(digits)
    if math.isinf(value):
        raise _range_error(text)
    return value


def _syntax_error(text: str) -> GoSyntaxError:
    return GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')


def _range_error(text: str) -> GoSyntaxError:
    return GoSyntaxError(f'strconv.ParseFloat: parsing "{text}": value out of range')


def _ascii_prefix_len_ignore_case(text: str, prefix: str) -> int:
    """``commonPrefixLenIgnoreCase``: only ASCII letters fold."""
    count = 0
    for have, want in zip(text, prefix, strict=False):
        if have != want and not ("A" <= have <= "Z" and chr(ord(have) + 32) == want):
            break
        count += 1
    return count


def _special(text: str) -> tuple[float, int] | None:
    """``special``: a leading ``[+-]inf``, ``[+-]infinity`` or ``nan`` and its length."""
    if not text:
        return None
    first = text[0]
    if first in "+-iI":
        signed = first in "+-"
        rest = text[1:] if signed else text
        matched = _ascii_prefix_len_ignore_case(rest, "infinity")
        if 3 < matched < 8:
            matched = 3
        if matched in (3, 8):
            sign = -1.0 if first == "-" else 1.0
            return sign * _INF, matched + (1 if signed else 0)
        return None
    if first in "nN" and _ascii_prefix_len_ignore_case(text, "nan") == 3:
        return _NAN, 3
    return None


def _read_float(text: str) -> tuple[int, bool, bool]:
    """``readFloat``'s grammar: (characters consumed, hexadecimal, saw underscores);
    ``GoSyntaxError`` where ``readFloat`` reports ``ok == false``."""
    size = len(text)
    i = 0
    underscores = False
    if i < size and text[i] in "+-":
        i += 1
    is_hex = i + 2 < size and text[i] == "0" and text[i + 1] in "xX"
    if is_hex:
        i += 2
    saw_dot = saw_digits = False
    while i < size:
        char = text[i]
        if char == "_":
            underscores = True
        elif char == ".":
            if saw_dot:
                break
            saw_dot = True
        elif "0" <= char <= "9" or (is_hex and char in _HEX_LETTERS):
            saw_digits = True
        else:
            break
        i += 1
    if not saw_digits:
        raise _syntax_error(text)
    exponent_marks = "pP" if is_hex else "eE"
    if i < size and text[i] in exponent_marks:
        i += 1
        if i < size and text[i] in "+-":
            i += 1
        if i >= size or not "0" <= text[i] <= "9":
            raise _syntax_error(text)
        while i < size and ("0" <= text[i] <= "9" or text[i] == "_"):
            underscores = underscores or text[i] == "_"
            i += 1
    elif is_hex:
        raise _syntax_error(text)
    if underscores and not _underscore_ok(text[:i]):
        raise _syntax_error(text)
    return i, is_hex, underscores


def _underscore_ok(text: str) -> bool:
    """``underscoreOK``: every ``_`` sits between digits (a base prefix counts as one)."""
    if text[:1] in ("+", "-"):
        text = text[1:]
    saw = "^"
    i = 0
    is_hex = False
    if len(text) >= 2 and text[0] == "0" and text[1] in "bBoOxX":
        i = 2
        saw = "0"
        is_hex = text[1] in "xX"
    while i < len(text):
        char = text[i]
        if "0" <= char <= "9" or (is_hex and char in _HEX_LETTERS):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
        i += 1
    return saw != "_"
