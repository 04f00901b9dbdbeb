"""``gpuscale load``: set the gauge on one pod (``--value``) or send requests at a rate
(``--rate R --for D``) or replaying a trace (``--trace FILE``), through port-forwards.

Results go to stdout (``-o json`` for a machine-readable report), progress to stderr.
The Kubernetes client and asyncio are imported when the command runs, not when
``gpuscale`` starts or for ``--help``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuscale._redact import redact, redact_json
from gpuscale.cli._options import (
    ContextOption,
    KubeconfigOption,
    OutputOption,
    WorkloadNamespaceOption,
    check_output,
    setter_token_option,
    warn_token_flag,
)
from gpuscale.cli._options import setter_token as read_setter_token
from gpuscale.cli.main import app
from gpuscale.errors import InputError, UnavailableError
from gpuscale.kube import format_duration, parse_duration

if TYPE_CHECKING:
    from gpuscale.live.kube import Kube
    from gpuscale.live.load import Arrival

__all__ = ["load_command"]


@app.command("load")
def load_command(
    ctx: typer.Context,
    *,
    value: Annotated[
        str | None, typer.Option("--value", help="Set the gauge to this value on one pod.")
    ] = None,
    rate: Annotated[
        float | None, typer.Option("--rate", help="Send this many requests per second.")
    ] = None,
    for_: Annotated[
        str | None, typer.Option("--for", help="How long to send (--rate; optional for --trace).")
    ] = None,
    trace: Annotated[
        Path | None, typer.Option("--trace", help="Replay a request trace (Azure CSV, Mooncake).")
    ] = None,
    speed: Annotated[
        float, typer.Option("--speed", help="Replay the trace this much faster.")
    ] = 1.0,
    deployment: Annotated[
        str | None,
        typer.Option("--deployment", "-d", help="The Deployment (default: the only one)."),
    ] = None,
    namespace: WorkloadNamespaceOption = None,
    pod: Annotated[str | None, typer.Option("--pod", help="--value: this pod.")] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="--value: the pod's port (default: its first).")
    ] = None,
    setter_token: Annotated[
        str | None,
        setter_token_option(
            "--value: the workload's setter token (sent as Authorization: Bearer)."
        ),
    ] = None,
    service: Annotated[
        str | None,
        typer.Option(
            "--service", help="--rate/--trace: the Service (default: the Deployment's name)."
        ),
    ] = None,
    service_port: Annotated[
        str | None, typer.Option("--service-port", help="The Service port's name or number.")
    ] = None,
    path: Annotated[
        str, typer.Option("--path", help="Request path; {prompt_tokens}/{output_tokens} filled.")
    ] = "/",
    openai_model: Annotated[
        str | None,
        typer.Option("--openai-model", help="POST /v1/completions for this model instead."),
    ] = None,
    timeout: Annotated[str, typer.Option("--timeout", help="Per-request timeout.")] = "30s",
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Requests on the wire at once (connections).")
    ] = 32,
    max_in_flight: Annotated[
        int,
        typer.Option("--max-in-flight", help="Requests sent or waiting at most; more are dropped."),
    ] = 256,
    refresh: Annotated[
        str, typer.Option("--refresh", help="How often to follow the Service's ready pods.")
    ] = "10s",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: OutputOption = "text",
) -> None:
    """Set the workload's gauge on one pod, or send requests to its Service at a rate."""
    mode = _mode(ctx, value=value, rate=rate, trace=trace)
    check_output(output)
    token, token_from = read_setter_token(ctx, setter_token)
    if token is not None:
        from gpuscale.app._config import check_setter_token  # noqa: PLC0415 - one validator

        check_setter_token(token, where=token_from)
    if value is not None:
        _number(value)
        arrivals: list[Arrival] = []
    else:
        arrivals = _arrivals(rate, for_, trace, speed)
        if concurrency < 1 or max_in_flight < 1:
            raise InputError(
                "must be at least 1", where="--concurrency/--max-in-flight", fix="e.g. 32 and 256"
            )
    timeout_s = _positive_duration(timeout, "--timeout")
    refresh_s = _positive_duration(refresh, "--refresh")
    if mode == "--value":
        warn_token_flag(token_from)
    from gpuscale.live.kube import Kube, connect  # noqa: PLC0415 - see module doc

    api, target = connect(kubeconfig=kubeconfig, context=context)
    kube = Kube(api, target)
    ns = namespace or target.namespace
    if value is not None:
        _set(
            kube,
            ns,
            deployment=deployment,
            pod=pod,
            port=port,
            value=value,
            token=token,
            output=output,
        )
        return
    _send(
        kube,
        ns,
        service=service or _deployment_name(kube, ns, deployment),
        service_port=service_port,
        arrivals=arrivals,
        path=path,
        openai_model=openai_model,
        timeout=timeout_s,
        concurrency=concurrency,
        max_in_flight=max_in_flight,
        refresh=refresh_s,
        output=output,
    )


_ONLY_FOR = {
    "--value": ("pod", "port", "setter_token"),
    "--rate": ("for_", "service", "service_port", "path", "openai_model", "concurrency",
               "max_in_flight", "refresh"),
    "--trace": ("for_", "speed", "service", "service_port", "path", "openai_model",
                "concurrency", "max_in_flight", "refresh"),
}  # fmt: skip
"""The options each mode reads; given with another mode they are refused."""


def _mode(ctx: typer.Context, *, value: str | None, rate: float | None, trace: Path | None) -> str:
    """The one mode asked for (``--value``, ``--rate`` or ``--trace``); an option that only
    another mode reads, given on the command line, is an error rather than ignored."""
    modes = [
        m for m, on in (("--value", value), ("--rate", rate), ("--trace", trace)) if on is not None
    ]
    if len(modes) != 1:
        raise InputError(
            "choose one of --value, --rate or --trace"
            + (f" (got {', '.join(modes)})" if modes else ""),
            where="gpuscale load",
            fix="e.g. gpuscale load --value 160, or --rate 10 --for 5m",
        )
    mode = modes[0]
    allowed = set(_ONLY_FOR[mode])
    for param in ctx.command.params:
        name = param.name or ""
        source = ctx.get_parameter_source(name)
        if source is None or source.name != "COMMANDLINE" or name in allowed:
            continue
        if any(name in used for used in _ONLY_FOR.values()):
            flag = max(param.opts, key=len)
            users = " or ".join(m for m, used in _ONLY_FOR.items() if name in used)
            raise InputError(
                f"applies only to {users}, not to {mode}",
                where=flag,
                fix=f"drop {flag}, or use {users}",
            )
    return mode


def _number(value: str) -> float:
    """``--value`` as a finite number."""
    try:
        number = float(value)
    except ValueError:
        raise InputError(
            f"{value!r} is not a number", where="--value", fix="e.g. --value 160"
        ) from None
    if not math.isfinite(number):
        raise InputError(
            f"{value!r} is not finite; KEDA reads NaN/Inf as 0",
            where="--value",
            fix="pass a finite number",
        )
    return number


def _arrivals(
    rate: float | None, for_: str | None, trace: Path | None, speed: float
) -> list[Arrival]:
    """The request arrivals of ``--rate R --for D`` or ``--trace FILE``, checked and
    computed before anything is contacted (the trace file read and parsed here)."""
    from gpuscale.live.load import constant_rate, from_trace  # noqa: PLC0415 - see module doc

    seconds = _positive_duration(for_, "--for") if for_ is not None else None
    if rate is not None:
        if seconds is None:
            raise InputError("--rate needs --for", where="--for", fix="e.g. --rate 10 --for 5m")
        if not (math.isfinite(rate) and rate > 0):
            raise InputError(
                f"the rate must be a positive number of requests per second, got {rate:g}",
                where="--rate",
                fix="e.g. --rate 10",
            )
        return list(constant_rate(rate, seconds))
    assert trace is not None
    if not (math.isfinite(speed) and speed > 0):
        raise InputError(
            f"the speed must be a positive factor, got {speed:g}",
            where="--speed",
            fix="e.g. --speed 2 (twice as fast)",
        )
    rows = _trace_rows(trace)
    try:
        return list(from_trace(rows, speed=speed, duration=seconds))
    except ValueError as exc:
        raise InputError(str(exc), where=str(trace), fix="sort the trace by time") from None


def _set(
    kube: Kube,
    ns: str,
    *,
    deployment: str | None,
    pod: str | None,
    port: int | None,
    value: str,
    token: str | None,
    output: str,
) -> None:
    import httpx  # noqa: PLC0415 - see module doc

    from gpuscale.live.load import (  # noqa: PLC0415 - see module doc
        container_port,
        deployment_selector,
        pick_pod,
        set_gauge,
    )
    from gpuscale.live.portforward import PortForwarder  # noqa: PLC0415 - see module doc

    name = _deployment_name(kube, ns, deployment)
    dep = kube.deployment(ns, name)
    chosen = pick_pod(kube.pods(ns, deployment_selector(dep)), pod, where=f"deployment/{ns}/{name}")
    target_port = port or container_port(dep) or 8080
    with (
        PortForwarder(kube, ns, chosen, target_port) as forward,
        httpx.Client(timeout=30) as client,
    ):
        answer = set_gauge(
            client, forward.url, value, token=token, where=f"pod/{ns}/{chosen}:{target_port}"
        )
    answer = redact(answer)  # the pod's own words; a hostile one may echo the token
    if output == "json":
        typer.echo(json.dumps({"deployment": f"{ns}/{name}", "pod": chosen, "port": target_port,
                               "value": value, "answer": answer}))  # fmt: skip
        return
    typer.echo(f"set value {value} on pod/{ns}/{chosen}:{target_port} ({answer})")


def _deployment_name(kube: Kube, ns: str, deployment: str | None) -> str:
    if deployment:
        return deployment
    names = sorted(str(d["metadata"]["name"]) for d in kube.deployments(ns))
    if len(names) == 1:
        return names[0]
    raise InputError(
        f"namespace {ns} has {len(names)} Deployments"
        + (f" ({', '.join(names)})" if names else ""),
        where="--deployment",
        fix="name the Deployment with --deployment" + ("" if names else " and check --namespace"),
    )


def _trace_rows(path: Path) -> Iterable[tuple[float, int, int]]:
    """The trace's ``(offset, prompt_tokens, output_tokens)`` rows, read by the same parser
    ``gpuscale simulate`` uses, so a replay on the cluster and in simulation see one trace."""
    from gpuscale.inputs import read_trace  # noqa: PLC0415 - only --trace needs it

    return read_trace(str(path))


def _send(
    kube: Kube,
    ns: str,
    *,
    service: str,
    service_port: str | None,
    arrivals: list[Arrival],
    path: str,
    openai_model: str | None,
    timeout: float,
    concurrency: int,
    max_in_flight: int,
    refresh: float,
    output: str,
) -> None:
    import asyncio  # noqa: PLC0415 - see module doc

    import httpx  # noqa: PLC0415 - see module doc

    from gpuscale.live.load import (  # noqa: PLC0415 - see module doc
        ForwardPool,
        LoadReport,
        RequestSpec,
        WallClock,
        run_load,
    )

    pool = ForwardPool(kube, ns, service, service_port)
    pool.refresh()
    if not pool.urls():
        raise UnavailableError(
            f"service/{ns}/{service} has no ready endpoints",
            where=f"service/{ns}/{service}",
            fix="wait for a Ready pod behind the Service (gpuscale watch), or check --service",
        )
    span = arrivals[-1].offset if arrivals else 0.0
    print(
        f"sending {len(arrivals)} requests over {format_duration(span)} to service/{ns}/{service} "
        f"({len(pool.urls())} ready pods; following it every {format_duration(refresh)})",
        file=sys.stderr,
    )

    def progress(report: LoadReport) -> None:
        for line in report.lines():
            print(f"  {redact(line)}", file=sys.stderr)

    async def go() -> LoadReport:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(limits=limits, trust_env=False) as client:
            return await run_load(
                arrivals,
                client=client,
                targets=pool.urls,
                request=RequestSpec(path=path, openai_model=openai_model),
                clock=WallClock(),
                concurrency=concurrency,
                max_in_flight=max_in_flight,
                timeout=timeout,
                on_progress=progress,
            )

    pool.follow(refresh)
    try:
        report = asyncio.run(go())
    finally:
        pool.close()
    errors = pool.forward_errors()
    if output == "json":
        doc: dict[str, Any] = {"service": f"{ns}/{service}", **report.as_dict()}
        doc["port_forward_errors"] = errors[:20]
        typer.echo(json.dumps(redact_json(doc), indent=2))
    else:
        for line in report.lines():
            typer.echo(redact(line))
        for error in errors[:5]:
            typer.echo(f"port-forward: {redact(error)}", err=True)
    if report.sent and not report.ok:
        raise typer.Exit(1)


def _duration(text: str, flag: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InputError(str(exc), where=flag, fix="e.g. 30s, 5m or 1h") from None


def _positive_duration(text: str, flag: str) -> float:
    seconds = _duration(text, flag)
    if not seconds > 0:
        raise InputError(f"must be longer than 0, got {text!r}", where=flag, fix="e.g. 30s or 5m")
    return seconds
