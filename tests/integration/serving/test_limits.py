"""The emulator holds connections to the gauge server's limits (``--header-timeout``,
``--idle-timeout``, ``--max-header-bytes``, one shared sweep): slow headers get 408, an
idle keep-alive connection closes, oversized headers get 431; a long generation is not
cut by the idle timeout. Real sockets on loopback."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.integration.app.conftest import read_until_closed
from tests.integration.serving.conftest import Running

pytestmark = pytest.mark.integration

FAST = {"header_timeout": 0.4, "idle_timeout": 0.6}


def _connect(running: Running) -> socket.socket:
    parts = urlsplit(running.url)
    return socket.create_connection((parts.hostname, parts.port), timeout=5)


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    sock.settimeout(seconds)
    start = time.monotonic()
    data = read_until_closed(sock)
    return data, time.monotonic() - start


@pytest.mark.parametrize("emulator", [FAST], indirect=True)
def test_slow_headers_get_408(emulator: Running) -> None:
    with _connect(emulator) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: t\r\n")
        data, took = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data
    assert 0.3 < took < 2


@pytest.mark.parametrize("emulator", [FAST], indirect=True)
def test_an_idle_keep_alive_connection_is_closed(emulator: Running) -> None:
    with _connect(emulator) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        data, took = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert 0.4 < took < 2


@pytest.mark.parametrize("emulator", [{"max_header_bytes": 2048}], indirect=True)
@pytest.mark.parametrize("split", [False, True])
def test_oversized_headers_get_431(emulator: Running, split: bool) -> None:
    head = b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 4000 + b"\r\n\r\n"
    with _connect(emulator) as sock:
        if split:  # headers still arriving: cut once past the limit (nothing left unread)
            for at in range(0, 2500, 500):
                sock.sendall(head[at : at + 500])
                time.sleep(0.02)
        else:
            sock.sendall(head)
        data, _ = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 431 "), data


@pytest.mark.parametrize("emulator", [{**FAST, "step_cost": (("base", 0.05),)}], indirect=True)
def test_a_generation_longer_than_the_idle_timeout_is_not_cut(emulator: Running) -> None:
    body = json.dumps({"prompt": [1, 2], "max_tokens": 20, "stream": True}).encode()
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with _connect(emulator) as sock:
        start = time.monotonic()
        sock.sendall(request)
        data, took = _closed_within(sock, 10)
    # 20 steps of 50 ms: longer than the 0.6 s idle timeout, answered whole, then closed idle.
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"data: [DONE]" in data
    assert took > 1.0
    assert time.monotonic() - start < 5
