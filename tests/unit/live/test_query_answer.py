"""``gpuscale watch`` and ``verify`` read Prometheus through ``PrometheusClient``: the
trigger query's answer as KEDA's scaler counts it (one series, a finite value), and raw
answers kept for KEDA's parser. Answers are shaped as Prometheus 2.42's
``/api/v1/query`` (``docs/querying/api.md``), served by ``httpx.MockTransport``."""

from __future__ import annotations

import json

import httpx
import pytest

from gpuscale.live.watch import QueryAnswer
from gpuscale.live.watcher import query_answer
from gpuscale.prometheus import PrometheusClient

URL = "http://prom.test:9090"


def _vector(*values: str) -> dict[str, object]:
    return {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"pod": f"p{i}"}, "value": [1700000000.0, v]}
                for i, v in enumerate(values)
            ],
        },
    }


def _client(status: int, body: object) -> tuple[PrometheusClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, text=json.dumps(body))

    return PrometheusClient(URL, transport=httpx.MockTransport(handle)), seen


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (200, _vector("160"), QueryAnswer(160.0, 1, None, URL)),
        (200, _vector(), QueryAnswer(None, 0, None, URL)),
        (200, _vector("1", "2"), QueryAnswer(None, 2, None, URL)),
        (200, _vector("NaN"), QueryAnswer(None, 1, None, URL)),
        (200, _vector("+Inf"), QueryAnswer(None, 1, None, URL)),
        (
            200,
            {"status": "success", "data": {"resultType": "scalar", "result": [1.0, "3"]}},
            QueryAnswer(3.0, 1, None, URL),
        ),
    ],
    ids=["one", "empty", "two", "nan", "inf", "scalar"],
)
def test_the_answer_counts_series_as_keda_does(
    status: int, body: object, expected: QueryAnswer
) -> None:
    client, seen = _client(status, body)
    assert query_answer(client, "sum(my_custom_gauge)") == expected
    assert seen[0].url.path == "/api/v1/query"
    assert seen[0].url.params["query"] == "sum(my_custom_gauge)"


def test_a_rejected_query_is_an_error_in_the_answer_not_raised() -> None:
    client, _ = _client(400, {"status": "error", "errorType": "bad_data", "error": "parse error"})
    answer = query_answer(client, "sum(", source="service/monitoring/prom:9090")
    assert answer.value is None
    assert answer.error is not None
    assert "parse error" in answer.error
    assert answer.source == "service/monitoring/prom:9090"


def test_a_5xx_is_an_error_in_the_answer() -> None:
    client, _ = _client(503, {"status": "error", "error": "overloaded"})
    answer = query_answer(client, "up")
    assert answer.error is not None
    assert "HTTP 503" in answer.error


def test_an_unreachable_server_is_an_error_in_the_answer() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = PrometheusClient(URL, transport=httpx.MockTransport(refuse))
    answer = query_answer(client, "up")
    assert (answer.value, answer.series, answer.source) == (None, 0, URL)
    assert answer.error is not None
    assert answer.error.startswith(f"{URL}/api/v1/query: cannot connect (connection refused)")


@pytest.mark.parametrize("status", [200, 400, 422, 503])
def test_get_keeps_any_answer_raw(status: int) -> None:
    body = {"status": "error", "error": "x"} if status != 200 else _vector("1")
    client, seen = _client(status, body)
    got = client.get("/api/v1/query", {"query": "up", "namespace": "demo"})
    assert got == (status, json.dumps(body))
    assert dict(seen[0].url.params) == {"query": "up", "namespace": "demo"}
