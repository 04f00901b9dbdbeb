"""Start ``gpuscale app``: logging, the registry, the server, and the signals that stop it.

:func:`run` is what the CLI calls and blocks until SIGTERM or SIGINT has drained the
server; :func:`serve` is the same inside a running event loop, with the registry and
responder injected, for embedding (tests start workload processes in process).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from gpuscale.app._config import AppConfig
from gpuscale.app._handler import Responder, new_registry
from gpuscale.app._server import AppServer

__all__ = ["run", "serve"]

_log = logging.getLogger("gpuscale.app")


def run(config: AppConfig) -> int:
    """Serve until SIGTERM/SIGINT, drain within the grace period, return the exit code (0).

    Configuration errors surface before anything listens: a bad metric name raises
    ``InputError``, a busy port ``UnavailableError``.
    """
    _configure_logging(config.log_level)
    registry, gauge = new_registry(config)
    return asyncio.run(serve(config, Responder(config, registry, gauge)))


async def serve(config: AppConfig, responder: Responder) -> int:
    """Listen, log where, wait for a signal, drain; returns 0.

    The first SIGTERM or SIGINT starts the drain; a second one cuts it short.
    """
    server = AppServer(config, responder)
    bound = await server.start()
    loop = asyncio.get_running_loop()
    stop, force = asyncio.Event(), asyncio.Event()

    def on_signal() -> None:
        (force if stop.is_set() else stop).set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal)
    for host, port in bound:
        shown = f"[{host}]" if ":" in host else host
        _log.info(
            "listening on http://%s:%d: GET /?value=<number> sets %s, GET /metrics exports it; "
            "setter token %s; non-finite values %s",
            shown,
            port,
            config.metric_name,
            "required" if config.setter_token else "not required",
            "accepted" if config.allow_non_finite else "refused",
        )
    try:
        await stop.wait()
        await server.drain(force=force)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    _log.info("stopped")
    return 0


def _configure_logging(level: str) -> None:
    """Send ``gpuscale.app`` records to stderr at ``level``, one line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    _log.handlers[:] = [handler]
    _log.setLevel(level.upper())
    _log.propagate = False
