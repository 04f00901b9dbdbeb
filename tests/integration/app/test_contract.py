"""The tutorial's HTTP contract and every extension, through real HTTP on loopback.

One ``gpuscale app --log-level debug`` serves the whole module (each test sets the gauge
it then reads); tests that need other flags start their own. Expected answers are the Go
program's (see ``test_go_parity`` for the side-by-side run against the Go binary).
"""

from __future__ import annotations

import gzip
import http.client
import os
import re
from collections.abc import Iterator

import pytest

from tests.integration.app.conftest import (
    AppProcess,
    StartApp,
    gauge_from_metrics,
    gpuscale_command,
    read_until_closed,
    split_responses,
)

pytestmark = pytest.mark.integration

HELLO = b"Hello, from the handler!"
BAD = b"Bad Request: invalid input\n"
TEXT = "text/plain; charset=utf-8"


@pytest.fixture(scope="module")
def server() -> Iterator[AppProcess]:
    env = {k: v for k, v in os.environ.items() if k != "GPUSCALE_SETTER_TOKEN"}
    app = AppProcess(
        [*gpuscale_command(), "app", "--host", "127.0.0.1", "--port", "0", "--log-level", "debug"],
        env=env,
    )
    try:
        yield app.wait_listening()
    finally:
        app.stop()


def current_gauge(server: AppProcess, name: str = "my_custom_gauge") -> float:
    status, _, body = server.request("/metrics")
    assert status == 200
    return gauge_from_metrics(body, name)


def test_tutorial_step_sets_the_gauge_and_metrics_shows_it(server: AppProcess) -> None:
    status, headers, body = server.request("/?value=160")
    assert (status, body) == (200, HELLO)
    assert headers["Content-Type"] == TEXT
    assert headers["Content-Length"] == "24"
    assert re.fullmatch(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", headers["Date"])
    assert "X-Content-Type-Options" not in headers

    status, headers, body = server.request("/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert b"# HELP my_custom_gauge This is a custom gauge metric\n" in body
    assert b"# TYPE my_custom_gauge gauge\n" in body
    assert gauge_from_metrics(body) == 160.0


@pytest.mark.parametrize(
    "target",
    ["/", "/?value=", "/?value=abc", "/?value=12abc", "/?value=%zz", "/?value=1;x", "/?x=1"],
)
def test_missing_or_bad_value_is_400_and_the_gauge_stays(server: AppProcess, target: str) -> None:
    assert server.request("/?value=33")[0] == 200
    status, headers, body = server.request(target)
    assert (status, body) == (400, BAD)
    assert headers["Content-Type"] == TEXT
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert current_gauge(server) == 33.0


@pytest.mark.parametrize(("text", "value"), [("1e3", 1000.0), ("0x1p4", 16.0), ("-2_5.5", -25.5)])
def test_go_number_forms(server: AppProcess, text: str, value: float) -> None:
    assert server.request(f"/?value={text}")[0] == 200
    assert current_gauge(server) == value


@pytest.mark.parametrize("text", ["NaN", "Inf", "-inf", "%2BInfinity"])
def test_non_finite_is_refused_by_default(server: AppProcess, text: str) -> None:
    assert server.request("/?value=5")[0] == 200
    status, headers, body = server.request(f"/?value={text}")
    assert status == 400
    assert body.startswith(b"Bad Request: invalid input")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert current_gauge(server) == 5.0


def test_non_finite_is_accepted_with_the_flag(start_app: StartApp) -> None:
    app = start_app("--allow-non-finite")
    status, _, body = app.request("/?value=NaN")
    assert (status, body) == (200, HELLO)
    assert b"my_custom_gauge NaN\n" in app.request("/metrics")[2]
    assert app.request("/?value=-Inf")[0] == 200
    assert b"my_custom_gauge -Inf\n" in app.request("/metrics")[2]


def test_custom_metric_name_and_help(start_app: StartApp) -> None:
    app = start_app("--metric-name", "queue_depth", "--metric-help", "Jobs waiting")
    assert app.request("/?value=12")[0] == 200
    body = app.request("/metrics")[2]
    assert b"# HELP queue_depth Jobs waiting\n" in body
    assert gauge_from_metrics(body, "queue_depth") == 12.0
    assert b"my_custom_gauge" not in body


def test_openmetrics_when_asked(server: AppProcess) -> None:
    accept = (
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
        "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    )
    server.request("/?value=8")
    status, headers, body = server.request("/metrics", headers={"Accept": accept})
    assert status == 200
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    assert body.endswith(b"# EOF\n")
    assert b"my_custom_gauge 8.0\n" in body
    plain = server.request("/metrics", headers={"Accept": "text/plain"})[1]
    assert plain["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"


def test_gzip_when_accepted(server: AppProcess) -> None:
    server.request("/?value=9")
    status, headers, body = server.request("/metrics", headers={"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert gauge_from_metrics(gzip.decompress(body)) == 9.0


def test_healthz_and_readyz(server: AppProcess) -> None:
    for path in ("/healthz", "/readyz"):
        status, headers, body = server.request(path)
        assert (status, body, headers["Content-Type"]) == (200, b"ok\n", TEXT)


def test_head_has_headers_but_no_body(server: AppProcess) -> None:
    status, headers, body = server.request("/?value=4", method="HEAD")
    assert (status, body, headers["Content-Length"]) == (200, b"", "24")
    assert current_gauge(server) == 4.0


def test_any_method_and_path_sets_the_gauge_like_go(server: AppProcess) -> None:
    conn = server.connection()
    try:
        conn.request("POST", "/some/path?value=6", body=b"ignored body")
        response = conn.getresponse()
        assert (response.status, response.read()) == (200, HELLO)
        conn.request("GET", "/metrics")
        assert gauge_from_metrics(conn.getresponse().read()) == 6.0
    finally:
        conn.close()


def test_pipelined_requests_are_answered_in_order(server: AppProcess) -> None:
    with server.raw() as sock:
        sock.sendall(
            b"GET /?value=21 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /?value=x HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        )
        responses = split_responses(read_until_closed(sock))
    assert [r[0] for r in responses] == [
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 400 Bad Request",
        b"HTTP/1.1 200 OK",
    ]
    assert responses[0][2] == HELLO
    assert responses[1][2] == BAD
    assert responses[2][1]["connection"] == "close"
    assert gauge_from_metrics(responses[2][2]) == 21.0


def test_http10_closes_unless_keep_alive_is_asked(server: AppProcess) -> None:
    with server.raw() as sock:
        sock.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        [(status, headers, body)] = split_responses(read_until_closed(sock))
    assert (status, body, headers["connection"]) == (b"HTTP/1.1 200 OK", b"ok\n", "close")
    with server.raw() as sock:
        sock.sendall(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        head = sock.recv(4096)
        assert b"Connection: keep-alive\r\n" in head
        sock.sendall(b"GET /readyz HTTP/1.0\r\n\r\n")
        assert b"ok\n" in read_until_closed(sock)


@pytest.mark.parametrize(
    ("request_bytes", "status_line"),
    [
        (b"NOT HTTP AT ALL\r\n\r\n", b"HTTP/1.1 400 Bad Request"),
        (
            b"GET /?value=1 HTTP/1.1\r\n\r\n",
            b"HTTP/1.1 400 Bad Request: missing required Host header",
        ),
        (b"GET / HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n", b"HTTP/1.1 400 Bad Request"),
    ],
)
def test_malformed_requests_get_400_and_close(
    server: AppProcess, request_bytes: bytes, status_line: bytes
) -> None:
    with server.raw() as sock:
        sock.sendall(request_bytes)
        data = read_until_closed(sock)
    assert data.split(b"\r\n", 1)[0] == status_line
    assert b"Connection: close\r\n" in data
    assert server.request("/healthz")[0] == 200


def test_huge_headers_get_431(server: AppProcess) -> None:
    with server.raw() as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: ")
        filler = b"a" * 65536
        try:
            for _ in range(20):
                sock.sendall(filler)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = read_until_closed(sock)
    assert data.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")


def test_one_debug_line_per_request(server: AppProcess) -> None:
    for value in range(3):
        server.request(f"/?value={value}&probe=debugline")
    server.request("/?value=oops&probe=debugline")
    pattern = (
        r'127\.0\.0\.1:\d+ "GET /\?value=\S+&probe=debugline HTTP/1\.1" (200|400) \d+ [\d.]+ms$'
    )
    server.wait_for_line(r"value=oops&probe=debugline")
    assert server.count_lines(pattern) == 4
    assert server.count_lines(r'value=oops&probe=debugline HTTP/1\.1" 400 ') == 1


def test_info_level_logs_no_request_lines(start_app: StartApp) -> None:
    app = start_app()
    assert app.request("/?value=1&probe=quiet")[0] == 200
    app.stop()
    assert "probe=quiet" not in app.log
    assert "stopped" in app.log


TOKEN = "Zm9vYmFyLXNlY3JldC10b2tlbg"


@pytest.mark.parametrize("via", ["env", "flag"])
def test_setter_token(start_app: StartApp, via: str) -> None:
    if via == "env":
        app = start_app("--log-level", "debug", env={"GPUSCALE_SETTER_TOKEN": TOKEN})
    else:
        app = start_app("--log-level", "debug", "--setter-token", TOKEN)
    status, headers, body = app.request("/?value=1")
    assert (status, body) == (401, b"Unauthorized\n")
    assert headers["WWW-Authenticate"].startswith("Bearer")
    status, headers, _ = app.request("/?value=1", headers={"Authorization": "Bearer nope"})
    assert status == 401
    assert 'error="invalid_token"' in headers["WWW-Authenticate"]
    assert gauge_from_metrics(app.request("/metrics")[2]) == 0.0

    status, _, body = app.request("/?value=77", headers={"Authorization": f"Bearer {TOKEN}"})
    assert (status, body) == (200, HELLO)
    assert gauge_from_metrics(app.request("/metrics")[2]) == 77.0
    assert app.request("/readyz")[0] == 200
    app.wait_for_line(r'"GET /readyz HTTP/1\.1" 200')
    app.stop()
    assert TOKEN not in app.log
    assert "setter token required" in app.log


def test_busy_port_is_a_one_line_error(start_app: StartApp) -> None:
    first = start_app()
    busy = AppProcess(
        [*gpuscale_command(), "app", "--host", "127.0.0.1", "--port", str(first.port)]
    )
    try:
        assert busy.wait_exit() == 1
    finally:
        busy.stop()
    assert busy.lines == [
        f"gpuscale: error: 127.0.0.1:{first.port}: the address is already in use "
        "(fix: stop the program listening there, or pass another --port)"
    ]


def test_address_of_another_machine_is_an_input_error() -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never local, and bind() sends no packet.
    app = AppProcess([*gpuscale_command(), "app", "--host", "192.0.2.1", "--port", "0"])
    try:
        assert app.wait_exit() == 2
    finally:
        app.stop()
    [line] = app.lines
    assert line.startswith("gpuscale: error: --host: ")


def test_host_ipv6_any_also_serves_ipv4_like_go(start_app: StartApp) -> None:
    app = start_app("--host", "::")
    assert app.host == "[::]"
    for address in ("127.0.0.1", "::1"):
        conn = http.client.HTTPConnection(address, app.port, timeout=15)
        try:
            conn.request("GET", "/healthz")
            assert conn.getresponse().read() == b"ok\n"
        finally:
            conn.close()


@pytest.mark.parametrize(
    ("args", "env", "prefix"),
    [
        (["--port", "nope"], {}, "gpuscale: error: --port: "),
        (["--log-level", "chatty"], {}, "gpuscale: error: --log-level: "),
        (["--metric-name", "my-gauge"], {}, "gpuscale: error: --metric-name: "),
        ([], {"GPUSCALE_SETTER_TOKEN": ""}, "gpuscale: error: GPUSCALE_SETTER_TOKEN: "),
    ],
)
def test_bad_input_through_the_console_script(
    args: list[str], env: dict[str, str], prefix: str
) -> None:
    full_env = {k: v for k, v in os.environ.items() if k != "GPUSCALE_SETTER_TOKEN"} | env
    app = AppProcess([*gpuscale_command(), "app", *args], env=full_env)
    try:
        assert app.wait_exit() == 2
    finally:
        app.stop()
    [line] = app.lines
    assert line.startswith(prefix)
    assert "(fix: " in line
