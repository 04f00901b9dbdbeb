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

from gpuscale.cli.main import app
from gpuscale.errors import InputError, UnavailableError
from gpuscale.units import format_duration, parse_duration

if TYPE_CHECKING:
    from gpuscale.live.kube import Kube

__all__ = ["load_command"]


@app.command("load")
def load_command(
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
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Namespace (default: the context's)."),
    ] = None,
    pod: Annotated[str | None, typer.Option("--pod", help="--value: this pod.")] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="--value: the pod's port (default: its first).")
    ] = None,
    setter_token: Annotated[
        str | None,
        typer.Option(
            "--setter-token",
            envvar="GPUSCALE_SETTER_TOKEN",
            show_envvar=True,
            help="The workload's setter token (sent as Authorization: Bearer).",
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
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="Kubeconfig file.")] = None,
    context: Annotated[str | None, typer.Option("--context", help="Kubeconfig context.")] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text or json.")] = "text",
) -> None:
    """Set the workload's gauge on one pod, or send requests to its Service at a rate."""
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
    if output not in ("text", "json"):
        raise InputError(f"unknown output format {output!r}", where="--output", fix="text or json")
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
            token=setter_token,
            output=output,
        )
        return
    seconds = _duration(for_, "--for") if for_ is not None else None
    if rate is not None and seconds is None:
        raise InputError("--rate needs --for", where="--for", fix="e.g. --rate 10 --for 5m")
    _send(
        kube,
        ns,
        service=service or _deployment_name(kube, ns, deployment),
        service_port=service_port,
        rate=rate,
        seconds=seconds,
        trace=trace,
        speed=speed,
        path=path,
        openai_model=openai_model,
        timeout=_duration(timeout, "--timeout"),
        concurrency=concurrency,
        max_in_flight=max_in_flight,
        refresh=_duration(refresh, "--refresh"),
        output=output,
    )


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
    rate: float | None,
    seconds: float | None,
    trace: Path | None,
    speed: float,
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
        constant_rate,
        from_trace,
        run_load,
    )

    try:
        if rate is not None:
            assert seconds is not None
            arrivals = list(constant_rate(rate, seconds))
        else:
            assert trace is not None
            arrivals = list(from_trace(_trace_rows(trace), speed=speed, duration=seconds))
    except ValueError as exc:
        raise InputError(
            str(exc), where="--rate/--speed/--for", fix="use positive numbers"
        ) from None
    if max_in_flight < 1 or concurrency < 1:
        raise InputError(
            "must be at least 1", where="--concurrency/--max-in-flight", fix="e.g. 32 and 256"
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
        print(f"  {report.lines()[0]}", file=sys.stderr)

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
        typer.echo(json.dumps(doc, indent=2))
    else:
        for line in report.lines():
            typer.echo(line)
        for error in errors[:5]:
            typer.echo(f"port-forward: {error}", err=True)
    if report.sent and not report.ok:
        raise typer.Exit(1)


def _duration(text: str, flag: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InputError(str(exc), where=flag, fix="e.g. 30s, 5m or 1h") from None
