"""Candidate: an asyncio ``Protocol`` fed by httptools; ``uvloop`` as a second argument
swaps in uvloop's event loop. ``gpuscale app`` grew from this one."""

from __future__ import annotations

import asyncio
import sys
from typing import cast

import httptools
from benchmarks.app_vs_go.candidates.common import BAD, CONTENT_TYPE, HELLO, metrics, set_value


class Connection(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_message_complete(self) -> None:
        path, _, query = self.url.partition(b"?")
        self.url = b""
        if path == b"/metrics":
            status, content_type, body = b"200 OK", CONTENT_TYPE.encode(), metrics()
        elif set_value(query):
            status, content_type, body = b"200 OK", b"text/plain; charset=utf-8", HELLO
        else:
            status, content_type, body = b"400 Bad Request", b"text/plain; charset=utf-8", BAD
        self.transport.write(
            b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
            % (status, content_type, len(body), body)
        )
        if not self.parser.should_keep_alive():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.close()


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Connection, "127.0.0.1", port)
    await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[2:] == ["uvloop"]:
        import uvloop

        uvloop.run(serve(int(sys.argv[1])))
    else:
        asyncio.run(serve(int(sys.argv[1])))
