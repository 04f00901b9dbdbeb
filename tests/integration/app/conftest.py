"""Run ``gpuscale app`` as a real process on loopback and talk HTTP to it.

Every server listens on ``127.0.0.1`` port 0 and the test reads the port from the
server's own "listening on" log line, so tests never race for a port or touch 8080.
Waits are for real events (a log line, a closed socket, a process exit) with a bound.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import pytest

REPO = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"listening on http://(\S+?):(\d+):")
WAIT = 15.0


def gpuscale_command() -> list[str]:
    """The installed ``gpuscale`` console script (what the Dockerfile runs)."""
    script = Path(sys.executable).parent / "gpuscale"
    if script.exists():
        return [str(script)]
    found = shutil.which("gpuscale")
    return [found] if found else [sys.executable, "-m", "gpuscale"]


class AppProcess:
    """One ``gpuscale app`` (or any command that logs "listening on") under test."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.host = ""
        self.port = 0

    def _read(self) -> None:
        assert self.proc.stderr is not None
        with self.proc.stderr:
            for line in self.proc.stderr:
                with self._changed:
                    self.lines.append(line.rstrip("\n"))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def log(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for_line(self, pattern: str | re.Pattern[str], timeout: float = WAIT) -> re.Match[str]:
        """The first log line matching ``pattern``; fails if the process ends or time runs out."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    match = regex.search(line)
                    if match:
                        return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no log line matches {regex.pattern!r}; log:\n{self.log}")
                self._changed.wait(min(remaining, 0.5))

    def count_lines(self, pattern: str) -> int:
        regex = re.compile(pattern)
        with self._changed:
            return sum(1 for line in self.lines if regex.search(line))

    def wait_listening(self) -> AppProcess:
        match = self.wait_for_line(LISTENING)
        self.host, self.port = match.group(1), int(match.group(2))
        return self

    def connection(self, timeout: float = WAIT) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(
        self,
        target: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One request on a fresh connection: status, headers, body."""
        conn = self.connection()
        try:
            conn.request(method, target, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def raw(self, timeout: float = WAIT) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=timeout)

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait_exit(self, timeout: float = WAIT) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=WAIT)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def split_responses(data: bytes) -> list[tuple[bytes, dict[str, str], bytes]]:
    """Cut a stream of HTTP/1.1 responses (with Content-Length) into (status, headers, body)."""
    responses = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status, *lines = head.split(b"\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", len(rest)))
        responses.append((status, headers, rest[:length]))
        data = rest[length:]
    return responses


def gauge_from_metrics(body: bytes, name: str = "my_custom_gauge") -> float:
    match = re.search(rb"^" + name.encode() + rb" (\S+)$", body, re.MULTILINE)
    assert match, body
    return float(match.group(1))


class StartApp(Protocol):
    def __call__(
        self, *args: str, env: dict[str, str] | None = None, wait: bool = True
    ) -> AppProcess: ...


@pytest.fixture
def start_app() -> Iterator[StartApp]:
    """Start ``gpuscale app ARGS`` on 127.0.0.1, a free port; stopped at teardown.

    The environment is the test's minus ``GPUSCALE_SETTER_TOKEN``, plus ``env``.
    """
    started: list[AppProcess] = []

    def start(*args: str, env: dict[str, str] | None = None, wait: bool = True) -> AppProcess:
        full_env = dict(os.environ)
        full_env.pop("GPUSCALE_SETTER_TOKEN", None)
        full_env.update(env or {})
        argv = [*gpuscale_command(), "app", "--host", "127.0.0.1", "--port", "0", *args]
        app = AppProcess(argv, env=full_env)
        started.append(app)
        return app.wait_listening() if wait else app

    yield start
    for app in started:
        app.stop()
