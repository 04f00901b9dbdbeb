"""Query results, and the JSON the Prometheus HTTP API gives for them.

``to_api_json()`` returns exactly the body of a successful ``/api/v1/query`` or
``/api/v1/query_range`` answer (web/api/v1/api.go): ``{"status": "success", "data":
{"resultType": ..., "result": ...}}`` with timestamps as float seconds and values as
strings (``"NaN"``, ``"+Inf"``, ``"-Inf"``, shortest round-trip digits, exponent form below
1e-6 and from 1e21 as ``jsonutil.MarshalValue`` writes them). So KEDA's Prometheus scaler
model, which parses that body, reads a simulated answer and a real one the same way.
``result_from_api_json`` goes the other way, for answers from a real server.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from gpuscale._gomath import GoSyntaxError, parse_go_float
from gpuscale.promql._gofloat import format_float
from gpuscale.promql.labels import Labels, labels_from_mapping

__all__ = [
    "MatrixResult",
    "Result",
    "Sample",
    "ScalarResult",
    "Series",
    "StringResult",
    "VectorResult",
    "result_from_api_json",
]


def _seconds(t_ms: int) -> float:
    return t_ms / 1000


class Sample(NamedTuple):
    """One element of an instant vector: its label set and value."""

    labels: Labels
    value: float

    @property
    def metric(self) -> dict[str, str]:
        """The labels as a dict, as the API's ``metric`` field shows them."""
        return dict(self.labels)


@dataclass(frozen=True, slots=True)
class Series:
    """One series of a range vector: its label set and its points in time order."""

    labels: Labels
    timestamps_ms: tuple[int, ...]
    values: tuple[float, ...]

    @property
    def metric(self) -> dict[str, str]:
        """The labels as a dict."""
        return dict(self.labels)

    def points(self) -> list[tuple[int, float]]:
        """``(t_ms, value)`` pairs."""
        return list(zip(self.timestamps_ms, self.values, strict=True))


class Result:
    """What a query returns; one of the four PromQL value types."""

    result_type: ClassVar[str]

    def _api_result(self) -> Any:
        raise NotImplementedError

    def to_api_json(self) -> dict[str, Any]:
        """The body of a successful Prometheus HTTP API answer for this result."""
        return {
            "status": "success",
            "data": {"resultType": self.result_type, "result": self._api_result()},
        }


@dataclass(frozen=True, slots=True)
class VectorResult(Result):
    """An instant vector evaluated at ``t_ms``, in the order Prometheus returns it."""

    result_type: ClassVar[str] = "vector"
    samples: tuple[Sample, ...]
    t_ms: int

    def _api_result(self) -> Any:
        t = _seconds(self.t_ms)
        return [
            {"metric": dict(s.labels), "value": [t, format_float(s.value)]} for s in self.samples
        ]

    def __len__(self) -> int:
        return len(self.samples)


@dataclass(frozen=True, slots=True)
class ScalarResult(Result):
    """A scalar evaluated at ``t_ms``."""

    result_type: ClassVar[str] = "scalar"
    value: float
    t_ms: int

    def _api_result(self) -> Any:
        return [_seconds(self.t_ms), format_float(self.value)]


@dataclass(frozen=True, slots=True)
class StringResult(Result):
    """A string literal evaluated at ``t_ms``."""

    result_type: ClassVar[str] = "string"
    value: str
    t_ms: int

    def _api_result(self) -> Any:
        return [_seconds(self.t_ms), self.value]


@dataclass(frozen=True, slots=True)
class MatrixResult(Result):
    """A range vector: the answer of a range query, or of an instant query for a range selector
    or subquery. Range-query answers are sorted by labels, as Prometheus sorts them."""

    result_type: ClassVar[str] = "matrix"
    series: tuple[Series, ...]

    def _api_result(self) -> Any:
        return [
            {
                "metric": dict(s.labels),
                "values": [
                    [_seconds(t), format_float(v)]
                    for t, v in zip(s.timestamps_ms, s.values, strict=True)
                ],
            }
            for s in self.series
        ]

    def __len__(self) -> int:
        return len(self.series)


def _value(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError(f"expected a sample value as a string, got {text!r}")
    try:
        return parse_go_float(text)
    except GoSyntaxError:
        raise ValueError(f"cannot parse sample value {text!r}") from None


def _millis(t: Any) -> int:
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise ValueError(f"expected a timestamp in seconds, got {t!r}")
    return round(t * 1000)


def result_from_api_json(body: Mapping[str, Any], *, t_ms: int | None = None) -> Result:
    """A result from the JSON body of a successful ``/api/v1/query(_range)`` answer.

    ``t_ms`` is the query's evaluation time, used for an empty vector (whose body carries
    no timestamp). Raises ``ValueError`` naming what is malformed.
    """
    if body.get("status") != "success":
        raise ValueError(f"not a successful answer: status={body.get('status')!r}")
    data = body.get("data")
    if not isinstance(data, Mapping):
        raise ValueError("answer has no 'data' object")
    kind = data.get("resultType")
    raw = data.get("result")
    if kind == "vector" and isinstance(raw, list):
        samples = []
        when = t_ms if t_ms is not None else 0
        for item in raw:
            t, v = item["value"]
            when = _millis(t)
            samples.append(Sample(labels_from_mapping(item["metric"]), _value(v)))
        return VectorResult(tuple(samples), when)
    if kind == "matrix" and isinstance(raw, list):
        series = []
        for item in raw:
            points = [(_millis(t), _value(v)) for t, v in item["values"]]
            series.append(
                Series(
                    labels_from_mapping(item["metric"]),
                    tuple(t for t, _ in points),
                    tuple(v for _, v in points),
                )
            )
        return MatrixResult(tuple(series))
    if kind == "scalar" and isinstance(raw, list):
        return ScalarResult(_value(raw[1]), _millis(raw[0]))
    if kind == "string" and isinstance(raw, list):
        return StringResult(str(raw[1]), _millis(raw[0]))
    raise ValueError(f"unknown or malformed resultType {kind!r}")
