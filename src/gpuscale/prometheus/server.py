"""Running the real Prometheus: the Debian ``prometheus`` binary on loopback, and ``promtool``
backfills.

``PrometheusServer`` starts ``prometheus`` on ``127.0.0.1`` on a free port with a given
configuration (or a minimal one that scrapes nothing) over a given TSDB directory, waits
until ``/-/ready`` answers, and stops it with SIGTERM (then SIGKILL after a grace period).
The differential suite runs it over
blocks that ``create_blocks_from_openmetrics`` (``promtool tsdb create-blocks-from
openmetrics``) wrote. The clock used to wait for readiness is injectable.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

import httpx

from gpuscale._redact import child_environment
from gpuscale.errors import InputError, UnavailableError
from gpuscale.prometheus.client import PrometheusClient

__all__ = [
    "MINIMAL_CONFIG",
    "PrometheusServer",
    "create_blocks_from_openmetrics",
    "find_binary",
    "prometheus_version",
]

MINIMAL_CONFIG = """\
global:
  scrape_interval: 15s
  evaluation_interval: 1m
scrape_configs: []
"""
"""A configuration that scrapes nothing: the server only answers queries over its TSDB."""

_INSTALL_FIX = "install Debian's prometheus package (scripts/install-system-deps.sh)"


def find_binary(name: str) -> str:
    """The path of ``prometheus`` or ``promtool``; ``UnavailableError`` when not installed."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if path is None:
        raise UnavailableError(f"{name} is not installed", fix=_INSTALL_FIX)
    return path


def prometheus_version(binary: str | None = None) -> str:
    """The version ``prometheus --version`` reports, e.g. ``2.42.0+ds``."""
    out = subprocess.run(
        [binary or find_binary("prometheus"), "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
        env=child_environment(os.environ),
    )
    text = out.stdout + out.stderr
    for word in text.split():
        if word[:1].isdigit() and "." in word:
            return word
    raise UnavailableError(f"cannot read the version of prometheus from {text[:100]!r}")


def create_blocks_from_openmetrics(
    openmetrics: Path, data_dir: Path, *, promtool: str | None = None
) -> None:
    """Backfill TSDB blocks into ``data_dir`` from an OpenMetrics text file (with timestamps
    and ``# EOF``), as ``promtool tsdb create-blocks-from openmetrics`` does."""
    data_dir.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        [
            promtool or find_binary("promtool"),
            *("tsdb", "create-blocks-from", "openmetrics"),
            str(openmetrics),
            str(data_dir),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=child_environment(os.environ),
    )
    if out.returncode != 0:
        lines = [line for line in (out.stderr + out.stdout).splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {out.returncode}"
        raise InputError(
            f"promtool could not backfill it: {reason}",
            where=str(openmetrics),
            fix="write OpenMetrics text with a timestamp on every sample and a final '# EOF'",
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PrometheusServer:
    """The real Prometheus on loopback, as a context manager.

    ``data_dir`` is the TSDB directory (created if missing); ``config`` is the text of a
    prometheus.yml (``MINIMAL_CONFIG`` when None). ``lookback_delta`` and ``retention`` are
    passed as ``--query.lookback-delta`` and ``--storage.tsdb.retention.time`` when set.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        config: str | None = None,
        binary: str | None = None,
        lookback_delta: str | None = None,
        retention: str | None = None,
        extra_args: Sequence[str] = (),
        ready_timeout_s: float = 60.0,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.config = MINIMAL_CONFIG if config is None else config
        self.binary = binary
        self.lookback_delta = lookback_delta
        self.retention = retention
        self.extra_args = list(extra_args)
        self.ready_timeout_s = ready_timeout_s
        self._monotonic = monotonic
        self._sleep = sleep
        self._proc: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self._log = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        """The server's base URL (``http://127.0.0.1:<port>``)."""
        if self.port is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self.port}"

    def client(self, *, timeout_s: float = 30.0) -> PrometheusClient:
        """A client for this server."""
        return PrometheusClient(self.url, timeout_s=timeout_s)

    def command(self, port: int, config_path: Path) -> list[str]:
        """The command line that starts the server."""
        cmd = [
            self.binary or find_binary("prometheus"),
            f"--config.file={config_path}",
            f"--storage.tsdb.path={self.data_dir}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ]
        if self.lookback_delta is not None:
            cmd.append(f"--query.lookback-delta={self.lookback_delta}")
        if self.retention is not None:
            cmd.append(f"--storage.tsdb.retention.time={self.retention}")
        return cmd + self.extra_args

    def start(self) -> PrometheusServer:
        """Start the server and wait until it is ready; ``UnavailableError`` if it cannot."""
        if self._proc is not None:
            raise RuntimeError("the server is already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._workdir = Path(tempfile.mkdtemp(prefix="gpuscale-prometheus-"))
        config_path = self._workdir / "prometheus.yml"
        config_path.write_text(self.config)
        last_error = ""
        for _ in range(3):
            port = _free_port()
            log_path = self._workdir / f"prometheus-{port}.log"
            with log_path.open("wb") as log:
                proc = subprocess.Popen(
                    self.command(port, config_path),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self._workdir,
                    env=child_environment(os.environ),
                )
            self._proc = proc
            self.port = port
            if self._wait_ready(proc):
                return self
            self._terminate(proc)
            last_error = _last_line(log_path)
            self._proc = None
            self.port = None
            if "address already in use" not in last_error:
                break
        self._cleanup()
        raise UnavailableError(
            f"prometheus did not become ready: {last_error or 'no output'}",
            fix="check the configuration and that the data directory is writable",
        )

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> bool:
        deadline = self._monotonic() + self.ready_timeout_s
        with httpx.Client(timeout=2.0) as http:
            while self._monotonic() < deadline:
                if proc.poll() is not None:
                    return False
                try:
                    if http.get(f"{self.url}/-/ready").status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                self._sleep(0.05)
        return False

    def stop(self, *, grace_s: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``grace_s``) and remove temp files."""
        if self._proc is not None:
            self._terminate(self._proc, grace_s=grace_s)
            self._proc = None
        self.port = None
        self._cleanup()

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], *, grace_s: float = 10.0) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=grace_s)

    def _cleanup(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " ".join(lines[-1].split()) if lines else ""
