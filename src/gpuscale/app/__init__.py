"""The workload program, ``gpuscale app``: the tutorial's HTTP contract (``/?value=`` sets
a gauge, ``/metrics`` exports it) made production-ready.

It sits beside the CLI in the layers (``cli ─► app``) and imports nothing else of
gpuscale but errors, units and (for ``--serve llm`` only) the pure serving models, so
the container that runs it stays small. The pieces:

- :mod:`._gocompat`: Go's ``strconv.ParseFloat`` and ``url.Values.Get``, ported, so
  ``/?value=`` accepts and refuses exactly what the Go program does;
- :mod:`._config`: :class:`AppConfig`, checked at construction;
- :mod:`._handler`: :class:`Responder`, the request-to-reply decision, socket-free;
- :mod:`._server`: :class:`AppServer`, asyncio + httptools, shutdown in Kubernetes' order;
- :mod:`._main`: :func:`run` and :func:`serve`, the blocking and the embeddable server;
- :mod:`._launch`: :func:`exec_server`, how ``gpuscale app`` leaves the heavy CLI process
  behind and becomes ``python -m gpuscale.app`` (``__main__``) with the same PID;
- :mod:`._llm` and :mod:`._llm_server`: ``--serve llm``, the serving model
  (:mod:`gpuscale.serving`) in real time behind vLLM's OpenAI API and metrics.

The command and its flags are documented in ``docs/commands/app.md``.
"""

from gpuscale.app._config import (
    DEFAULT_METRIC_HELP,
    DEFAULT_METRIC_NAME,
    DEFAULT_PORT,
    LOG_LEVELS,
    TOKEN_ENV,
    AppConfig,
    check_metric_name,
    check_setter_token,
    config_from_flags,
)
from gpuscale.app._gocompat import go_query_value, parse_go_float
from gpuscale.app._handler import BAD_REQUEST_BODY, HELLO_BODY, Reply, Responder, new_registry
from gpuscale.app._launch import exec_server
from gpuscale.app._main import run, serve
from gpuscale.app._server import MAX_HEADER_BYTES, AppServer

__all__ = [
    "BAD_REQUEST_BODY",
    "DEFAULT_METRIC_HELP",
    "DEFAULT_METRIC_NAME",
    "DEFAULT_PORT",
    "HELLO_BODY",
    "LOG_LEVELS",
    "MAX_HEADER_BYTES",
    "TOKEN_ENV",
    "AppConfig",
    "AppServer",
    "Reply",
    "Responder",
    "check_metric_name",
    "check_setter_token",
    "config_from_flags",
    "exec_server",
    "go_query_value",
    "new_registry",
    "parse_go_float",
    "run",
    "serve",
]
