"""The request-to-reply decision of ``gpuscale app``, with a fresh registry per test.

Expected bytes and headers are what the tutorial's Go program answers (Go 1.19
``net/http``: ``http.Error`` appends a newline and sets ``nosniff``; a plain
``w.Write`` is sniffed as ``text/plain; charset=utf-8``); the integration test
``test_go_parity`` checks the same against the running Go binary.
"""

from __future__ import annotations

import gzip
import math

import pytest
from prometheus_client import CollectorRegistry, Gauge

from gpuscale.app import BAD_REQUEST_BODY, HELLO_BODY, AppConfig, Reply, Responder, new_registry
from gpuscale.errors import InputError

TEXT = ("Content-Type", "text/plain; charset=utf-8")
NOSNIFF = ("X-Content-Type-Options", "nosniff")


def make(config: AppConfig | None = None) -> tuple[Responder, CollectorRegistry, Gauge]:
    config = config or AppConfig()
    registry, gauge = new_registry(config)
    return Responder(config, registry, gauge), registry, gauge


def gauge_value(registry: CollectorRegistry, name: str = "my_custom_gauge") -> float | None:
    return registry.get_sample_value(name)


def test_setting_the_gauge_answers_hello() -> None:
    responder, registry, _ = make()
    reply = responder.respond(b"/?value=160")
    assert reply == Reply(200, (TEXT,), HELLO_BODY)
    assert reply.body == b"Hello, from the handler!"
    assert gauge_value(registry) == 160.0


@pytest.mark.parametrize(
    "target",
    [
        b"/",
        b"/?",
        b"/?value=",
        b"/?value",
        b"/?value=abc",
        b"/?value=1,5",
        b"/?value=%201",
        b"/?val=1",
        b"/?value=1;x=2",
        b"/?value=1e400",
        b"/?value=0x10",
    ],
)
def test_missing_or_unparsable_value_is_400_and_keeps_the_gauge(target: bytes) -> None:
    responder, registry, gauge = make()
    gauge.set(7)
    reply = responder.respond(target)
    assert reply.status == 400
    assert reply.body == BAD_REQUEST_BODY == b"Bad Request: invalid input\n"
    assert reply.headers == (TEXT, NOSNIFF)
    assert gauge_value(registry) == 7.0


@pytest.mark.parametrize(
    ("target", "value"),
    [
        (b"/anything/else?value=2", 2.0),
        (b"/metrics/?value=3", 3.0),
        (b"/?value=1e3", 1000.0),
        (b"/?value=0x1p4", 16.0),
        (b"/?value=1_000", 1000.0),
        (b"/?value=-0.5&value=9", -0.5),
        (b"/?other=1&value=%2B5", 5.0),
        (b"http://example.test/x?value=4", 4.0),
    ],
)
def test_every_path_but_the_reserved_ones_sets_the_gauge(target: bytes, value: float) -> None:
    responder, registry, _ = make()
    assert responder.respond(target).status == 200
    assert gauge_value(registry) == value


@pytest.mark.parametrize("text", [b"NaN", b"nan", b"inf", b"-Inf", b"%2Binfinity", b"INFINITY"])
def test_non_finite_values_are_refused_by_default(text: bytes) -> None:
    responder, registry, gauge = make()
    gauge.set(1)
    reply = responder.respond(b"/?value=" + text)
    assert reply.status == 400
    assert reply.body.startswith(b"Bad Request: invalid input")
    assert b"--allow-non-finite" in reply.body
    assert gauge_value(registry) == 1.0


def test_non_finite_values_are_accepted_when_allowed() -> None:
    responder, registry, _ = make(AppConfig(allow_non_finite=True))
    assert responder.respond(b"/?value=-Inf").status == 200
    assert gauge_value(registry) == -math.inf
    assert responder.respond(b"/?value=NaN").status == 200
    value = gauge_value(registry)
    assert value is not None
    assert math.isnan(value)


def test_metrics_is_the_text_format_by_default() -> None:
    responder, _, gauge = make()
    gauge.set(160)
    reply = responder.respond(b"/metrics")
    assert reply.status == 200
    assert reply.headers == (("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),)
    assert reply.body == (
        b"# HELP my_custom_gauge This is a custom gauge metric\n"
        b"# TYPE my_custom_gauge gauge\n"
        b"my_custom_gauge 160.0\n"
    )


def test_metrics_ignores_a_query() -> None:
    responder, registry, _ = make()
    assert responder.respond(b"/metrics?value=5").status == 200
    assert gauge_value(registry) == 0.0


def test_openmetrics_when_accept_asks_for_it() -> None:
    responder, _, _ = make()
    # The header Prometheus 2.42 sends (scrape/scrape.go, scrapeAcceptHeader).
    accept = (
        b"application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
        b"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    )
    reply = responder.respond(b"/metrics", accept=accept)
    content_type = dict(reply.headers)["Content-Type"]
    assert content_type.startswith("application/openmetrics-text; version=1.0.0")
    assert reply.body.endswith(b"# EOF\n")


def test_gzip_when_accept_encoding_allows_it() -> None:
    responder, _, _ = make()
    reply = responder.respond(b"/metrics", accept_encoding=b"gzip, deflate")
    assert dict(reply.headers)["Content-Encoding"] == "gzip"
    assert b"my_custom_gauge 0.0" in gzip.decompress(reply.body)


def test_custom_metric_name_and_help() -> None:
    responder, registry, _ = make(AppConfig(metric_name="queue_depth", metric_help="Jobs\nwaiting"))
    responder.respond(b"/?value=3")
    body = responder.respond(b"/metrics").body
    assert b"# HELP queue_depth Jobs\\nwaiting\n" in body
    assert b"queue_depth 3.0\n" in body
    assert b"my_custom_gauge" not in body
    assert gauge_value(registry, "queue_depth") == 3.0


def test_runtime_metrics_are_off_by_default_and_on_when_asked() -> None:
    assert b"process_" not in make()[0].respond(b"/metrics").body
    body = make(AppConfig(runtime_metrics=True))[0].respond(b"/metrics").body
    assert b"process_resident_memory_bytes" in body
    assert b"python_info" in body


def test_a_metric_name_clashing_with_runtime_metrics_is_an_input_error() -> None:
    with pytest.raises(InputError, match="--metric-name"):
        new_registry(AppConfig(metric_name="process_open_fds", runtime_metrics=True))


def test_healthz_and_readyz() -> None:
    responder, _, _ = make()
    assert responder.respond(b"/healthz") == Reply(200, (TEXT,), b"ok\n")
    assert responder.respond(b"/readyz") == Reply(200, (TEXT,), b"ok\n")
    responder.ready = False
    assert responder.respond(b"/healthz").status == 200
    not_ready = responder.respond(b"/readyz")
    assert (not_ready.status, not_ready.body) == (503, b"shutting down\n")


TOKEN = "c2VjcmV0LXRva2Vu"


@pytest.mark.parametrize(
    ("authorization", "status", "challenge"),
    [
        (None, 401, 'Bearer realm="gpuscale"'),
        (b"Basic dXNlcjpwYXNz", 401, 'Bearer realm="gpuscale"'),
        (b"Bearer", 401, 'Bearer realm="gpuscale", error="invalid_token"'),
        (b"Bearer wrong", 401, 'Bearer realm="gpuscale", error="invalid_token"'),
        (b"Bearer " + TOKEN.encode() + b"x", 401, 'Bearer realm="gpuscale", error="invalid_token"'),
        (b"Bearer " + TOKEN.encode(), 200, None),
        (b"bearer  " + TOKEN.encode() + b" ", 200, None),
    ],
)
def test_setter_token(authorization: bytes | None, status: int, challenge: str | None) -> None:
    responder, registry, _ = make(AppConfig(setter_token=TOKEN))
    reply = responder.respond(b"/?value=42", authorization=authorization)
    assert reply.status == status
    headers = dict(reply.headers)
    assert headers.get("WWW-Authenticate") == challenge
    assert TOKEN.encode() not in reply.body
    assert gauge_value(registry) == (42.0 if status == 200 else 0.0)


def test_token_is_checked_before_the_value() -> None:
    responder, _, _ = make(AppConfig(setter_token=TOKEN))
    assert responder.respond(b"/?value=bad").status == 401


def test_token_does_not_guard_reads() -> None:
    responder, _, _ = make(AppConfig(setter_token=TOKEN))
    for target in (b"/metrics", b"/healthz", b"/readyz"):
        assert responder.respond(target).status == 200


def test_reply_head_is_the_encoded_headers() -> None:
    assert Reply(200, (TEXT, NOSNIFF), b"").head == (
        b"Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"
    )
