"""No secret leaks when a server echoes the ``Authorization`` header back.

A real threaded HTTP server on 127.0.0.1 plays a hostile or badly configured
Kubernetes API server (or a proxy in front of one): every answer is 401, 403 or 500
with the request's ``Authorization`` header (and the token alone, and a piece of it)
in a Kubernetes ``Status`` body. ``deploy``, ``verify`` (text and ``-o json``),
``watch`` (with ``--timeline``) and ``load`` run against it through a kubeconfig with a
bearer token. A second server, HTTPS on loopback with a self-signed certificate, plays
DigitalOcean's API the same way for ``cluster status``, ``create``, ``kubeconfig`` and
``delete``, through pydo's real pipeline. After each command: neither the secrets nor
any 8-character piece of them is on stdout, stderr, in a log record or in any file
the command wrote.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import logging
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuscale.cli import cluster_cmd
from gpuscale.cli.main import main

pytestmark = pytest.mark.integration

KUBE_TOKEN = "kube-echo-token-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
DO_TOKEN = "dop_v1_" + "5e1f" * 16
SETTER_TOKEN = "setter-echo-token-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
SECRETS = (KUBE_TOKEN, DO_TOKEN, SETTER_TOKEN)
REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "examples" / "tutorial-fixed"


@dataclass
class Echo:
    """Answers every request with ``statuses[n % len]`` and the Authorization header."""

    statuses: list[int] = field(default_factory=lambda: [401, 403, 500])
    kind: str = "kube"
    seen: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        scheme = "https" if self.kind == "do" else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_address[1]}"

    def body(self, code: int, auth: str) -> bytes:
        token = auth.partition(" ")[2]
        echoed = f"request had Authorization: {auth}; token {token}; piece {token[4:30]}"
        if self.kind == "do":
            return json.dumps({"id": "unauthorized", "message": echoed}).encode()
        if code == 500:
            return f"proxy error: {echoed}".encode()
        doc = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": echoed,
            "reason": {401: "Unauthorized", 403: "Forbidden"}.get(code, "InternalError"),
            "code": code,
        }
        return json.dumps(doc).encode()


def _start(echo: Echo, context: ssl.SSLContext | None = None) -> Echo:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            auth = self.headers.get("Authorization", "")
            echo.seen.append(auth)
            code = echo.statuses[(len(echo.seen) - 1) % len(echo.statuses)]
            body = echo.body(code, auth)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Echo-Authorization", auth)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def do_PATCH(self) -> None:
            self._answer()

        def do_PUT(self) -> None:
            self._answer()

        def do_DELETE(self) -> None:
            self._answer()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    echo.server = server
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return echo


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (cryptography comes with pydo's azure-identity)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def kube_echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Echo]:
    echo = _start(Echo())
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: echo, cluster: {{server: '{echo.url}'}}}}]\n"
        f"users: [{{name: echo, user: {{token: {KUBE_TOKEN}}}}}]\n"
        "contexts: [{name: echo, context: {cluster: echo, user: echo, namespace: gpu-demo}}]\n"
        "current-context: echo\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    monkeypatch.setenv("GPUSCALE_SETTER_TOKEN", SETTER_TOKEN)
    monkeypatch.setenv("DIGITALOCEAN_ACCESS_TOKEN", DO_TOKEN)
    yield echo
    assert echo.server is not None
    echo.server.shutdown()
    echo.server.server_close()


def _assert_clean(out: str, err: str, caplog: pytest.LogCaptureFixture, files: list[Path]) -> None:
    seen = out + "\n" + err + "\n" + caplog.text
    for record in caplog.records:
        seen += record.getMessage()
    for path in files:
        for found in path.rglob("*") if path.is_dir() else [path]:
            if found.is_file() and found.name not in ("kubeconfig", "cert.pem", "key.pem"):
                seen += found.read_text(encoding="utf-8", errors="replace")
    for secret in SECRETS:
        for start in range(len(secret) - 7):
            piece = secret[start : start + 8]
            assert piece not in seen, f"{piece!r} of a secret leaked:\n{seen[:3000]}"


@pytest.mark.parametrize(
    "argv",
    [
        ["deploy", str(MANIFESTS)],
        ["deploy", str(MANIFESTS), "-o", "json"],
        ["verify", str(MANIFESTS)],
        ["verify", str(MANIFESTS), "-o", "json"],
        ["watch", "--once"],
        ["load", "--value", "160"],
        ["load", "--value", "160", "-o", "json"],
    ],
    ids=lambda argv: " ".join(a for a in argv if not a.startswith("/")),
)
@pytest.mark.parametrize("status", [401, 403, 500])
def test_live_commands_mask_echoed_credentials(
    kube_echo: Echo,
    argv: list[str],
    status: int,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    kube_echo.statuses = [status]
    timeline = tmp_path / "out" / "timeline.jsonl"
    timeline.parent.mkdir()
    extra = ["--timeline", str(timeline)] if argv[0] == "watch" else []
    code = main([*argv, *extra])
    captured = capsys.readouterr()
    assert kube_echo.seen, "the command never reached the server"
    assert f"Bearer {KUBE_TOKEN}" in kube_echo.seen, "the server saw the real token"
    assert code != 0
    assert captured.err.strip() or captured.out.strip()
    _assert_clean(captured.out, captured.err, caplog, [tmp_path / "out"])


@pytest.fixture
def do_echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Echo]:
    from azure.core.pipeline.transport import RequestsTransport

    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    echo = _start(Echo(kind="do"), context)
    monkeypatch.setattr(
        cluster_cmd,
        "runtime",
        cluster_cmd.CloudRuntime(
            transport=RequestsTransport(connection_verify=str(cert)),
            environ={"DIGITALOCEAN_ACCESS_TOKEN": DO_TOKEN},
            home=tmp_path / "home",
            endpoint=echo.url,
            sleep=lambda _s: None,
            poll_interval=0.0,
        ),
    )
    yield echo
    assert echo.server is not None
    echo.server.shutdown()
    echo.server.server_close()


PROFILE = """\
cluster: {provider: doks, name: echo, region: atl1, version: latest}
node_pools:
  - {name: general, size: s-4vcpu-8gb, count: 1}
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["cluster", "status"],
        ["cluster", "status", "-o", "json"],
        ["cluster", "create"],
        ["cluster", "kubeconfig", "--merge"],
        ["cluster", "delete", "--yes"],
    ],
    ids=" ".join,
)
@pytest.mark.parametrize("status", [401, 403, 500])
def test_cluster_commands_mask_echoed_tokens(
    do_echo: Echo,
    argv: list[str],
    status: int,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    do_echo.statuses = [status]
    profile = tmp_path / "out" / "gpuscale.yaml"
    profile.parent.mkdir()
    profile.write_text(PROFILE, encoding="utf-8")
    code = main([*argv, "--profile", str(profile)])
    captured = capsys.readouterr()
    assert f"Bearer {DO_TOKEN}" in do_echo.seen, captured.err
    assert code != 0
    assert "gpuscale: error: " in captured.err
    _assert_clean(captured.out, captured.err, caplog, [tmp_path / "out", tmp_path / "home"])
