"""Fixtures for the live commands: the fake API server and real pods on loopback.

A "pod" here is a real HTTP server on loopback speaking the tutorial workload's
contract (``GET /?value=<number>`` sets the gauge and answers ``Hello, from the
handler!``; 400 for a bad value; 401 without the setter token when one is set;
``/metrics`` in the text format). The fake API server forwards port-forward streams
to it.

``stacks`` (session scope) runs two real Prometheus processes for the tutorial's chain,
broken and fixed (``chain.py``), for ``verify`` and its documented outputs.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.integration.live import chain as c
from tests.integration.live.fake_kube import FakeKube
from tests.integration.live.objects import NS


@dataclass
class PodServer:
    token: str | None = None
    gauge: float = 0.0
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def address(self) -> tuple[str, int]:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return str(host), int(port)


def _start(pod: PodServer) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _reply(self, code: int, text: str) -> None:
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            pod.requests.append((self.path, self.headers.get("Authorization")))
            parts = urlsplit(self.path)
            if parts.path == "/metrics":
                self._reply(200, f"my_custom_gauge {pod.gauge}\n")
                return
            if pod.token is not None and self.headers.get("Authorization") != f"Bearer {pod.token}":
                self._reply(401, "Unauthorized: setter token required")
                return
            values = parse_qs(parts.query).get("value")
            try:
                value = float(values[0]) if values else math.nan
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                self._reply(400, "Bad Request: invalid input")
                return
            pod.gauge = value
            self._reply(200, "Hello, from the handler!")

    pod.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    pod.server.daemon_threads = True
    threading.Thread(target=pod.server.serve_forever, args=(0.05,), daemon=True).start()


@pytest.fixture
def fake_kube(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKube]:
    kube = FakeKube()
    kube.start()
    kubeconfig = kube.write_kubeconfig(tmp_path / "kubeconfig", namespace=NS)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("GPUSCALE_SETTER_TOKEN", raising=False)
    yield kube
    kube.stop()


@pytest.fixture
def pod_server() -> Iterator[Callable[..., PodServer]]:
    started: list[PodServer] = []

    def make(token: str | None = None) -> PodServer:
        pod = PodServer(token=token)
        _start(pod)
        started.append(pod)
        return pod

    yield make
    for pod in started:
        assert pod.server is not None
        pod.server.shutdown()
        pod.server.server_close()


@dataclass
class RealPrometheus:
    url: str
    pod: PodServer


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def real_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealPrometheus]:
    """Debian's Prometheus on loopback scraping a workload pod whose gauge is 160."""
    import shutil
    import subprocess
    import time

    import httpx

    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/install-system-deps.sh installs it)")
    pod = PodServer(gauge=160.0)
    _start(pod)
    tmp = tmp_path_factory.mktemp("prometheus")
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: app\n    static_configs: [{{targets: ['127.0.0.1:{pod.address[1]}']}}]\n",
        encoding="utf-8",
    )
    port = _free_port()
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                doc = httpx.get(
                    f"{url}/api/v1/query", params={"query": "sum(my_custom_gauge)"}
                ).json()
                if doc["data"]["result"]:
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("Prometheus did not start scraping within 30s")
            time.sleep(0.2)
        yield RealPrometheus(url, pod)
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert pod.server is not None
        pod.server.shutdown()
        pod.server.server_close()


KSM_TEXT = (
    "# HELP kube_deployment_status_replicas The number of replicas per deployment.\n"
    "# TYPE kube_deployment_status_replicas gauge\n"
    f'kube_deployment_status_replicas{{namespace="{c.APP_NS}",deployment="{c.APP}"}} 1\n'
)


def _serve_text(text: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@dataclass
class Stack:
    """A real Prometheus scraping what the chain's cluster would let it scrape."""

    url: str
    port: int
    state: c.Chain

    def install(self, kube: FakeKube, *, drop: tuple[str, ...] = ()) -> None:
        """Put the chain's objects in the fake API server, ``prometheus-operated``
        forwarded to this Prometheus."""
        for doc in self.state.objects:
            if doc["metadata"]["name"] not in drop:
                kube.put(doc)
        kube.pod_backend(self.state.prom_ns, c.PROM_POD, 9090, ("127.0.0.1", self.port))


def _start_prometheus(
    binary: str, tmp: Path, state: c.Chain, ksm: int, app: int
) -> tuple[subprocess.Popen[bytes], Stack]:
    # Targets carry the pod addresses a cluster would show; Prometheus reaches them
    # through proxy_url, the loopback server standing in for the pod (it answers any path).
    app_job = (
        f"  - job_name: serviceMonitor/{c.APP_NS}/{c.APP}/0\n"
        f"    proxy_url: http://127.0.0.1:{app}\n"
        f"    static_configs: [{{targets: ['{c.APP_POD_ADDRESS}'], labels: "
        f"{{namespace: {c.APP_NS}, service: {c.APP}, job: {c.APP}}}}}]\n"
        if state.fixed
        # The job exists, but service discovery finds nothing in kube-system.
        else f"  - job_name: serviceMonitor/{c.APP_NS}/{c.APP}/0\n    static_configs: []\n"
    )
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: {c.KSM_POOL.format(ns=state.prom_ns)}\n"
        "    honor_labels: true\n"
        f"    proxy_url: http://127.0.0.1:{ksm}\n"
        f"    static_configs: [{{targets: ['{c.KSM_POD_ADDRESS}']}}]\n" + app_job,
        encoding="utf-8",
    )
    port = _free_port()
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return process, Stack(f"http://127.0.0.1:{port}", port, state)


def _ready(stack: Stack, process: subprocess.Popen[bytes]) -> None:
    wanted = [f'kube_deployment_status_replicas{{namespace="{c.APP_NS}"}}']
    if stack.state.fixed:
        wanted.append(stack.state.query)
    deadline = time.monotonic() + 30
    while True:
        try:
            found = all(
                httpx.get(f"{stack.url}/api/v1/query", params={"query": q}).json()["data"]["result"]
                for q in wanted
            )
            if found:
                return
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            pytest.fail("Prometheus did not start scraping within 30s")
        time.sleep(0.2)


@pytest.fixture(scope="session")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[bool, Stack]]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/install-system-deps.sh installs it)")
    ksm = _serve_text(KSM_TEXT)
    app = _serve_text("# TYPE my_custom_gauge gauge\nmy_custom_gauge 40\n")
    started: list[subprocess.Popen[bytes]] = []
    found: dict[bool, Stack] = {}
    try:
        for fixed in (False, True):
            process, stack = _start_prometheus(
                binary,
                tmp_path_factory.mktemp("prometheus"),
                c.chain(fixed=fixed),
                ksm.server_address[1],
                app.server_address[1],
            )
            started.append(process)
            found[fixed] = stack
        for process, stack in zip(started, found.values(), strict=True):
            _ready(stack, process)
        yield found
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=10)
        for server in (ksm, app):
            server.shutdown()
            server.server_close()
