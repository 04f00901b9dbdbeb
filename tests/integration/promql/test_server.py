"""The launcher and the client against the real Debian ``prometheus`` on loopback.

One test scrapes a real exposition over HTTP to see staleness markers at work: when a series
disappears from a target, the real server stops returning it at the next scrape, not five
minutes later, which is what ``SeriesStore.mark_stale`` models.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscale.errors import InputError, UnavailableError
from gpuscale.prometheus import (
    PrometheusServer,
    create_blocks_from_openmetrics,
    prometheus_version,
)
from gpuscale.promql import VectorResult

pytestmark = pytest.mark.integration


def test_version_is_debian_2_42() -> None:
    assert prometheus_version().startswith("2.42.")


def test_start_query_and_stop(tmp_path: Path) -> None:
    server = PrometheusServer(tmp_path / "data")
    with server:
        url = server.url
        assert url.startswith("http://127.0.0.1:")
        with server.client() as client:
            assert client.ready()
            result = client.query("vector(1) + 1", t_ms=1_700_000_000_000)
            assert isinstance(result, VectorResult)
            assert result.samples[0].value == 2.0
            assert client.targets() == []
    assert server.port is None
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url


def test_bad_configuration_is_reported(tmp_path: Path) -> None:
    server = PrometheusServer(tmp_path / "data", config="scrape_configs: [[[", ready_timeout_s=20)
    with pytest.raises(UnavailableError, match="did not become ready"):
        server.start()


def test_backfill_rejects_bad_openmetrics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.om"
    bad.write_text("metric{a=b} 1\n")
    with pytest.raises(InputError, match="promtool could not backfill it") as info:
        create_blocks_from_openmetrics(bad, tmp_path / "data")
    assert str(bad) in str(info.value)


class _Exposition(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(type(self).body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def exposition() -> Iterator[tuple[str, type[_Exposition]]]:
    handler = type("Handler", (_Exposition,), {"body": b'workload_gauge{pod="a"} 1\n'})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def _poll(check: object, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def test_scrape_and_staleness(tmp_path: Path, exposition: tuple[str, type[_Exposition]]) -> None:
    address, handler = exposition
    config = f"""
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: workload
    static_configs:
      - targets: ["{address}"]
"""
    with PrometheusServer(tmp_path / "data", config=config) as server, server.client() as client:

        def up() -> bool:
            targets = client.targets()
            return bool(targets) and targets[0].health == "up"

        _poll(up)
        _poll(lambda: len(client.query("workload_gauge")) == 1)  # type: ignore[arg-type]
        handler.body = b""  # the series disappears from the target
        _poll(lambda: len(client.query("workload_gauge")) == 0, timeout_s=10)  # type: ignore[arg-type]
        target = client.targets()[0]
        assert target.scrape_url == f"http://{address}/metrics"
        assert target.labels == (("instance", address), ("job", "workload"))
