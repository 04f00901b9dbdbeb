"""``gpuscale app`` under hostile or broken clients: real sockets on loopback.

Each test starts a real server with short timeouts (``--header-timeout``,
``--idle-timeout``) and checks that no client can hold a connection: an HTTP/0.9
request line is answered 400 at once, a slow header is cut with 408, an idle
keep-alive connection is closed, many slow clients are all closed, oversized headers
get 431, and the debug log masks ``?token=`` and cuts long targets. Every wait is
bounded.
"""

from __future__ import annotations

import contextlib
import socket
import time

import pytest

from tests.integration.app.conftest import StartApp, read_until_closed

pytestmark = pytest.mark.integration

FAST = ("--header-timeout", "500ms", "--idle-timeout", "700ms")


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    """What the server sends until it closes, and how long that took."""
    sock.settimeout(seconds)
    start = time.monotonic()
    data = read_until_closed(sock)
    return data, time.monotonic() - start


@pytest.mark.parametrize(
    "chunks",
    [
        [b"GET /metrics\r\n"],
        [b"GET /metrics\n"],
        [b"GET /met", b"rics\r\n"],
        [b"GET /metrics", b"\r\n"],
        [b"GET /metrics\r\n\r\n"],
    ],
    ids=["crlf", "lf", "split-target", "split-line-end", "blank-line"],
)
def test_http09_request_line_gets_400_at_once(start_app: StartApp, chunks: list[bytes]) -> None:
    app = start_app("--header-timeout", "30s")
    with app.raw(timeout=5) as sock:
        for chunk in chunks:
            sock.sendall(chunk)
            time.sleep(0.05)
        data, took = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 400 Bad Request\r\n"), data
    assert b"Connection: close\r\n" in data
    assert took < 2, "answered at once, not at the header timeout"


def test_http2_request_line_gets_505(start_app: StartApp) -> None:
    app = start_app()
    with app.raw(timeout=5) as sock:
        sock.sendall(b"GET / HTTP/2.0\r\nHost: t\r\n\r\n")
        data, _ = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 505 HTTP Version Not Supported\r\n")


def test_pipelined_requests_split_mid_line_still_work(start_app: StartApp) -> None:
    """The HTTP/0.9 check must not misread a request line cut between chunks."""
    app = start_app()
    with app.raw(timeout=5) as sock:
        sock.sendall(b"GET /?value=1 HTTP/1.1\r\nHost: t\r\n\r\nGET /metr")
        time.sleep(0.05)
        sock.sendall(b"ics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        data, _ = _closed_within(sock, 5)
    assert data.count(b"HTTP/1.1 200 OK\r\n") == 2, data
    assert b"my_custom_gauge 1.0" in data


def test_slow_headers_are_cut_with_408(start_app: StartApp) -> None:
    app = start_app(*FAST)
    with app.raw(timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n")
        start = time.monotonic()
        try:
            for _ in range(40):  # one header byte every 100 ms: slowloris
                sock.sendall(b"X")
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data, _ = _closed_within(sock, 5)
        took = time.monotonic() - start
    assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data
    assert took < 3


def test_a_silent_connection_is_closed(start_app: StartApp) -> None:
    app = start_app(*FAST)
    with app.raw(timeout=5) as sock:
        data, took = _closed_within(sock, 5)
    assert data == b""
    assert took < 2.5


def test_an_idle_keep_alive_connection_is_closed_after_its_reply(start_app: StartApp) -> None:
    app = start_app(*FAST)
    with app.raw(timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        data, took = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert 0.5 < took < 2.5


def test_a_busy_keep_alive_connection_stays_open(start_app: StartApp) -> None:
    """Requests more often than the idle timeout keep the connection."""
    app = start_app(*FAST)
    conn = app.connection(timeout=5)
    try:
        for _ in range(6):
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            assert response.status == 200
            response.read()
            time.sleep(0.3)
        assert conn.sock is not None
    finally:
        conn.close()


def test_many_slow_clients_are_all_closed(start_app: StartApp) -> None:
    """300 clients that open a request and never finish it: all cut, the server serves."""
    app = start_app(*FAST)
    socks = []
    try:
        for index in range(300):
            sock = app.raw(timeout=5)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n" if index % 2 else b"GET /")
            socks.append(sock)
        assert app.request("/healthz")[0] == 200
        deadline = time.monotonic() + 5
        closed = 0
        for sock in socks:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            read_until_closed(sock)
            closed += 1
        assert closed == 300
        assert time.monotonic() < deadline
    finally:
        for sock in socks:
            sock.close()
    assert app.request("/healthz")[0] == 200


def test_max_header_bytes_is_the_cap(start_app: StartApp) -> None:
    app = start_app("--max-header-bytes", "4096")
    with app.raw(timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 8192 + b"\r\n\r\n")
        data, _ = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    status, _, _ = app.request("/healthz", headers={"X-Small": "a" * 1000})
    assert status == 200


def test_a_long_request_line_in_one_chunk_is_capped(start_app: StartApp) -> None:
    app = start_app("--max-header-bytes", "4096")
    with app.raw(timeout=5) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"GET /" + b"a" * 20000)
        data, _ = _closed_within(sock, 5)
    assert data.startswith(b"HTTP/1.1 431 ")


def test_debug_log_masks_tokens_and_cuts_long_targets(start_app: StartApp) -> None:
    secret = "s3cr3t-query-token-0123456789abcdef"
    app = start_app("--log-level", "debug")
    assert app.request(f"/?value=1&token={secret}&probe=masked")[0] == 200
    assert app.request(f"/?value=2&access_token={secret}&probe=masked2")[0] == 200
    long_target = "/?value=3&probe=long&pad=" + "x" * 5000
    assert app.request(long_target)[0] == 200
    app.wait_for_line(r"probe=long")
    app.wait_for_line(r"probe=masked2")
    app.stop()
    assert secret not in app.log
    assert secret[:8] not in app.log
    assert "token=<redacted>&probe=masked" in app.log
    [line] = [line for line in app.log.splitlines() if "probe=long" in line]
    assert len(line) < 400
    assert "(+" in line


def test_timeout_flags_are_checked(start_app: StartApp) -> None:
    app = start_app("--header-timeout", "0s", wait=False)
    assert app.wait_exit() == 2
    assert "gpuscale: error: --header-timeout: " in app.log
