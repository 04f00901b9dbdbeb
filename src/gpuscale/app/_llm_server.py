"""The HTTP side of ``gpuscale app --serve llm``: asyncio + httptools, answers that wait.

The gauge server (:mod:`._server`) answers every request the moment it is parsed; an
LLM answer waits for the engine and may stream. So this connection keeps the gauge
server's parsing, error bytes (imported from :mod:`._server`) and connection limits
(``--header-timeout``, ``--idle-timeout``, ``--max-header-bytes``: the same flags,
checks and sweep, :mod:`._sweep`; a request being answered has no deadline, however
long it generates, unless its client stops reading) and adds:
request bodies (at most :data:`MAX_BODY_BYTES`, else 413), one request in flight per
connection (reading pauses until its answer is written, so pipelined requests are
answered in order), and responses written by a coroutine: whole JSON bodies with
``Content-Length``, or server-sent events with ``Transfer-Encoding: chunked``. A client
that disconnects mid-stream has its request aborted in the engine (blocks freed).

Routes, as vLLM's OpenAI server has them: ``POST /v1/completions``, ``POST
/v1/chat/completions``, ``GET /v1/models``, ``GET /version`` (the pinned vLLM version,
emulated), ``GET /health`` (200, empty body),
``GET /metrics`` (always the text format 0.0.4: prometheus_client's OpenMetrics encoder
escapes the colons of ``vllm:*`` names to underscores unless the scraper asks for UTF-8
names, and a query written for vLLM must find ``vllm:num_requests_waiting``); other
paths 404, other methods 405, both in the OpenAI error shape.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import cast

import httptools
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from gpuscale.app._llm import (
    VLLM_VERSION,
    EngineLoop,
    LlmConfig,
    LlmResponder,
    OpenAIError,
    _Parsed,
    _Stream,
    new_llm_registry,
)
from gpuscale.app._server import (
    _BAD_HTTP,
    _STATUS_LINES,
    _TOO_LARGE,
    _Clock,
    listen,
)
from gpuscale.app._sweep import Sweeper, expire
from gpuscale.serving import ServingMetrics

__all__ = ["MAX_BODY_BYTES", "LlmServer", "run_llm", "serve_llm"]

MAX_BODY_BYTES = 4 << 20
_TOO_BIG = (
    b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n413 Request Entity Too Large"
)
_JSON = b"Content-Type: application/json\r\n"
_log = logging.getLogger("gpuscale.app")


class _Connection(asyncio.Protocol):
    def __init__(self, server: LlmServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpRequestParser(self)
        self._url = b""
        self._body: list[bytes] = []
        self._body_bytes = 0
        self._accept: bytes | None = None
        self._header_bytes = 0
        self._header_sum = 0
        self._in_headers = False
        self._queue: list[tuple[bytes, bytes, bytes, bytes | None, bool]] = []
        self._task: asyncio.Task[None] | None = None
        self.closed = False
        self.reading = False
        """A request has started and is not complete yet (408 when its time runs out)."""
        self.deadline = server.sweeper.now + server.config.header_timeout
        """When the sweep closes this connection, on the loop's clock."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._server.connections.discard(self)
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def pause_writing(self) -> None:
        """The client does not read what is written: it has ``idle_timeout`` to resume."""
        if self._transport is not None:
            self._transport.pause_reading()
        self.deadline = self._server.sweeper.now + self._server.config.idle_timeout

    def resume_writing(self) -> None:
        if self._answering():
            self.deadline = float("inf")
            return
        self.deadline = self._server.sweeper.now + self._server.config.idle_timeout
        if self._transport is not None:
            self._transport.resume_reading()

    def _answering(self) -> bool:
        return self._task is not None and not self._task.done()

    def data_received(self, data: bytes) -> None:
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

    def expire(self) -> None:
        """The deadline has passed (see :mod:`._sweep`)."""
        expire(self._transport, reading=self.reading)

    def on_message_begin(self) -> None:
        self.reading = True
        self.deadline = self._server.sweeper.now + self._server.config.header_timeout
        self._header_sum = 0
        self._in_headers = True
        self._url = b""
        self._body = []
        self._body_bytes = 0
        self._accept = None

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_sum += len(name) + len(value) + 4
        if name.lower() == b"accept":
            self._accept = value

    def on_headers_complete(self) -> None:
        """Headers that arrived whole in one chunk are measured here (by their parts);
        :meth:`data_received` measures those still arriving."""
        self._in_headers = False
        self._header_bytes = 0
        if self._header_sum + len(self._url) > self._server.config.max_header_bytes:
            self._abandon(_TOO_LARGE)

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > MAX_BODY_BYTES:
            self._abandon(_TOO_BIG)
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.reading = False
        if self._transport is None or self._transport.is_closing():
            return
        self.deadline = float("inf")
        parser = self._parser
        self._queue.append(
            (
                parser.get_method(),
                self._url.partition(b"?")[0],
                b"".join(self._body),
                self._accept,
                parser.should_keep_alive(),
            )
        )
        if self._task is None or self._task.done():
            self._transport.pause_reading()
            self._task = asyncio.get_running_loop().create_task(self._drain_queue())

    async def _drain_queue(self) -> None:
        while self._queue and not self.closed:
            method, path, body, accept, keep_alive = self._queue.pop(0)
            keep_alive = keep_alive and not self._server.draining
            try:
                await self._handle(method, path, body, accept, keep_alive)
            except OpenAIError as error:
                self._write_whole(error.status, _JSON, error.body(), keep_alive)
            if not keep_alive:
                self.close()
                return
        self.deadline = self._server.sweeper.now + self._server.config.idle_timeout
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    async def _handle(
        self, method: bytes, path: bytes, body: bytes, accept: bytes | None, keep_alive: bool
    ) -> None:
        responder = self._server.responder
        if path in (b"/v1/completions", b"/v1/chat/completions"):
            if method != b"POST":
                raise OpenAIError(405, "Method Not Allowed", "MethodNotAllowed")
            parsed = responder.parse(body, chat=path == b"/v1/chat/completions")
            request_id, stream = responder.submit(parsed)
            try:
                if parsed.stream:
                    await self._stream(parsed, request_id, stream)
                    return
                while not stream.done:
                    stream.event.clear()
                    await stream.event.wait()
            finally:
                if not stream.done:
                    self._server.loop.cancel(request_id)
            answer = responder.whole(parsed, request_id, stream.tokens, stream.finish_reason)
            self._write_whole(200, _JSON, answer, keep_alive)
            return
        if method not in (b"GET", b"HEAD"):
            if path in (b"/health", b"/v1/models", b"/metrics", b"/version"):
                raise OpenAIError(405, "Method Not Allowed", "MethodNotAllowed")
            raise OpenAIError(404, "Not Found", "NotFoundError")
        if path == b"/health":
            self._write_whole(200 if responder.ready else 503, b"", b"", keep_alive)
        elif path == b"/v1/models":
            self._write_whole(200, _JSON, responder.models(), keep_alive)
        elif path == b"/version":
            self._write_whole(200, _JSON, b'{"version": "%s"}' % VLLM_VERSION.encode(), keep_alive)
        elif path == b"/metrics":
            body_out = generate_latest(self._server.registry)
            self._write_whole(
                200,
                f"Content-Type: {CONTENT_TYPE_LATEST}\r\n".encode("latin-1"),
                body_out,
                keep_alive,
            )
        else:
            raise OpenAIError(404, "Not Found", "NotFoundError")

    async def _stream(self, parsed: _Parsed, request_id: str, stream: _Stream) -> None:
        responder = self._server.responder
        transport = self._transport
        assert transport is not None
        transport.write(
            b"".join(
                (
                    _STATUS_LINES[200],
                    b"Content-Type: text/event-stream; charset=utf-8\r\n",
                    b"Cache-Control: no-cache\r\n",
                    self._server.clock.date_line(),
                    b"Transfer-Encoding: chunked\r\n\r\n",
                )
            )
        )
        sent = 0
        if parsed.chat:
            self._chunk(responder.chunk(parsed, request_id, 0, 0, None, first=True))
        while True:
            if stream.tokens == sent and not stream.done:
                stream.event.clear()
                await stream.event.wait()
            if self.closed:
                return
            upto = stream.tokens
            reason = stream.finish_reason if stream.done else None
            if upto > sent or reason is not None:
                self._chunk(responder.chunk(parsed, request_id, sent, upto, reason))
                sent = upto
            if stream.done:
                break
        if parsed.include_usage:
            self._chunk(responder.usage_chunk(parsed, request_id, sent))
        self._chunk(b"data: [DONE]\n\n")
        transport.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _write_whole(self, status: int, head: bytes, body: bytes, keep_alive: bool) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        transport.write(
            b"".join(
                (
                    _STATUS_LINES[status],
                    head,
                    self._server.clock.date_line(),
                    b"Content-Length: %d\r\n" % len(body),
                    b"" if keep_alive else b"Connection: close\r\n",
                    b"\r\n",
                    body,
                )
            )
        )

    def _abandon(self, response: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(response)
            self._transport.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def close_if_idle(self) -> None:
        """Close a keep-alive connection with no request in flight (shutdown)."""
        if (self._task is None or self._task.done()) and not self._queue:
            self.close()


class LlmServer:
    """Listens for the emulator; owns the engine loop and the registry."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self.metrics = ServingMetrics(config.name)
        self.loop = EngineLoop(config.engine(), self.metrics)
        self.registry: CollectorRegistry = new_llm_registry(self.loop, config.name)
        self.responder = LlmResponder(config, self.loop)
        self.connections: set[_Connection] = set()
        self.draining = False
        self.clock = _Clock()
        self.sweeper = Sweeper(
            self.connections,
            header_timeout=config.header_timeout,
            idle_timeout=config.idle_timeout,
        )
        self._server: asyncio.Server | None = None

    async def start(self) -> list[tuple[str, int]]:
        host, port = self.config.host, self.config.port
        self.sweeper.start()
        try:
            self._server = await listen(host, port, lambda: _Connection(self))
        except BaseException:
            self.sweeper.stop()
            raise
        self.loop.start()
        return [
            (str(sock.getsockname()[0]), int(sock.getsockname()[1]))
            for sock in self._server.sockets
        ]

    async def stop(self, grace: float) -> None:
        """Stop listening, give open requests ``grace`` seconds, then cut them."""
        self.draining = True
        self.responder.ready = False
        if self._server is not None:
            self._server.close()
        for connection in list(self.connections):
            connection.close_if_idle()
        deadline = asyncio.get_running_loop().time() + grace
        while self.connections and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        self.sweeper.stop()
        for connection in list(self.connections):
            connection.close()
        await self.loop.stop()


async def serve_llm(config: LlmConfig, stop: asyncio.Event | None = None) -> int:
    """Serve until ``stop`` is set (or SIGTERM/SIGINT when not given); returns 0."""
    server = LlmServer(config)
    bound = await server.start()
    loop = asyncio.get_running_loop()
    signals = stop is None
    stop = stop or asyncio.Event()
    if signals:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
    engine = server.loop.engine.config
    for host, port in bound:
        shown = f"[{host}]" if ":" in host else host
        _log.info(
            "listening on http://%s:%d: OpenAI API for %s (emulated %s on %s: %d KV blocks of "
            "%d tokens, max_num_seqs %d, max_num_batched_tokens %d), /metrics with vLLM's names",
            shown,
            port,
            config.name,
            config.model,
            config.gpu,
            engine.num_gpu_blocks,
            engine.block_size,
            engine.max_num_seqs,
            engine.max_num_batched_tokens,
        )
    try:
        await stop.wait()
        await server.stop(config.grace_period)
    finally:
        if signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
    _log.info("stopped")
    return 0


def run_llm(config: LlmConfig) -> int:
    """The blocking entry point ``gpuscale app --serve llm`` calls."""
    from gpuscale.app._main import _configure_logging  # noqa: PLC0415 - shared setup

    _configure_logging(config.log_level)
    return asyncio.run(serve_llm(config))
