"""gpuscale's expr-lang subset against the real expr-lang v1.17.8, the version KEDA uses.

``data/keda_expr_oracle.json`` holds answers of the real expr for hand-written formulas
(the shapes of KEDA's docs and webhook tests, Go number corners, nil handling, parser
corners) and 800 random ones, each compiled as KEDA compiles a scalingModifiers formula
(castToFloatIfNecessary, trigger names declared float64) and run on the given values.
The model must fail where expr fails and give the same float64 (or nil) where it works.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpuscale._gomath import format_go_float, go_pow
from gpuscale.controllers._keda.expr import compile_formula, evaluate
from gpuscale.controllers.keda import FormulaError, cast_to_float_if_necessary

ORACLE = json.loads((Path(__file__).parent / "data" / "keda_expr_oracle.json").read_text())
CASES: list[list[Any]] = ORACLE["cases"]


def _run(formula: str, values: dict[str, float | None]) -> tuple[str, object]:
    try:
        program = compile_formula(cast_to_float_if_necessary(formula), frozenset(["t1", "t2"]))
    except FormulaError:
        return "error", None
    try:
        return "ok", program.run(values)
    except FormulaError:
        return "error", None


def _matches(answer: dict[str, Any], outcome: str, value: object) -> bool:
    if not answer.get("ok"):
        return outcome == "error"
    if outcome != "ok":
        return False
    kind = answer.get("type")
    if kind == "nil":
        return value is None
    if kind == "bool":
        return value is answer["value"]
    if kind != "float" or not isinstance(value, float):
        return False
    text = answer["float"]
    if text == "NaN":
        return math.isnan(value)
    if text in ("+Inf", "-Inf"):
        return value == (math.inf if text == "+Inf" else -math.inf)
    return value == float(text)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c[0][:50]!r}" for i, c in enumerate(CASES)])
def test_formula_matches_expr_lang(case: list[Any]) -> None:
    formula, values, answer = case
    outcome, value = _run(formula, values)
    assert _matches(answer, outcome, value), f"expr said {answer}, model gave {outcome} {value!r}"


@pytest.mark.parametrize(
    ("formula", "line", "column", "text"),
    [
        ("t1 +", 1, 4, "unexpected token EOF"),
        ("t1 @ t2", 1, 4, "unrecognized character"),
        ("missing * 2", 1, 1, "unknown name missing"),
        ("t1 +\n  nope", 2, 3, "unknown name nope"),
        ("t1 ?? t2 + 1", 1, 10, "cannot be mixed"),
        ("t1 % 2", 1, 4, "mismatched types float64 and int"),
        ("[t1][3]", 1, 5, "index out of range"),
        ("2x + t1", 1, 1, "bad number syntax"),
        ("'abc", 1, 1, "literal not terminated"),
        ("t1 /* open", 1, 4, "unclosed comment"),
    ],
)
def test_errors_name_the_position_in_the_users_formula(
    formula: str, line: int, column: int, text: str
) -> None:
    from gpuscale.controllers.keda import evaluate_formula

    with pytest.raises(FormulaError) as caught:
        evaluate_formula(formula, {"t1": 1.0, "t2": 2.0})
    assert (caught.value.line, caught.value.column) == (line, column)
    assert text in caught.value.message
    assert f"(at {line}:{column})" in caught.value.message


def test_elvis_needs_a_boolean() -> None:
    """``a ?: b`` is ``a ? a : b``, so a float64 trigger cannot be its condition."""
    with pytest.raises(FormulaError, match="non-bool expression"):
        compile_formula("a ?: 5", frozenset(["a"]))


def test_wrapper_errors_say_so() -> None:
    """A formula that compiles on its own but returns a bool fails inside KEDA's float()."""
    from gpuscale.controllers.keda import evaluate_formula

    with pytest.raises(FormulaError, match="in the wrapper KEDA adds: float"):
        evaluate_formula("t1 > 1", {"t1": 1.0})


@pytest.mark.parametrize(
    ("formula", "values", "expected"),
    [
        ("1 < x < 3", {"x": 2.0}, True),
        ("x > 1 ?: false", {"x": 2.0}, True),
        ("let y = x * 2; y + 1", {"x": 2.0}, 5.0),
        ("x | max(3)", {"x": 2.0}, 3),
        ("if x > 1 { 10 } else { 20 }", {"x": 2.0}, 10),
        ("[1, 2, 3][1:]", {}, [2, 3]),
        ("map(1..3, # * #index)", {}, [0, 2, 6]),
        ("reduce([1, 2, 3], #acc + #, 10)", {}, 16),
        ("{a: x}.a", {"x": 4.0}, 4.0),
        ("{a: x}?.b?.c", {"x": 4.0}, None),
        ("x not in [1, 2]", {"x": 3.0}, True),
        ("9223372036854775807 + 1", {}, -9223372036854775808),
        ("-7 % 3", {}, -1),
        ("7 / 2", {}, 3.5),
        ('"a" + "b"', {}, "ab"),
        ("abs(-2)", {}, 2),
        ("round(-2.5)", {}, -3.0),
    ],
)
def test_language_features(formula: str, values: dict[str, float | None], expected: object) -> None:
    assert evaluate(formula, values) == expected


@pytest.mark.parametrize(
    "formula",
    [
        '"a" matches "b"',
        "now()",
        "date('2024-01-01')",
        "x.foo()",
        "b'x'",
        "sortBy([1], #)",
        "::len([])",
    ],
)
def test_unsupported_features_are_refused_not_guessed(formula: str) -> None:
    with pytest.raises(FormulaError):
        compile_formula(formula, frozenset(["x"]))


@pytest.mark.parametrize(
    ("base", "exponent", "expected"),
    [
        (0.0, -1.0, math.inf),
        (-0.0, -1.0, -math.inf),
        (-0.0, -2.0, math.inf),
        (2.0, 1024.0, math.inf),
        (-2.0, 1025.0, -math.inf),
        (-8.0, 1.0 / 3.0, math.nan),
        (4.0, 0.5, 2.0),
        (1.0, math.nan, 1.0),
        (math.inf, -1.0, 0.0),
        (-1.0, math.inf, 1.0),
        (0.5, math.inf, 0.0),
        (7.0, 100.0, 3.2344765096247583e84),
    ],
)
def test_go_pow_special_cases(base: float, exponent: float, expected: float) -> None:
    """math.Pow's documented special cases, and its repeated-squaring rounding (7**100)."""
    got = go_pow(base, exponent)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected
        assert math.copysign(1.0, got) == math.copysign(1.0, expected)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (100000.0, "100000"),
        (1e21, "1e+21"),
        (1e20, "1e+20"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (6948674.738744654, "6.948674738744654e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (2.5, "2.5"),
        (-0.0, "-0"),
        (1.5e-7, "1.5e-07"),
    ],
)
def test_go_format_float(value: float, text: str) -> None:
    """fmt's %v for float64, which expr's string() prints with: strconv's 'g' with the
    shortest digits, 'e' form when the exponent is < -4 or >= 6 (answers of Go 1.19)."""
    assert format_go_float(value, "g") == text
    assert evaluate("string(x)", {"x": value}) == text
