"""Candidate: granian's own RSGI interface (its fastest path)."""

from __future__ import annotations

from typing import Any

from benchmarks.app_vs_go.candidates.common import BAD, CONTENT_TYPE, HELLO, metrics, set_value


async def app(scope: Any, protocol: Any) -> None:
    if scope.path == "/metrics":
        status, content_type, body = 200, CONTENT_TYPE, metrics()
    elif set_value(scope.query_string.encode("latin-1")):
        status, content_type, body = 200, "text/plain; charset=utf-8", HELLO
    else:
        status, content_type, body = 400, "text/plain; charset=utf-8", BAD
    protocol.response_bytes(status, [("content-type", content_type)], body)
