"""``gpuscale app`` answers as the tutorial's Go program does, side by side.

Builds ``anchors/go-app/main.go`` with Debian's Go (``../shared/anchors/go-app/build.sh``
from the repository root, or ``$GPUSCALE_GO_APP_BUILD``), runs it on its fixed ``:8080``
and ``gpuscale app`` on a free port, sends both the same requests, and compares status,
body, the headers a client sees, and the gauge each then exports.

Skipped, with the reason, when the build script is missing, Debian's Go packages are not
installed (this test never installs anything; ``apt-get install golang-go
golang-github-prometheus-client-golang-dev``), or something else holds port 8080.
"""

from __future__ import annotations

import http.client
import math
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.app.conftest import REPO, AppProcess, StartApp, gauge_from_metrics

pytestmark = pytest.mark.integration

GO_PACKAGES = ("golang-go", "golang-github-prometheus-client-golang-dev")
GO_PORT = 8080

# Forms worth naming (README of docs/commands/app.md lists what they mean); the random
# corpus below adds the corners nobody thought of.
NAMED = [
    "160",
    "-1.5",
    ".5",
    "5.",
    "1e3",
    "1E+3",
    "1e",
    "1e400",
    "-1e400",
    "1e-400",
    "0x1p4",
    "0X1.8P1",
    "0x10",
    "0x",
    "1_000",
    "_1000",
    "1__0",
    "0x_1p4",
    "1e1_0",
    "inf",
    "-Inf",
    "%2BInfinity",
    "infinit",
    "NaN",
    "nan",
    "-nan",
    "%2Bnan",
    "",
    "abc",
    "12abc",
    "%31%36%30",
    "%zz",
    "%3",
    "1+",
    "%2B1",
    "0b101",
    "0o7",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "4.9e-324",
    "00012",
    "-0",
    "0x1.fffffffffffff8p1023",
]
QUERY_SHAPES = [
    "value={v}",
    "value={v}&value=2",
    "x=1&value={v}",
    "value={v};x=1",
    "value",
    "",
    "%76alue={v}",
    "value={v}&&",
    "value=%zz&value={v}",
]
ALPHABET = "0123456789._eEpPxX+-aAfFiInNtTyY%;&=b"


def corpus(seed: int = 2, size: int = 300) -> list[str]:
    rng = random.Random(seed)
    targets = [f"/?value={v}" for v in NAMED]
    targets += ["/?" + shape.format(v="7") for shape in QUERY_SHAPES]
    for _ in range(size):
        value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 7)))
        targets.append("/?" + rng.choice(QUERY_SHAPES).format(v=value))
    return targets


def _skip_reason() -> str | None:
    if not BUILD.exists():
        return f"the tutorial's Go build script is not at {BUILD}; set GPUSCALE_GO_APP_BUILD"
    missing = [
        package
        for package in GO_PACKAGES
        if "install ok installed"
        not in subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    ]
    if missing or shutil.which("go") is None:
        return f"Debian's Go is not installed: apt-get install {' '.join(GO_PACKAGES)}"
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", GO_PORT))
        except OSError:
            return f"port {GO_PORT} is busy; the tutorial's Go program can only bind :{GO_PORT}"
    return None


def _build_script() -> Path:
    """The Go build script: $GPUSCALE_GO_APP_BUILD, beside the repo, or /work/shared."""
    if "GPUSCALE_GO_APP_BUILD" in os.environ:
        return Path(os.environ["GPUSCALE_GO_APP_BUILD"])
    candidates = [REPO.parent / "shared", Path("/work/shared")]
    for shared in candidates:
        script = shared / "anchors/go-app/build.sh"
        if script.exists():
            return script
    return candidates[0] / "anchors/go-app/build.sh"


BUILD = _build_script()


@pytest.fixture(scope="module")
def go_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[http.client.HTTPConnection]:
    if shutil.which("dpkg-query") is None:
        pytest.skip("not a Debian system: the Go reference build uses Debian's packages")
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    binary = tmp_path_factory.mktemp("go") / "tutorial-go-app"
    subprocess.run(
        [str(BUILD)],
        env={**os.environ, "OUT": str(binary)},
        check=True,
        capture_output=True,
        timeout=300,
    )
    proc = subprocess.Popen(
        [str(binary)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            assert proc.poll() is None, f"the Go program exited: {proc.communicate()[1]}"
            try:
                socket.create_connection(("127.0.0.1", GO_PORT), timeout=1).close()
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the Go program did not start listening"
                time.sleep(0.05)
        conn = http.client.HTTPConnection("127.0.0.1", GO_PORT, timeout=15)
        yield conn
        conn.close()
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


Answer = tuple[int, bytes, str | None, str | None, str | None]


def ask(conn: http.client.HTTPConnection, target: str, method: str = "GET") -> Answer:
    conn.request(method, target)
    response = conn.getresponse()
    body = response.read()
    return (
        response.status,
        body,
        response.getheader("Content-Type"),
        response.getheader("X-Content-Type-Options"),
        response.getheader("Content-Length"),
    )


def gauge(conn: http.client.HTTPConnection) -> float:
    conn.request("GET", "/metrics")
    return gauge_from_metrics(conn.getresponse().read())


def same_float(a: float, b: float) -> bool:
    """Equal values; the sign of zero is not compared: client_golang's text format writes
    -0 as ``0`` (expfmt ``writeFloat``) while prometheus_client writes ``-0.0``."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b


@pytest.fixture
def ours(start_app: StartApp) -> tuple[AppProcess, AppProcess]:
    like_go = start_app("--allow-non-finite")
    default = start_app()
    return like_go, default


def test_same_answers_and_same_gauge_for_every_value(
    go_app: http.client.HTTPConnection, ours: tuple[AppProcess, AppProcess]
) -> None:
    like_go, default = ours
    like_go_conn, default_conn = like_go.connection(), default.connection()
    compared = accepted = refused_non_finite = 0
    try:
        for target in corpus():
            go = ask(go_app, target)
            mine = ask(like_go_conn, target)
            assert mine == go, f"{target}: Go {go}, gpuscale app --allow-non-finite {mine}"
            plain = ask(default_conn, target)
            if go[0] == 200:
                accepted += 1
                go_value = gauge(go_app)
                assert same_float(gauge(like_go_conn), go_value), target
                if math.isfinite(go_value):
                    assert plain == go, target
                    assert same_float(gauge(default_conn), go_value), target
                else:
                    assert plain[0] == 400, f"{target}: non-finite must be refused by default"
                    refused_non_finite += 1
            else:
                assert plain == go, target
            compared += 1
    finally:
        like_go_conn.close()
        default_conn.close()
    assert compared == len(corpus())
    assert accepted >= 30
    assert refused_non_finite >= 4


@pytest.mark.parametrize(("method", "target"), [("HEAD", "/?value=3"), ("POST", "/x?value=4")])
def test_other_methods_and_paths_match(
    go_app: http.client.HTTPConnection,
    ours: tuple[AppProcess, AppProcess],
    method: str,
    target: str,
) -> None:
    like_go, _ = ours
    conn = like_go.connection()
    try:
        assert ask(conn, target, method) == ask(go_app, target, method)
        assert gauge(conn) == gauge(go_app)
    finally:
        conn.close()


def test_metrics_content_type_matches(
    go_app: http.client.HTTPConnection, ours: tuple[AppProcess, AppProcess]
) -> None:
    like_go, _ = ours
    conn = like_go.connection()
    try:
        assert ask(conn, "/metrics")[2] == ask(go_app, "/metrics")[2]
    finally:
        conn.close()
