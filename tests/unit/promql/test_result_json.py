"""Results in the shape of Prometheus' HTTP API answers (web/api/v1/api.go, jsonutil)."""

from __future__ import annotations

import json
import math

import pytest

from gpuscale.promql import (
    Engine,
    MatrixResult,
    Sample,
    ScalarResult,
    Series,
    SeriesStore,
    StringResult,
    VectorResult,
    result_from_api_json,
)
from gpuscale.promql._gofloat import format_float

# Value strings as Prometheus writes them: strconv.FormatFloat 'f' with the shortest
# digits, or 'e' below 1e-6 and from 1e21 (util/jsonutil/marshal.go MarshalValue).
VALUES = [
    (0.0, "0"),
    (-0.0, "-0"),
    (1.0, "1"),
    (160.0, "160"),
    (0.1, "0.1"),
    (1 / 3, "0.3333333333333333"),
    (-2.5, "-2.5"),
    (1e-6, "0.000001"),
    (9.99e-7, "9.99e-07"),
    (1e-7, "1e-07"),
    (5e-324, "5e-324"),
    (9.99e20, "999000000000000000000"),
    (1e21, "1e+21"),
    (1.5e300, "1.5e+300"),
    (1e16, "10000000000000000"),
    (123456789012345678.0, "123456789012345680"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
]


@pytest.mark.parametrize(("value", "text"), VALUES)
def test_values_are_formatted_as_prometheus_does(value: float, text: str) -> None:
    assert format_float(value) == text


def test_vector_answer_shape() -> None:
    result = VectorResult(
        (Sample((("__name__", "up"), ("job", "x")), 1.0), Sample((), math.nan)), 1_700_000_000_123
    )
    assert result.to_api_json() == {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"__name__": "up", "job": "x"}, "value": [1700000000.123, "1"]},
                {"metric": {}, "value": [1700000000.123, "NaN"]},
            ],
        },
    }


def test_scalar_string_and_matrix_answer_shapes() -> None:
    assert ScalarResult(2.5, 1000).to_api_json()["data"] == {
        "resultType": "scalar",
        "result": [1.0, "2.5"],
    }
    assert StringResult("hi", 1500).to_api_json()["data"] == {
        "resultType": "string",
        "result": [1.5, "hi"],
    }
    matrix = MatrixResult((Series((("a", "b"),), (1000, 2000), (1.0, math.inf)),))
    assert matrix.to_api_json()["data"] == {
        "resultType": "matrix",
        "result": [{"metric": {"a": "b"}, "values": [[1.0, "1"], [2.0, "+Inf"]]}],
    }


def test_answers_are_plain_json() -> None:
    store = SeriesStore()
    store.append({"__name__": "m", "pod": "a"}, 0, 1.0)
    body = Engine(store).instant("m", 15_000).to_api_json()
    assert json.loads(json.dumps(body)) == body


@pytest.mark.parametrize(
    "result",
    [
        VectorResult((Sample((("a", "b"),), 0.5), Sample((("a", "c"),), -math.inf)), 61_000),
        ScalarResult(3.0, 7_000),
        StringResult("x", 7_000),
        MatrixResult((Series((("a", "b"),), (1000, 16_000), (1.0, 2.0)),)),
    ],
)
def test_round_trip_through_api_json(result: VectorResult | ScalarResult | MatrixResult) -> None:
    assert result_from_api_json(json.loads(json.dumps(result.to_api_json()))) == result


def test_empty_vector_takes_the_query_time() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": []}}
    assert result_from_api_json(body, t_ms=42_000) == VectorResult((), 42_000)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"status": "error", "error": "boom"}, "status='error'"),
        ({"status": "success"}, "no 'data'"),
        ({"status": "success", "data": {"resultType": "histogram", "result": []}}, "resultType"),
        (
            {"status": "success", "data": {"resultType": "scalar", "result": [1, "one"]}},
            "cannot parse sample value",
        ),
    ],
)
def test_malformed_answers_are_rejected(body: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        result_from_api_json(body)
