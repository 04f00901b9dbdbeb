"""The Prometheus HTTP client against faked answers shaped like Prometheus 2.42's.

The bodies are those of web/api/v1/api.go (``apiResponse``, ``queryData``, ``TargetDiscovery``)
with values as Prometheus writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest

from gpuscale.errors import RetryableError, UnavailableError
from gpuscale.prometheus import PrometheusClient
from gpuscale.promql import MatrixResult, PromQLError, ScalarResult, VectorResult

Handler = Callable[[httpx.Request], httpx.Response]


def _client(handler: Handler) -> PrometheusClient:
    return PrometheusClient(
        "http://prom.example:9090/",
        transport=httpx.MockTransport(handler),
        headers={"Authorization": "Bearer s3cret"},
    )


def _ok(data: object) -> httpx.Response:
    return httpx.Response(200, json={"status": "success", "data": data})


def test_instant_query_sends_time_and_parses_vector() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _ok(
            {
                "resultType": "vector",
                "result": [{"metric": {"pod": "a"}, "value": [1700000000.5, "160"]}],
            }
        )

    with _client(handler) as client:
        result = client.query("sum(my_custom_gauge)", t_ms=1_700_000_000_500)
    assert isinstance(result, VectorResult)
    assert result.t_ms == 1_700_000_000_500
    assert result.samples[0].labels == (("pod", "a"),)
    assert result.samples[0].value == 160.0
    request = seen[0]
    assert request.url.path == "/api/v1/query"
    assert request.url.params["query"] == "sum(my_custom_gauge)"
    assert request.url.params["time"] == "1700000000.500"
    assert request.headers["Authorization"] == "Bearer s3cret"


def test_scalar_and_empty_vector() -> None:
    answers = iter(
        [
            _ok({"resultType": "scalar", "result": [1700000000, "2"]}),
            _ok({"resultType": "vector", "result": []}),
        ]
    )
    with _client(lambda request: next(answers)) as client:
        scalar = client.query("1 + 1", t_ms=1_700_000_000_000)
        empty = client.query("absent(up)", t_ms=1_700_000_015_000)
    assert scalar == ScalarResult(2.0, 1_700_000_000_000)
    assert empty == VectorResult((), 1_700_000_015_000)


def test_range_query() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/query_range"
        assert request.url.params["start"] == "1700000000.000"
        assert request.url.params["end"] == "1700000060.000"
        assert request.url.params["step"] == "30"
        return _ok(
            {
                "resultType": "matrix",
                "result": [
                    {
                        "metric": {"__name__": "up"},
                        "values": [[1700000000, "1"], [1700000030, "NaN"], [1700000060, "+Inf"]],
                    }
                ],
            }
        )

    with _client(handler) as client:
        result = client.query_range("up", 1_700_000_000_000, 1_700_000_060_000, 30_000)
    assert isinstance(result, MatrixResult)
    assert result.series[0].timestamps_ms == (
        1_700_000_000_000,
        1_700_000_030_000,
        1_700_000_060_000,
    )
    assert result.series[0].values[2] == float("inf")


def test_targets() -> None:
    body = {
        "activeTargets": [
            {
                "discoveredLabels": {"__address__": "10.0.0.1:8080", "job": "app"},
                "labels": {"instance": "10.0.0.1:8080", "job": "app"},
                "scrapePool": "app",
                "scrapeUrl": "http://10.0.0.1:8080/metrics",
                "globalUrl": "http://10.0.0.1:8080/metrics",
                "lastError": "",
                "lastScrape": "2023-11-14T22:13:20.123456789Z",
                "lastScrapeDuration": 0.0042,
                "health": "up",
                "scrapeInterval": "15s",
                "scrapeTimeout": "10s",
            }
        ],
        "droppedTargets": [{"discoveredLabels": {"__address__": "10.0.0.2:9100", "job": "node"}}],
    }
    with _client(lambda request: _ok(body)) as client:
        targets = client.targets(state="any")
    assert [t.health for t in targets] == ["up", "dropped"]
    up = targets[0]
    assert up.scrape_url == "http://10.0.0.1:8080/metrics"
    assert up.labels == (("instance", "10.0.0.1:8080"), ("job", "app"))
    assert up.last_scrape == datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert up.scrape_interval == "15s"
    assert targets[1].scrape_url == "10.0.0.2:9100"


def test_readiness() -> None:
    answers = iter([httpx.Response(503, text="Service Unavailable"), httpx.Response(200)])
    with _client(lambda request: next(answers)) as client:
        assert client.ready() is False
        assert client.ready() is True

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with _client(refuse) as client:
        assert client.ready() is False


def test_rejected_query_is_a_promql_error() -> None:
    body = {
        "status": "error",
        "errorType": "bad_data",
        "error": 'invalid parameter "query": 1:6: parse error: expected type range vector',
    }
    with (
        _client(lambda request: httpx.Response(400, json=body)) as client,
        pytest.raises(PromQLError, match="parse error") as info,
    ):
        client.query("rate(x)", t_ms=0)
    assert "rate(x)" in str(info.value)


@pytest.mark.parametrize(
    ("response", "error", "retry_after"),
    [
        (
            httpx.Response(503, json={"status": "error", "error": "overloaded"}),
            RetryableError,
            None,
        ),
        (httpx.Response(429, headers={"Retry-After": "7"}), RetryableError, 7.0),
        (httpx.Response(200, text="<html>not prometheus</html>"), UnavailableError, None),
        (httpx.Response(404, text="404 page not found"), UnavailableError, None),
        (
            httpx.Response(200, json={"status": "success", "data": {"resultType": "x"}}),
            UnavailableError,
            None,
        ),
    ],
)
def test_failures_map_to_gpuscale_errors(
    response: httpx.Response, error: type[Exception], retry_after: float | None
) -> None:
    with _client(lambda request: response) as client, pytest.raises(error) as info:
        client.query("up", t_ms=0)
    text = str(info.value)
    assert "http://prom.example:9090/api/v1/query" in text
    assert "s3cret" not in text
    assert "\n" not in text
    if retry_after is not None:
        assert isinstance(info.value, RetryableError)
        assert info.value.retry_after == retry_after


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (httpx.ConnectError("connection refused"), UnavailableError),
        (httpx.ReadTimeout("timed out"), RetryableError),
    ],
)
def test_transport_failures(exc: httpx.HTTPError, error: type[Exception]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with _client(handler) as client, pytest.raises(error) as info:
        client.query("up")
    assert "s3cret" not in str(info.value)


def test_raw_json_for_keda() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": []}}
    with _client(lambda request: httpx.Response(200, content=json.dumps(body))) as client:
        assert client.query_json("up", t_ms=0) == body
