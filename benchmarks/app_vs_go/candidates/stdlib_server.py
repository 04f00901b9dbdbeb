"""Candidate: the standard library's ``ThreadingHTTPServer`` (HTTP/1.1 keep-alive)."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from benchmarks.app_vs_go.candidates.common import BAD, CONTENT_TYPE, HELLO, metrics, set_value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/metrics":
            status, content_type, body = 200, CONTENT_TYPE, metrics()
        elif set_value(query.encode("latin-1")):
            status, content_type, body = 200, "text/plain; charset=utf-8", HELLO
        else:
            status, content_type, body = 400, "text/plain; charset=utf-8", BAD
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
