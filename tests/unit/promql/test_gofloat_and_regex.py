"""Go float semantics as the engine uses them (math.Pow, division and strconv.ParseFloat
from ``gpuscale._gomath``, math.Mod) and RE2 regexes on Python."""

from __future__ import annotations

import math

import pytest

from gpuscale._gomath import GoSyntaxError, go_div, go_pow, parse_go_float
from gpuscale.promql._gofloat import go_mod
from gpuscale.promql._regex import compile_go_regex, go_expand

INF = math.inf
NAN = math.nan

# The special cases listed in the documentation of Go's math.Pow, in its order.
POW = [
    (NAN, 0.0, 1.0),
    (1.0, NAN, 1.0),
    (NAN, 1.0, NAN),
    (2.0, NAN, NAN),
    (0.0, -3.0, INF),
    (-0.0, -3.0, -INF),
    (0.0, -INF, INF),
    (0.0, INF, 0.0),
    (0.0, -2.0, INF),
    (-0.0, 3.0, -0.0),
    (0.0, 2.0, 0.0),
    (-1.0, INF, 1.0),
    (2.0, INF, INF),
    (2.0, -INF, 0.0),
    (0.5, INF, 0.0),
    (0.5, -INF, INF),
    (INF, 2.0, INF),
    (INF, -2.0, 0.0),
    (-INF, 3.0, -INF),
    (-8.0, 1 / 3, NAN),
    (2.0, 10.0, 1024.0),
    (10.0, -2.0, 0.01),
    (1e300, 2.0, INF),
    (-2.0, 3.0, -8.0),
]


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.mark.parametrize(("x", "y", "want"), POW)
def test_pow_special_cases(x: float, y: float, want: float) -> None:
    assert _same(go_pow(x, y), want)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [(1.0, 0.0, INF), (-1.0, 0.0, -INF), (1.0, -0.0, -INF), (0.0, 0.0, NAN), (NAN, 0.0, NAN)],
)
def test_division_by_zero(a: float, b: float, want: float) -> None:
    assert _same(go_div(a, b), want)


@pytest.mark.parametrize(
    ("a", "b", "want"), [(5.0, 3.0, 2.0), (-5.0, 3.0, -2.0), (5.0, 0.0, NAN), (INF, 2.0, NAN)]
)
def test_mod(a: float, b: float, want: float) -> None:
    assert _same(go_mod(a, b), want)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1", 1.0),
        ("+Inf", INF),
        ("-inf", -INF),
        ("Infinity", INF),
        ("NaN", NAN),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("0x1p-2", 0.25),
        ("1_0", 10.0),  # Go accepts underscores between digits (strconv underscoreOK)
        ("1__0", None),
        ("0XE1p-3", 28.125),  # an E among hexadecimal digits is a digit, not an exponent
        (" 1", None),
        ("-nan", None),
        ("1e400", None),
        ("", None),
    ],
)
def test_parse_float_as_strconv(text: str, want: float | None) -> None:
    if want is None:
        with pytest.raises(GoSyntaxError):
            parse_go_float(text)
    else:
        assert _same(parse_go_float(text), want)


@pytest.mark.parametrize(
    ("pattern", "text", "dotall", "matches"),
    [
        ("foo|bar", "bar", False, True),
        ("x$", "x\n", False, False),  # RE2's $ is the end of text
        (".*", "a\nb", False, False),  # Prometheus 2: . does not match a newline
        (".*", "a\nb", True, True),  # Prometheus 3: it does
        ("\\d+", "٣", False, False),  # RE2's \d is ASCII
        ("(?i)ÜNÏCODE", "ünïcode", False, True),  # (?i) folds Unicode
        ("((?i)PRO).*", "production", False, True),  # flags for the rest of a group
        ("a(?i)b", "AB", False, False),
        ("[[:alpha:]]+", "abc", False, True),
        ("[[:digit:]]", "a", False, False),
        ("a{,2}", "a{,2}", False, True),  # a literal in RE2
        ("\\Qa.b\\E", "a.b", False, True),
        ("\\Qa.b\\E", "axb", False, False),
        ("\\bab\\b", "ab", False, True),
    ],
)
def test_re2_semantics(pattern: str, text: str, dotall: bool, matches: bool) -> None:
    assert (compile_go_regex(pattern, dotall=dotall).fullmatch(text) is not None) == matches


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a(?=b)", "not supported by RE2"),
        ("(a)\\1", "backreference"),
        ("\\pL", "Unicode class"),
        ("a*+", "possessive"),
        ("(?U)a*", "not supported"),
        ("(", "missing"),
    ],
)
def test_re2_rejections(pattern: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        compile_go_regex(pattern, dotall=False)


@pytest.mark.parametrize(
    ("template", "want"),
    [
        ("$1", "a"),
        ("${1}x", "ax"),
        ("$1x", ""),  # Go reads the group name "1x", which does not exist
        ("$2-$1", "b-a"),
        ("$name", "a"),
        ("$$1", "$1"),
        ("$", "$"),
        ("${1", "${1"),
        ("$3", ""),
    ],
)
def test_expand_as_go_regexp(template: str, want: str) -> None:
    match = compile_go_regex("(?P<name>a)(b)", dotall=False).fullmatch("ab")
    assert match is not None
    assert go_expand(template, match) == want
