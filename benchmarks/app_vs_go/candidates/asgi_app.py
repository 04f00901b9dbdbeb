"""Candidate: a bare ASGI application (run by uvicorn or granian --interface asgi)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks.app_vs_go.candidates.common import BAD, CONTENT_TYPE, HELLO, metrics, set_value

Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Callable[[], Awaitable[Any]], send: Send) -> None:
    if scope["type"] != "http":
        return
    if scope["path"] == "/metrics":
        status, content_type, body = 200, CONTENT_TYPE.encode(), metrics()
    elif set_value(scope["query_string"]):
        status, content_type, body = 200, b"text/plain; charset=utf-8", HELLO
    else:
        status, content_type, body = 400, b"text/plain; charset=utf-8", BAD
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
