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
from gpuscale.errors import InputError

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
    "  gpuscale app --serve llm --gpu h100 --model llama-3.1-8b   # vLLM stand-in on :8000"
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
    port: str | None = typer.Option(
        None,
        "--port",
        metavar="PORT",
        help="TCP port (8080; 8000 with --serve llm); 0 picks a free one (logged).",
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
    serve: str = typer.Option(
        "gauge",
        "--serve",
        metavar="gauge|llm",
        help="gauge: the tutorial's workload; llm: an emulated vLLM server (OpenAI API, "
        "vLLM's metrics, timing from the serving model; docs/serving.md).",
    ),
    gpu: str | None = typer.Option(
        None, "--gpu", metavar="GPU", help="llm: GPU preset (default l40s)."
    ),
    model: str | None = typer.Option(
        None, "--model", metavar="MODEL", help="llm: model preset (default llama-3.1-8b)."
    ),
    served_model_name: str | None = typer.Option(
        None, "--served-model-name", metavar="NAME", help="llm: the model name the API answers to."
    ),
    max_num_seqs: str | None = typer.Option(
        None, "--max-num-seqs", metavar="N", help="llm: vLLM's flag."
    ),
    max_num_batched_tokens: str | None = typer.Option(
        None, "--max-num-batched-tokens", metavar="N", help="llm: vLLM's flag."
    ),
    num_gpu_blocks: str | None = typer.Option(
        None,
        "--num-gpu-blocks",
        metavar="N",
        help="llm: KV-cache blocks (vLLM's --num-gpu-blocks-override).",
    ),
    block_size: str | None = typer.Option(
        None, "--block-size", metavar="TOKENS", help="llm: vLLM's flag."
    ),
    max_model_len: str | None = typer.Option(
        None,
        "--max-model-len",
        metavar="TOKENS",
        help="llm: longest prompt + output (default 8192).",
    ),
    step_cost: str | None = typer.Option(
        None,
        "--step-cost",
        metavar="TERM=SECONDS,...",
        help="llm: step-cost terms replacing the preset's (base, prefill_token, decode_seq, "
        "context_token), e.g. base=0.02,decode_seq=0.0005: an emulator with known "
        "parameters, such as gpuscale calibrate is tested against.",
    ),
) -> None:
    from gpuscale.app import config_from_flags, exec_server  # noqa: PLC0415 - keep other commands light

    if serve not in ("gauge", "llm"):
        raise InputError(f"unknown mode {serve!r}", where="--serve", fix="use gauge or llm")
    if serve == "llm":
        _serve_llm(ctx, locals())
        return
    _refuse(ctx, "gauge", _LLM_ONLY)
    token, where = setter_token_from(ctx, setter_token)
    config = config_from_flags(
        host=host,
        port="8080" if port is None else port,
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


_LLM_ONLY = (
    "gpu",
    "model",
    "served_model_name",
    "max_num_seqs",
    "max_num_batched_tokens",
    "num_gpu_blocks",
    "block_size",
    "max_model_len",
    "step_cost",
)
_GAUGE_ONLY = (
    "metric_name",
    "metric_help",
    "shutdown_delay",
    "allow_non_finite",
    "runtime_metrics",
    "setter_token",
)


def _refuse(ctx: typer.Context, mode: str, names: tuple[str, ...]) -> None:
    """One-line error for a flag of the other mode given on the command line."""
    for name in names:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            flag = "--" + name.replace("_", "-")
            other = "--serve llm" if mode == "gauge" else "the gauge server (--serve gauge)"
            raise InputError(
                f"{flag} is not a flag of --serve {mode}",
                where=flag,
                fix=f"drop {flag}; it belongs to {other}",
            )


def _serve_llm(ctx: typer.Context, values: dict[str, object]) -> None:
    """``--serve llm``: check the flags, then serve in this process (see docs/serving.md)."""
    from gpuscale.app._llm import llm_config_from_flags  # noqa: PLC0415 - keep other commands light
    from gpuscale.app._llm_server import run_llm  # noqa: PLC0415
    from gpuscale.kube import parse_duration  # noqa: PLC0415

    _refuse(ctx, "llm", _GAUGE_ONLY)
    grace_text = str(values["grace_period"])
    try:
        grace = parse_duration(grace_text)
    except ValueError:
        raise InputError(
            f"{grace_text!r} is not a duration",
            where="--grace-period",
            fix="write a non-negative duration such as 10s or 1m30s",
        ) from None
    config = llm_config_from_flags(
        host=str(values["host"]),
        port=None if values["port"] is None else str(values["port"]),
        log_level=str(values["log_level"]),
        grace_period=grace,
        flags={name: None if values[name] is None else str(values[name]) for name in _LLM_ONLY},
        header_timeout=str(values["header_timeout"]),
        idle_timeout=str(values["idle_timeout"]),
        max_header_bytes=str(values["max_header_bytes"]),
    )
    raise typer.Exit(run_llm(config))
