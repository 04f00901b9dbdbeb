"""``gpuscale app``: run the workload program (the tutorial's Go server, in Python).

Flags arrive as strings and are checked by :func:`gpuscale.app.config_from_flags`, so
every mistake is one line naming the flag and the fix, with exit code 2. The server
module is imported inside the command, so other commands (and ``gpuscale --help``) do
not pay for prometheus_client and the HTTP parser; once the flags are good the process
becomes the lean ``python -m gpuscale.app`` (see ``gpuscale.app._launch``: the CLI
framework alone would eat a third of the 40 MB memory budget).
"""

from __future__ import annotations

from typing import Annotated

import typer

from gpuscale.cli._options import SETTER_TOKEN_ENV, setter_token_option, warn_token_flag
from gpuscale.cli._options import setter_token as setter_token_from
from gpuscale.cli.main import app

__all__ = ["app_command"]

_HELP = (
    "Run the workload program: GET /?value=<number> sets a gauge, GET /metrics exports it."
    "\n\n"
    "It answers as the tutorial's Go program does, so the tutorial's steps work unchanged, "
    "and adds what a production workload needs: /healthz and /readyz, a clean shutdown on "
    "SIGTERM, a per-request debug log, NaN/Inf refused (KEDA would read them as 0 and "
    "scale down) and an optional setter token."
    "\n\n"
    "[bold]Examples[/bold]"
    "\n\n"
    "  gpuscale app                               # serve on 0.0.0.0:8080\n"
    "  curl 'http://127.0.0.1:8080/?value=160'    # Hello, from the handler!\n"
    "  curl http://127.0.0.1:8080/metrics         # my_custom_gauge 160.0"
    "\n\n"
    "  export GPUSCALE_SETTER_TOKEN=$(openssl rand -hex 32)\n"
    "  gpuscale app --log-level debug --shutdown-delay 5s\n"
    '  curl -H "Authorization: Bearer $GPUSCALE_SETTER_TOKEN" \\\n'
    "       'http://127.0.0.1:8080/?value=2'"
    "\n\n"
    "  gpuscale app --port 9000 --metric-name queue_depth \\\n"
    "               --metric-help 'Jobs waiting'"
    "\n\n"
    "Exit codes: 0 after a clean shutdown, 1 when the port is busy, 2 for a bad flag or "
    "setting. Documentation: docs/commands/app.md."
)


@app.command("app", help=_HELP, no_args_is_help=False)
def app_command(  # noqa: PLR0917 - Typer maps each parameter to a flag
    ctx: typer.Context,
    host: str = typer.Option(
        "0.0.0.0",
        "--host",
        metavar="ADDRESS",
        help="Address to listen on; '::' listens on IPv6 (and IPv4) too, like Go's ':8080'.",
    ),
    port: str = typer.Option(
        "8080", "--port", metavar="PORT", help="TCP port; 0 picks a free one (logged)."
    ),
    metric_name: str = typer.Option(
        "my_custom_gauge",
        "--metric-name",
        metavar="NAME",
        help="Name of the gauge (Prometheus syntax).",
    ),
    metric_help: str = typer.Option(
        "This is a custom gauge metric",
        "--metric-help",
        metavar="TEXT",
        help="HELP text of the gauge.",
    ),
    log_level: str = typer.Option(
        "info",
        "--log-level",
        metavar="debug|info|warning|error",
        help="debug (one line per request), info, warning or error.",
    ),
    grace_period: str = typer.Option(
        "10s",
        "--grace-period",
        metavar="DURATION",
        help="Longest time from SIGTERM to exit; in-flight requests finish within it.",
    ),
    shutdown_delay: str = typer.Option(
        "0s",
        "--shutdown-delay",
        metavar="DURATION",
        help="After SIGTERM, keep serving this long with /readyz at 503 before closing "
        "the listener, so the Service stops routing here first (e.g. 5s in Kubernetes).",
    ),
    allow_non_finite: bool = typer.Option(
        False,
        "--allow-non-finite",
        help="Accept NaN and ±Inf as values, as the Go program does. Off by default: "
        "KEDA turns them into 0 and scales the workload down.",
    ),
    runtime_metrics: bool = typer.Option(
        False,
        "--runtime-metrics",
        help="Also export process_* and python_* metrics (slower scrapes).",
    ),
    header_timeout: str = typer.Option(
        "10s",
        "--header-timeout",
        metavar="DURATION",
        help="A request's line, headers and body must arrive within this from its first "
        "byte (from the connection's opening for the first one); else 408 and close.",
    ),
    idle_timeout: str = typer.Option(
        "60s",
        "--idle-timeout",
        metavar="DURATION",
        help="Close a kept-alive connection that sends no request (or reads no reply) "
        "for this long.",
    ),
    max_header_bytes: str = typer.Option(
        "1048576",
        "--max-header-bytes",
        metavar="BYTES",
        help="Largest request line plus headers; more gets 431 and the connection closes.",
    ),
    setter_token: Annotated[
        str | None,
        setter_token_option(
            "Require 'Authorization: Bearer TOKEN' to set the gauge (401 otherwise)."
        ),
    ] = None,
) -> None:
    from gpuscale.app import config_from_flags, exec_server  # noqa: PLC0415 - keep other commands light

    token, where = setter_token_from(ctx, setter_token)
    config = config_from_flags(
        host=host,
        port=port,
        metric_name=metric_name,
        metric_help=metric_help,
        log_level=log_level,
        grace_period=grace_period,
        shutdown_delay=shutdown_delay,
        allow_non_finite=allow_non_finite,
        runtime_metrics=runtime_metrics,
        setter_token=token,
        token_from_env=where == SETTER_TOKEN_ENV,
        header_timeout=header_timeout,
        idle_timeout=idle_timeout,
        max_header_bytes=max_header_bytes,
    )
    warn_token_flag(where)
    exec_server(config)
