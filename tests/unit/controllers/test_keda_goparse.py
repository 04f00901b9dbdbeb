"""Go standard-library corners KEDA depends on, checked against answers of the real Go
functions (``data/keda_go_oracle.json``, produced by ``data/keda_go_oracle/main.go`` with
Go 1.19; see its README). Each case is named by the Go function and its input."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpuscale import _gomath
from gpuscale._gomath import GoSyntaxError, go_pow
from gpuscale.controllers._keda import goparse
from gpuscale.controllers._keda.prometheus import (
    PrometheusQueryError,
    _decode_prom,
    _Number,
    _Pairs,
)

ORACLE = json.loads((Path(__file__).parent / "data" / "keda_go_oracle.json").read_text())
CASES: list[dict[str, Any]] = ORACLE["cases"]


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def _same_float(go_text: str, value: float) -> bool:
    if go_text in ("NaN", "+Inf", "-Inf"):
        return _float_text(value) == go_text
    expected = float(go_text)
    return expected == value and math.copysign(1.0, expected) == math.copysign(1.0, value)


PARSERS = {
    "ParseFloat": _gomath.parse_go_float,
    "ParseBool": goparse.parse_go_bool,
    "ParseDuration": goparse.parse_go_duration,
    "TypedFloat": goparse.go_json_float,
    "TrimSpace": goparse.go_trim_space,
}
SCALAR = [c for c in CASES if c["request"]["kind"] in PARSERS]


@pytest.mark.parametrize(
    "case", SCALAR, ids=[f"{c['request']['kind']}({c['request']['text']!r})" for c in SCALAR]
)
def test_go_parsers_match_go(case: dict[str, Any]) -> None:
    request, answer = case["request"], case["answer"]
    parse = PARSERS[request["kind"]]
    if not answer.get("ok"):
        with pytest.raises(GoSyntaxError):
            parse(request["text"])
        return
    got = parse(request["text"])
    if "float" in answer:
        assert isinstance(got, float)
        assert _same_float(answer["float"], got)
    else:
        assert got == answer["value"]


def _shape(text: str) -> dict[str, Any] | None:
    try:
        decoded = _decode_prom(text)
    except PrometheusQueryError:
        return None
    if decoded.type_error is not None:
        return None
    shape: dict[str, Any] = {"results": len(decoded.results)}
    if len(decoded.results) == 1:
        values = decoded.results[0] or []
        shape["values"] = len(values)
        if len(values) >= 2:
            second = values[1]
            shape["second"] = {
                str: "string",
                type(None): "<nil>",
                _Number: "float64",
                list: "[]interface {}",
                _Pairs: "map[string]interface {}",
                bool: "bool",
            }[type(second)]
            if isinstance(second, str):
                shape["text"] = second
    return shape


DECODES = [c for c in CASES if c["request"]["kind"] == "PromDecode"]


@pytest.mark.parametrize(
    "case", DECODES, ids=[f"json.Unmarshal({c['request']['text'][:60]!r})" for c in DECODES]
)
def test_prometheus_answer_decodes_as_go_decodes(case: dict[str, Any]) -> None:
    """json.Unmarshal into prometheus_scaler.go's promQueryResult: same failures, same
    number of series and values, same type of the sample."""
    answer = case["answer"]
    shape = _shape(case["request"]["text"])
    if answer.get("ok"):
        assert shape == answer["value"]
    else:
        assert shape is None


POWS = [c for c in CASES if c["request"]["kind"] == "Pow"]


@pytest.mark.parametrize("case", POWS, ids=[f"math.Pow{c['request']['text']}" for c in POWS])
def test_go_pow_matches_go(case: dict[str, Any]) -> None:
    """math.Pow on amd64 with FMA: repeated squaring for the integer part and the
    assembly Exp/Log for the fraction, bit for bit."""
    base, exponent = json.loads(case["request"]["text"])
    assert _same_float(case["answer"]["float"], go_pow(base, exponent))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.9, 1),
        (-1.9, -1),
        (9.3e18, _gomath.INT64_MIN),
        (math.nan, _gomath.INT64_MIN),
        (-9.3e18, _gomath.INT64_MIN),
        (0.0, 0),
    ],
)
def test_go_float64_to_int64(value: float, expected: int) -> None:
    """Go's int64(f) on amd64 (CVTTSD2SQ): truncation, the minimum int64 when out of range."""
    assert _gomath.go_float_to_int64(value) == expected


@pytest.mark.parametrize(
    ("text", "bits"), [("2147483648", 32), ("-2147483649", 32), ("1_0", 64), ("", 64), ("0x1", 64)]
)
def test_parse_go_int_rejects(text: str, bits: int) -> None:
    with pytest.raises(GoSyntaxError):
        goparse.parse_go_int(text, bits)
