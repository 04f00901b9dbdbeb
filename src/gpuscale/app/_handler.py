"""What ``gpuscale app`` answers to a request, decided without touching a socket.

The HTTP server (``_server``) parses bytes off the wire and hands :meth:`Responder.respond`
the method, the request target and the three headers that matter; it gets back a
:class:`Reply` (status, headers, body) and adds the connection-level headers
(``Date``, ``Content-Length``, ``Connection``). Keeping the decision here makes the
tutorial's contract testable line by line without a server.

The contract follows the tutorial's Go program (``anchors/go-app/main.go`` with Go 1.19
``net/http`` and client_golang 1.14's ``promhttp``):

- ``/metrics`` (exact path, any method): the registry in the text exposition format,
  ``Content-Type: text/plain; version=0.0.4; charset=utf-8``. Unlike ``promhttp``'s
  default, OpenMetrics is served when ``Accept`` asks for it; gzip when
  ``Accept-Encoding`` allows it, as ``promhttp`` does.
- every other path (Go's ``/`` pattern catches them all): ``value`` from the query,
  parsed as ``strconv.ParseFloat`` would, sets the gauge and answers 200
  ``Hello, from the handler!`` (``text/plain; charset=utf-8``, what Go sniffs); anything
  else answers what ``http.Error`` writes: 400, ``Bad Request: invalid input`` plus a
  newline, ``text/plain; charset=utf-8`` and ``X-Content-Type-Options: nosniff``.

Beyond the tutorial: ``/healthz`` and ``/readyz`` (which turns 503 once shutdown
starts), non-finite values refused with 400 unless allowed, and an optional Bearer token
for setting the gauge (401 with ``WWW-Authenticate: Bearer``, compared in constant time).
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import math
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from prometheus_client import (
    CollectorRegistry,
    Gauge,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.exposition import choose_encoder, gzip_accepted

from gpuscale.app._config import AppConfig
from gpuscale.app._gocompat import go_query_value, parse_go_float
from gpuscale.errors import InputError

__all__ = [
    "BAD_REQUEST_BODY",
    "HELLO_BODY",
    "Reply",
    "Responder",
    "new_registry",
]

HELLO_BODY = b"Hello, from the handler!"
BAD_REQUEST_BODY = b"Bad Request: invalid input\n"
_TEXT = "text/plain; charset=utf-8"
_NOSNIFF = ("X-Content-Type-Options", "nosniff")


@dataclass(frozen=True, slots=True)
class Reply:
    """One HTTP answer minus the connection-level headers the server adds."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    head: bytes = field(init=False, repr=False, compare=False)
    """``headers`` encoded once as ``Name: value\\r\\n`` lines (fixed replies are reused)."""

    def __post_init__(self) -> None:
        encoded = b"".join(f"{name}: {value}\r\n".encode("latin-1") for name, value in self.headers)
        object.__setattr__(self, "head", encoded)


def _error(status: int, body: bytes, *extra: tuple[str, str]) -> Reply:
    """What Go's ``http.Error`` writes: plain text, ``nosniff``, the message and a newline."""
    return Reply(status, (("Content-Type", _TEXT), _NOSNIFF, *extra), body)


_HELLO = Reply(200, (("Content-Type", _TEXT),), HELLO_BODY)
_BAD_REQUEST = _error(400, BAD_REQUEST_BODY)
_NON_FINITE = _error(
    400,
    b"Bad Request: invalid input: NaN and Inf are refused because KEDA reads them as 0 "
    b"and scales down (start gpuscale app with --allow-non-finite to accept them)\n",
)
_NO_TOKEN = _error(401, b"Unauthorized\n", ("WWW-Authenticate", 'Bearer realm="gpuscale"'))
_WRONG_TOKEN = _error(
    401,
    b"Unauthorized\n",
    ("WWW-Authenticate", 'Bearer realm="gpuscale", error="invalid_token"'),
)
_HEALTHY = Reply(200, (("Content-Type", _TEXT),), b"ok\n")
_NOT_READY = _error(503, b"shutting down\n")


def new_registry(config: AppConfig) -> tuple[CollectorRegistry, Gauge]:
    """A fresh registry holding the gauge (and, if asked, the runtime collectors).

    By default only the gauge is exported: the Go program also exports ``go_*`` and
    ``process_*``, but reading ``/proc`` on every scrape costs more than the rest of a
    scrape together, and in Kubernetes the kubelet already reports each container's
    CPU and memory. ``runtime_metrics`` adds ``process_*``, ``python_info`` and
    ``python_gc_*``.
    """
    registry = CollectorRegistry(auto_describe=True)
    try:
        gauge = Gauge(config.metric_name, config.metric_help, registry=registry)
        if config.runtime_metrics:
            ProcessCollector(registry=registry)
            PlatformCollector(registry=registry)
            GCCollector(registry=registry)
    except ValueError as error:
        raise InputError(
            f"cannot export {config.metric_name!r}: {error}",
            where="--metric-name",
            fix="pick a name that no runtime metric uses (process_*, python_*)",
        ) from None
    return registry, gauge


class Responder:
    """Routes a request to the tutorial's handlers and the production extensions.

    ``ready`` is what ``/readyz`` reports; the server clears it when shutdown begins.
    """

    def __init__(self, config: AppConfig, registry: CollectorRegistry, gauge: Gauge) -> None:
        self.ready = True
        self._registry = registry
        self._gauge = gauge
        self._allow_non_finite = config.allow_non_finite
        self._token_digest = (
            None
            if config.setter_token is None
            else hashlib.sha256(config.setter_token.encode("ascii")).digest()
        )

    def respond(
        self,
        target: bytes,
        *,
        authorization: bytes | None = None,
        accept: bytes | None = None,
        accept_encoding: bytes | None = None,
    ) -> Reply:
        """The reply to a request for ``target`` (the request line's path and query)."""
        if not target.startswith(b"/"):
            target = _origin_form(target)
        path, _, query = target.partition(b"?")
        if path == b"/metrics":
            return self._metrics(accept, accept_encoding)
        if path == b"/healthz":
            return _HEALTHY
        if path == b"/readyz":
            return _HEALTHY if self.ready else _NOT_READY
        return self._set_gauge(query, authorization)

    def _set_gauge(self, query: bytes, authorization: bytes | None) -> Reply:
        if self._token_digest is not None:
            refusal = _check_token(self._token_digest, authorization)
            if refusal is not None:
                return refusal
        raw = go_query_value(query, b"value")
        if raw is None:
            return _BAD_REQUEST
        try:
            value = parse_go_float(raw.decode("latin-1"))
        except ValueError:
            return _BAD_REQUEST
        if not self._allow_non_finite and not math.isfinite(value):
            return _NON_FINITE
        self._gauge.set(value)
        return _HELLO

    def _metrics(self, accept: bytes | None, accept_encoding: bytes | None) -> Reply:
        encoder, content_type = choose_encoder(accept.decode("latin-1") if accept else "")
        body = encoder(self._registry)
        if accept_encoding and gzip_accepted(accept_encoding.decode("latin-1")):
            return Reply(
                200,
                (("Content-Type", content_type), ("Content-Encoding", "gzip")),
                gzip.compress(body),
            )
        return Reply(200, (("Content-Type", content_type),), body)


def _check_token(digest: bytes, authorization: bytes | None) -> Reply | None:
    """``None`` when ``authorization`` is ``Bearer <token>``, else the 401 to send.

    Both sides are hashed first so the constant-time comparison does not reveal the
    token's length either (``hmac.compare_digest`` returns early on a length mismatch).
    """
    if authorization is None:
        return _NO_TOKEN
    scheme, _, credentials = authorization.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return _NO_TOKEN
    offered = hashlib.sha256(credentials.strip()).digest()
    return None if hmac.compare_digest(offered, digest) else _WRONG_TOKEN


def _origin_form(target: bytes) -> bytes:
    """``/path?query`` of an absolute-form target (``http://host/path?query``), as Go reads it."""
    parts = urlsplit(target.decode("latin-1"))
    origin = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return origin.encode("latin-1")
