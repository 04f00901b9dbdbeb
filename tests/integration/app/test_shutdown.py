"""SIGTERM drains ``gpuscale app`` in Kubernetes' order, with real connections.

An in-flight request is one whose bytes have started to arrive: the test sends half a
request, signals, then sends the rest and expects the answer. Every wait is for a real
event (a log line, a closed socket, the process exit), bounded.
"""

from __future__ import annotations

import signal
import socket
import time

import pytest

from tests.integration.app.conftest import (
    WAIT,
    StartApp,
    read_until_closed,
    split_responses,
)

pytestmark = pytest.mark.integration

SHUTTING_DOWN = r"shutting down: /readyz answers 503"


def start_in_flight(sock: socket.socket, partial: bytes) -> None:
    """Send a complete request then ``partial`` in one write, and read the first answer.

    Once the first answer is back the server has parsed the whole write, so the second
    request is in flight on its side before the test sends any signal.
    """
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n" + partial)
    data = b""
    while not data.endswith(b"\r\n\r\nok\n"):
        chunk = sock.recv(4096)
        assert chunk, "server closed the connection"
        data += chunk


def wait_refused(host: str, port: int, timeout: float = WAIT) -> None:
    """Until a new connection is refused: the listener has closed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
        except ConnectionRefusedError:
            return
        time.sleep(0.02)
    raise AssertionError(f"{host}:{port} still accepts connections")


def test_in_flight_request_finishes_and_idle_connections_close(start_app: StartApp) -> None:
    app = start_app("--grace-period", "20s")
    idle = app.connection()
    idle.request("GET", "/healthz")
    assert idle.getresponse().read() == b"ok\n"
    assert idle.sock is not None
    idle_sock = idle.sock

    with app.raw() as busy:
        start_in_flight(busy, b"GET /?value=7 HTTP/1.1\r\nHost: t\r\n")
        app.signal(signal.SIGTERM)
        app.wait_for_line(SHUTTING_DOWN)
        wait_refused(app.host, app.port)
        assert idle_sock.recv(1) == b"", "idle keep-alive connection should be closed"
        assert app.proc.poll() is None, "must wait for the in-flight request"

        busy.sendall(b"\r\n")
        [(status, headers, body)] = split_responses(read_until_closed(busy))
    idle.close()
    assert status == b"HTTP/1.1 200 OK"
    assert body == b"Hello, from the handler!"
    assert headers["connection"] == "close"
    assert app.wait_exit() == 0
    assert "stopped" in app.log
    assert "cut" not in app.log


def test_readyz_turns_503_first_and_a_second_signal_ends_the_wait(start_app: StartApp) -> None:
    app = start_app("--shutdown-delay", "60s", "--grace-period", "90s")
    assert app.request("/readyz")[0] == 200
    app.signal(signal.SIGTERM)
    app.wait_for_line(SHUTTING_DOWN)

    status, headers, body = app.request("/readyz")
    assert (status, body) == (503, b"shutting down\n")
    assert headers["Connection"] == "close"
    assert app.request("/healthz")[0] == 200
    status, headers, _ = app.request("/?value=3")
    assert (status, headers["Connection"]) == (200, "close")
    assert app.proc.poll() is None

    started = time.monotonic()
    app.signal(signal.SIGTERM)
    assert app.wait_exit() == 0
    assert time.monotonic() - started < 30, "the second signal should cut the 60 s delay short"


def test_requests_still_open_at_the_end_of_the_grace_period_are_cut(start_app: StartApp) -> None:
    app = start_app("--grace-period", "1s")
    with app.raw() as stuck:
        start_in_flight(stuck, b"GET /?value=1 HTTP/1.1\r\nHost: t\r\n")
        app.signal(signal.SIGTERM)
        assert app.wait_exit() == 0
        assert read_until_closed(stuck) == b""
    assert "grace period over: cut 1 connection(s)" in app.log


def test_sigint_drains_too(start_app: StartApp) -> None:
    app = start_app()
    assert app.request("/?value=2")[0] == 200
    app.signal(signal.SIGINT)
    assert app.wait_exit() == 0
    assert "stopped" in app.log
