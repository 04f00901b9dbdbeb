"""The HTTP/1.1 server under ``gpuscale app``: asyncio's event loop, ``httptools`` parsing.

Why this stack: the benchmark (``benchmarks/app_vs_go``, results in
``docs/benchmarks/app_vs_go.md``) tried stdlib ``http.server``, uvicorn with a bare
ASGI app, granian, and an asyncio ``Protocol`` fed by ``httptools`` (the llhttp parser
Node.js uses), with and without uvloop. The plain asyncio ``Protocol`` met every target
with the fewest moving parts: one process, one thread, no framework, one small compiled
dependency for the parsing that must not be hand-written.

Each connection is a :class:`_Connection`; every complete request is answered at once
(the :class:`~gpuscale.app._handler.Responder` decides, nothing awaits), so responses
leave in request order even when a client pipelines. What the server adds around a
reply, as Go's ``net/http`` does: ``Date``, ``Content-Length``, ``Connection: close``
when the connection ends (and ``keep-alive`` for HTTP/1.0 clients that ask), no body
for ``HEAD``, ``400 Bad Request`` for bytes that are not HTTP, ``431`` past
``max_header_bytes`` of request line and headers (default 1 MiB, Go's
``DefaultMaxHeaderBytes``), and ``400`` for an HTTP/1.1 request without ``Host``.

Hostile or broken clients cannot hold a connection, whatever the handler behind:

- a request line without a version (HTTP/0.9's ``GET /metrics``), which llhttp would
  wait on for headers, gets ``400`` and the connection closes, as Go answers it; an
  ``HTTP/2.0`` request line gets ``505``;
- a request whose line, headers and body have not all arrived ``header_timeout``
  after it started (after the connection opened, for the first one) gets ``408`` and
  the connection closes: slow-header clients (slowloris) are cut;
- a kept-alive connection that sends nothing for ``idle_timeout`` after its last reply
  is closed, and so is one that does not read its replies for that long.

The timers cost no system call per request: one sweep every fraction of the shortest
timeout reads the loop's clock once and closes every connection past its deadline;
the connections compare against that clock (:attr:`AppServer.now`). The sweep and what
an expired connection gets are :mod:`._sweep`'s, shared with the LLM emulator.

Shutdown (:meth:`AppServer.drain`) follows Kubernetes' order: ``/readyz`` turns 503 and
replies carry ``Connection: close``; after ``shutdown_delay`` the listener closes; idle
connections close at once and busy ones after their reply; whatever is still open at
the end of ``grace_period`` (counted from the signal) is cut. The loop's own clock
times it all.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import time
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import cast

import httptools

from gpuscale._redact import redact
from gpuscale.app._config import DEFAULT_MAX_HEADER_BYTES, AppConfig
from gpuscale.app._handler import Reply, Responder
from gpuscale.app._sweep import Sweeper, expire
from gpuscale.errors import InputError, UnavailableError

__all__ = ["MAX_HEADER_BYTES", "AppServer", "listen"]

MAX_HEADER_BYTES = DEFAULT_MAX_HEADER_BYTES
_VERSIONS = frozenset(("1.0", "1.1"))
_LOGGED_TARGET = 200
"""Characters of a request target a debug line shows; the rest is counted, not logged."""
_BAD_HTTP = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n400 Bad Request"
)
_NO_HOST = (
    b"HTTP/1.1 400 Bad Request: missing required Host header\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"400 Bad Request: missing required Host header"
)
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)
_BAD_VERSION = (
    b"HTTP/1.1 505 HTTP Version Not Supported\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"505 HTTP Version Not Supported"
)
_STATUS_LINES = {
    status.value: f"HTTP/1.1 {status.value} {status.phrase}\r\n".encode("ascii")
    for status in HTTPStatus
}

_log = logging.getLogger("gpuscale.app")


class _Clock:
    """``Date`` header text, formatted once per second."""

    __slots__ = ("_line", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._line = b""

    def date_line(self) -> bytes:
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._line = f"Date: {formatdate(second, usegmt=True)}\r\n".encode("ascii")
        return self._line


class _Connection(asyncio.Protocol):
    """One client connection: parse requests, answer each as soon as it is complete."""

    def __init__(self, server: AppServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpRequestParser(self)
        self._url = b""
        self._authorization: bytes | None = None
        self._accept: bytes | None = None
        self._accept_encoding: bytes | None = None
        self._has_host = False
        self._header_bytes = 0
        self._header_sum = 0
        self._too_large = False
        self._in_headers = False
        self._url_piece: bytes | None = None
        self._started = 0.0
        self.busy = False
        self.reading = False
        """A request has started and is not complete yet (408 when its time runs out)."""
        self.deadline = server.now + server.config.header_timeout
        """When the sweep closes this connection, on the loop's clock."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._server.forget(self)

    def pause_writing(self) -> None:
        if self._transport is not None:
            self._transport.pause_reading()
        self.deadline = self._server.now + self._server.config.idle_timeout

    def resume_writing(self) -> None:
        if self._transport is not None:
            self._transport.resume_reading()
        self.deadline = self._server.now + self._server.config.idle_timeout

    def data_received(self, data: bytes) -> None:
        self._url_piece = None
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.close()
            return
        except httptools.HttpParserError:
            self._abandon(_BAD_HTTP)
            return
        if self._in_headers:
            self._header_bytes += len(data)
            if self._header_bytes > self._server.config.max_header_bytes:
                self._abandon(_TOO_LARGE)
            elif self._url and self._line_ended_without_version(data):
                self._abandon(_BAD_HTTP)

    def _line_ended_without_version(self, data: bytes) -> bool:
        """Whether the request line has ended with no ``HTTP/x.y`` (HTTP/0.9's form).

        llhttp reads ``GET /metrics`` + newline as HTTP/0.9 and waits for a blank line;
        Go answers 400 at once. The version stays 0.0 until llhttp has read one, so a
        newline after the target (in this chunk, after its last piece) means there was
        none. Only a request split inside its first line gets here."""
        if self._parser.get_http_version() != "0.0":
            return False
        piece = self._url_piece
        if piece is None:  # the target ended in an earlier chunk
            return b"\n" in data
        at = data.rfind(piece)
        return at >= 0 and b"\n" in data[at + len(piece) :]

    def on_message_begin(self) -> None:
        self.busy = True
        self.reading = True
        self._in_headers = True
        self._header_bytes = self._header_sum = 0
        self._too_large = False
        self._url = b""
        self._authorization = self._accept = self._accept_encoding = None
        self._has_host = False
        server = self._server
        self.deadline = server.now + server.config.header_timeout
        if server.debug:
            self._started = time.perf_counter()

    def on_url(self, url: bytes) -> None:
        if url:
            self._url += url
            self._url_piece = url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_sum += len(name) + len(value) + 4
        lowered = name.lower()
        if lowered == b"host":
            self._has_host = True
        elif lowered == b"authorization":
            self._authorization = value
        elif lowered == b"accept":
            self._accept = value
        elif lowered == b"accept-encoding":
            self._accept_encoding = value

    def on_headers_complete(self) -> None:
        """Headers that arrived whole in one chunk are measured here (by their parts);
        :meth:`data_received` measures those still arriving."""
        self._in_headers = False
        if self._header_sum + len(self._url) > self._server.config.max_header_bytes:
            self._too_large = True

    def on_message_complete(self) -> None:
        self.reading = False
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        if self._too_large:
            self._abandon(_TOO_LARGE)
            return
        parser = self._parser
        version = parser.get_http_version()
        if version not in _VERSIONS:
            self._abandon(_BAD_HTTP if version == "0.9" else _BAD_VERSION)
            return
        if version == "1.1" and not self._has_host:
            self._abandon(_NO_HOST)
            return
        server = self._server
        reply = server.responder.respond(
            self._url,
            authorization=self._authorization,
            accept=self._accept,
            accept_encoding=self._accept_encoding,
        )
        keep_alive = parser.should_keep_alive() and server.responder.ready
        method = parser.get_method()
        transport.write(self._encode(reply, version, keep_alive, head_only=method == b"HEAD"))
        self.busy = False
        self.deadline = server.now + server.config.idle_timeout
        if server.debug:
            server.log_request(self, method, self._url, version, reply)
        if not keep_alive or server.draining:
            transport.close()

    def _encode(self, reply: Reply, version: str, keep_alive: bool, *, head_only: bool) -> bytes:
        if not keep_alive:
            connection = b"Connection: close\r\n"
        elif version == "1.0":
            connection = b"Connection: keep-alive\r\n"
        else:
            connection = b""
        body = reply.body
        return b"".join(
            (
                _STATUS_LINES[reply.status],
                reply.head,
                self._server.clock.date_line(),
                b"Content-Length: %d\r\n" % len(body),
                connection,
                b"\r\n",
                b"" if head_only else body,
            )
        )

    def _abandon(self, response: bytes) -> None:
        """Send a last error response and close, as Go does for malformed requests."""
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(response)
            self._transport.close()
        self.busy = False

    def peer(self) -> str:
        """``host:port`` of the client, for log lines."""
        name = None if self._transport is None else self._transport.get_extra_info("peername")
        if isinstance(name, tuple) and len(name) >= 2:
            return f"{name[0]}:{name[1]}"
        return "-"

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000.0

    def close_if_idle(self) -> None:
        if not self.busy:
            self.close()

    def expire(self) -> None:
        """The deadline has passed: 408 for a request that did not arrive in time,
        a plain close for an idle connection or one that does not read its replies."""
        expire(self._transport, reading=self.reading)
        self.busy = False

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()


class AppServer:
    """Listens, tracks connections, and shuts down in Kubernetes' order.

    ``responder`` decides every answer; ``ready`` on it is cleared when draining starts.
    """

    def __init__(self, config: AppConfig, responder: Responder) -> None:
        self.config = config
        self.responder = responder
        self.connections: set[_Connection] = set()
        self.draining = False
        self.debug = _log.isEnabledFor(logging.DEBUG)
        self.clock = _Clock()
        self._sweeper = Sweeper(
            self.connections,
            header_timeout=config.header_timeout,
            idle_timeout=config.idle_timeout,
        )
        self._server: asyncio.Server | None = None
        self._all_closed: asyncio.Event | None = None

    @property
    def now(self) -> float:
        """The loop's clock at the last sweep (see the module docstring)."""
        return self._sweeper.now

    async def start(self) -> list[tuple[str, int]]:
        """Listen on the configured address; return the (host, port) pairs bound.

        Bad addresses raise ``InputError``; a busy or forbidden port ``UnavailableError``.
        """
        self._sweeper.start()
        host, port = self.config.host, self.config.port
        try:
            self._server = await listen(host, port, lambda: _Connection(self))
        except BaseException:
            self._sweeper.stop()
            raise
        bound = []
        for sock in self._server.sockets:
            address = sock.getsockname()
            bound.append((str(address[0]), int(address[1])))
        return bound

    def stop_sweeping(self) -> None:
        self._sweeper.stop()

    def forget(self, connection: _Connection) -> None:
        self.connections.discard(connection)
        if self.draining and not self.connections and self._all_closed is not None:
            self._all_closed.set()

    def log_request(
        self, connection: _Connection, method: bytes, url: bytes, version: str, reply: Reply
    ) -> None:
        """The debug line for one request; never includes headers (the token lives there).

        The target is shown with secrets masked (``?token=...``, any query value named
        like a secret, a registered token; :func:`gpuscale._redact.redact`) and cut to
        200 characters, the rest counted: a client cannot fill the log."""
        target = url.decode("ascii", "backslashreplace")
        if len(target) > _LOGGED_TARGET:
            target = f"{target[:_LOGGED_TARGET]}...(+{len(target) - _LOGGED_TARGET} chars)"
        _log.debug(
            '%s "%s %s HTTP/%s" %d %d %.3fms',
            connection.peer(),
            method.decode("ascii", "backslashreplace")[:20],
            redact(target),
            version,
            reply.status,
            len(reply.body),
            connection.elapsed_ms(),
        )

    async def drain(self, *, force: asyncio.Event) -> int:
        """Shut down after a signal; return how many connections had to be cut.

        Timing starts now (the signal): requests are served for ``shutdown_delay`` with
        ``/readyz`` at 503, then the listener closes and open connections get until
        ``grace_period`` to finish. Setting ``force`` (a second signal) skips the waits.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.grace_period
        self.responder.ready = False
        delay = self.config.shutdown_delay
        _log.info(
            "shutting down: /readyz answers 503; closing the listener in %gs, "
            "then waiting up to %gs for open requests",
            delay,
            self.config.grace_period,
        )
        if delay > 0:
            await _wait(force, delay)
        self.draining = True
        self._all_closed = asyncio.Event()
        if self._server is not None:
            self._server.close()
        for connection in list(self.connections):
            connection.close_if_idle()
        if self.connections:
            await _wait(self._all_closed, max(0.0, deadline - loop.time()), force)
        cut = len(self.connections)
        self.stop_sweeping()
        for connection in list(self.connections):
            connection.abort()
        if cut:
            _log.warning("grace period over: cut %d connection(s) with requests in flight", cut)
        await asyncio.sleep(0)
        return cut


async def _wait(event: asyncio.Event, timeout: float, also: asyncio.Event | None = None) -> None:
    """Wait until ``event`` (or ``also``) is set, or ``timeout`` seconds pass."""
    waiters = [asyncio.ensure_future(event.wait())]
    if also is not None:
        waiters.append(asyncio.ensure_future(also.wait()))
    _, pending = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for waiter in pending:
        waiter.cancel()


async def listen(host: str, port: int, protocol: Callable[[], asyncio.Protocol]) -> asyncio.Server:
    """Listen on ``host:port`` (``::``: IPv6 and IPv4 at once) with ``protocol`` per
    connection; the one place both servers (the gauge app and the LLM emulator) bind.

    An unresolvable host raises ``InputError`` naming ``--host``; a busy or forbidden
    port ``UnavailableError`` (:func:`_listen_error`).
    """
    loop = asyncio.get_running_loop()
    try:
        if host == "::":
            return await loop.create_server(protocol, sock=_dual_stack_socket(port))
        return await loop.create_server(
            protocol, host=host, port=port, reuse_address=True, backlog=socket.SOMAXCONN
        )
    except socket.gaierror as error:
        raise InputError(
            f"cannot resolve {host!r}: {error.strerror}",
            where="--host",
            fix="pass an IP address of this machine such as 0.0.0.0 or 127.0.0.1",
        ) from None
    except OSError as error:
        raise _listen_error(host, port, error) from None


def _dual_stack_socket(port: int) -> socket.socket:
    """A listening ``[::]:port`` socket that also takes IPv4, as Go's ``:8080`` does.

    asyncio's ``create_server`` sets ``IPV6_V6ONLY`` on IPv6 sockets; this one clears it.
    """
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", port))
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _listen_error(host: str, port: int, error: OSError) -> InputError | UnavailableError:
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return UnavailableError(
            "the address is already in use",
            where=where,
            fix="stop the program listening there, or pass another --port",
        )
    if error.errno == errno.EACCES:
        return UnavailableError(
            "permission denied",
            where=where,
            fix="use a port above 1023, or grant CAP_NET_BIND_SERVICE",
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return InputError(
            "this machine has no such address",
            where="--host",
            fix="pass an address of this machine such as 0.0.0.0 or 127.0.0.1",
        )
    return UnavailableError(
        f"cannot listen: {error.strerror or error}", where=where, fix="check --host and --port"
    )
