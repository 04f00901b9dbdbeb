"""The registry and the setter every candidate shares."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from gpuscale.app import go_query_value, parse_go_float

REGISTRY = CollectorRegistry(auto_describe=True)
GAUGE = Gauge("my_custom_gauge", "This is a custom gauge metric", registry=REGISTRY)
HELLO = b"Hello, from the handler!"
BAD = b"Bad Request: invalid input\n"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def metrics() -> bytes:
    return generate_latest(REGISTRY)


def set_value(query: bytes) -> bool:
    raw = go_query_value(query, b"value")
    if raw is None:
        return False
    try:
        GAUGE.set(parse_go_float(raw.decode("latin-1")))
    except ValueError:
        return False
    return True
