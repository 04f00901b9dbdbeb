"""The settings of ``gpuscale app``, checked once when they are made.

:class:`AppConfig` holds typed values; :func:`config_from_flags` turns the strings a
user typed (flags and the ``GPUSCALE_SETTER_TOKEN`` environment variable) into one, and
every mistake becomes an :class:`~gpuscale.errors.InputError` naming the flag or variable
and the fix, which the CLI prints as one line with exit code 2. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuscale.errors import InputError
from gpuscale.kube import parse_duration

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_METRIC_HELP",
    "DEFAULT_METRIC_NAME",
    "DEFAULT_PORT",
    "LOG_LEVELS",
    "TOKEN_ENV",
    "AppConfig",
    "check_connection_limits",
    "check_metric_name",
    "check_setter_token",
    "config_from_flags",
    "connection_limits_from_flags",
]

DEFAULT_PORT = 8080
DEFAULT_METRIC_NAME = "my_custom_gauge"
DEFAULT_METRIC_HELP = "This is a custom gauge metric"
TOKEN_ENV = "GPUSCALE_SETTER_TOKEN"
LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_IDLE_TIMEOUT = 60.0
DEFAULT_MAX_HEADER_BYTES = 1 << 20
_LONGEST_TIMEOUT = 86400.0
_HEADER_BYTES_RANGE = (1024, 64 << 20)

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_PORT_FIX = "pass a whole number from 0 to 65535 (0 picks a free port), e.g. --port 8080"


@dataclass(frozen=True, slots=True)
class AppConfig:
    """Everything ``gpuscale app`` needs to serve; invalid values raise ``InputError``."""

    host: str = "0.0.0.0"
    """Address to listen on; ``0.0.0.0`` is every IPv4 interface, ``::`` every IPv6 and
    IPv4 one (one dual-stack socket, like Go's ``:8080``)."""
    port: int = DEFAULT_PORT
    """TCP port to listen on; 0 lets the system pick a free one (the log line names it)."""
    metric_name: str = DEFAULT_METRIC_NAME
    """Name of the gauge ``/?value=`` sets and ``/metrics`` exports."""
    metric_help: str = DEFAULT_METRIC_HELP
    """HELP text of the gauge."""
    log_level: str = "info"
    """One of ``debug`` (adds one line per request), ``info``, ``warning``, ``error``."""
    grace_period: float = 10.0
    """Seconds from SIGTERM to exit at the latest; in-flight requests finish inside it."""
    shutdown_delay: float = 0.0
    """Seconds after SIGTERM during which requests are still served (``/readyz`` is 503)
    before the listener closes; lets a load balancer notice. Part of ``grace_period``."""
    allow_non_finite: bool = False
    """Accept ``NaN`` and ``±Inf`` as gauge values, as the Go program does."""
    runtime_metrics: bool = False
    """Also export ``process_*`` and ``python_*`` metrics (the Go program's ``process_*``
    and ``go_*`` counterparts); each scrape then reads ``/proc``."""
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    """Seconds a request's line, headers and body have to arrive, from its first byte
    (from the connection's opening for the first request); then 408 and close."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """Seconds a kept-alive connection may wait for its next request (or not read its
    reply) before it is closed."""
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    """Most bytes of request line and headers; more is answered 431 and closed."""
    setter_token: str | None = field(default=None, repr=False)
    """When set, setting the gauge needs ``Authorization: Bearer <token>``."""

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise InputError(f"port {self.port} is out of range", where="--port", fix=_PORT_FIX)
        if not self.host or any(char.isspace() for char in self.host):
            raise InputError(
                f"{self.host!r} is not an address to listen on",
                where="--host",
                fix="pass an IP address or host name such as 0.0.0.0, 127.0.0.1 or ::",
            )
        check_metric_name(self.metric_name)
        try:
            self.metric_help.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                "the help text is not valid UTF-8",
                where="--metric-help",
                fix="pass plain text",
            ) from None
        if self.log_level not in LOG_LEVELS:
            raise InputError(
                f"unknown log level {self.log_level!r}",
                where="--log-level",
                fix=f"use one of {', '.join(LOG_LEVELS)}",
            )
        if self.shutdown_delay > self.grace_period:
            raise InputError(
                f"the shutdown delay ({self.shutdown_delay:g}s) is longer than the grace "
                f"period ({self.grace_period:g}s)",
                where="--shutdown-delay",
                fix="make --shutdown-delay at most --grace-period",
            )
        check_connection_limits(self.header_timeout, self.idle_timeout, self.max_header_bytes)
        if self.setter_token is not None:
            check_setter_token(self.setter_token, where="--setter-token")


def check_connection_limits(
    header_timeout: float, idle_timeout: float, max_header_bytes: int
) -> None:
    """The checks of ``--header-timeout``, ``--idle-timeout`` and ``--max-header-bytes``,
    which both servers (the gauge and ``--serve llm``) take."""
    for flag, seconds in (("--header-timeout", header_timeout), ("--idle-timeout", idle_timeout)):
        if not 0 < seconds <= _LONGEST_TIMEOUT:
            raise InputError(
                f"{seconds:g}s is not a timeout: it must be more than 0 and at most 24h",
                where=flag,
                fix=f"pass a duration such as {'10s' if 'header' in flag else '60s'}",
            )
    low, high = _HEADER_BYTES_RANGE
    if not low <= max_header_bytes <= high:
        raise InputError(
            f"{max_header_bytes} bytes is out of range",
            where="--max-header-bytes",
            fix=f"pass a whole number of bytes from {low} to {high} (default "
            f"{DEFAULT_MAX_HEADER_BYTES}, Go's DefaultMaxHeaderBytes)",
        )


def connection_limits_from_flags(
    header_timeout: str, idle_timeout: str, max_header_bytes: str
) -> tuple[float, float, int]:
    """The three connection limits from their flags' strings (checked by the config)."""
    size = max_header_bytes.strip()
    if not size.isascii() or not size.isdigit() or len(size) > 12:
        raise InputError(
            f"{max_header_bytes[:40]!r} is not a number of bytes",
            where="--max-header-bytes",
            fix=f"pass a whole number of bytes, e.g. {DEFAULT_MAX_HEADER_BYTES} (1 MiB)",
        )
    return (
        _duration(header_timeout, "--header-timeout"),
        _duration(idle_timeout, "--idle-timeout"),
        int(size),
    )


def check_metric_name(name: str) -> None:
    """Raise ``InputError`` unless ``name`` is a classic Prometheus metric name.

    Classic names (``[a-zA-Z_:][a-zA-Z0-9_:]*``, no leading ``__``, which Prometheus
    reserves) are what KEDA's PromQL query and every Prometheus version accept.
    """
    if not _METRIC_NAME.fullmatch(name) or name.startswith("__"):
        raise InputError(
            f"{name!r} is not a Prometheus metric name",
            where="--metric-name",
            fix="use letters, digits, underscores and colons, not starting with a digit "
            "or '__', e.g. my_custom_gauge",
        )


def check_setter_token(token: str, *, where: str) -> None:
    """Raise ``InputError`` unless ``token`` can travel as ``Authorization: Bearer <token>``.

    RFC 6750 section 2.1 allows letters, digits and ``-._~+/`` followed by ``=`` padding.
    An empty token is refused rather than read as "no token": a Secret that failed to
    mount must not silently open the setter to everyone. The token never appears in the
    message.
    """
    if not token:
        raise InputError(
            "the setter token is empty",
            where=where,
            fix=f"set a token, or unset {TOKEN_ENV} and drop --setter-token to run without one",
        )
    if not _TOKEN.fullmatch(token):
        raise InputError(
            "the setter token has characters a Bearer token cannot carry",
            where=where,
            fix="use letters, digits and -._~+/ (e.g. the output of `openssl rand -hex 32`)",
        )


def config_from_flags(
    *,
    host: str,
    port: str,
    metric_name: str,
    metric_help: str,
    log_level: str,
    grace_period: str,
    shutdown_delay: str,
    allow_non_finite: bool,
    runtime_metrics: bool,
    setter_token: str | None,
    token_from_env: bool,
    header_timeout: str = "10s",
    idle_timeout: str = "60s",
    max_header_bytes: str = str(DEFAULT_MAX_HEADER_BYTES),
) -> AppConfig:
    """An :class:`AppConfig` from the command line's strings; ``InputError`` names the flag.

    ``token_from_env`` says the token came from ``GPUSCALE_SETTER_TOKEN`` rather than
    ``--setter-token``, so a bad one is blamed on the right place.
    """
    text = port.strip()
    if not text.isascii() or not text.isdigit():
        raise InputError(f"{port!r} is not a port number", where="--port", fix=_PORT_FIX)
    if setter_token is not None:
        check_setter_token(setter_token, where=TOKEN_ENV if token_from_env else "--setter-token")
    header, idle, size = connection_limits_from_flags(
        header_timeout, idle_timeout, max_header_bytes
    )
    return AppConfig(
        host=host,
        port=int(text),
        metric_name=metric_name,
        metric_help=metric_help,
        log_level=log_level.strip().lower(),
        grace_period=_duration(grace_period, "--grace-period"),
        shutdown_delay=_duration(shutdown_delay, "--shutdown-delay"),
        allow_non_finite=allow_non_finite,
        runtime_metrics=runtime_metrics,
        header_timeout=header,
        idle_timeout=idle,
        max_header_bytes=size,
        setter_token=setter_token,
    )


def _duration(text: str, flag: str) -> float:
    try:
        return parse_duration(text)
    except ValueError:
        raise InputError(
            f"{text!r} is not a duration",
            where=flag,
            fix="write a non-negative duration such as 10s, 1m30s or 500ms",
        ) from None
