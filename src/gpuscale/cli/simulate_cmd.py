"""``gpuscale simulate``: replay a scenario or a request trace through the whole control
loop in virtual time, and say what it does and costs.

This module holds only the command's options, so that ``gpuscale --help`` and
``gpuscale simulate --help`` import nothing heavy; the work is in
:mod:`gpuscale.cli._simulate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.main import app

__all__ = ["simulate_command"]


@app.command("simulate")
def simulate_command(
    *,
    manifests: Annotated[
        list[Path],
        typer.Argument(
            help="Manifest files or directories (Deployment, Service, ServiceMonitor, "
            "ScaledObject).",
            show_default=False,
        ),
    ],
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            "-p",
            help="gpuscale.yaml (default: the one beside the manifests, else the defaults).",
            show_default=False,
        ),
    ] = None,
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", help="Scenario file (timed load steps).", show_default=False),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="Request trace (Azure LLM CSV, Mooncake JSONL or CSV with a timestamp column).",
            show_default=False,
        ),
    ] = None,
    trace_format: Annotated[
        str, typer.Option("--trace-format", help="auto, azure, mooncake or csv.")
    ] = "auto",
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload", help="The Deployment the trace's requests go to.", show_default=False
        ),
    ] = None,
    speedup: Annotated[
        float, typer.Option("--speedup", help="Replay the trace this many times faster.")
    ] = 1.0,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="Virtual time to simulate (default: the scenario's until, the trace's span, "
            "else 1h). A trace shorter than this is repeated.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same run).")] = 0,
    namespace: Annotated[
        str,
        typer.Option(
            "--namespace", "-n", help="Namespace of objects that set none (as kubectl -n)."
        ),
    ] = "default",
    timeline: Annotated[
        Path | None,
        typer.Option(
            "--timeline", help="Write the timeline (JSON Lines) here.", show_default=False
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Write the HTML report here.", show_default=False),
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option("--plots", help="Write PNG plots into this directory.", show_default=False),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option("--label", help="Name of the run in tables and plots.", show_default=False),
    ] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text or json.")] = "text",
) -> None:
    """Replay a scenario or a trace through KEDA, the HPA and the autoscaler in virtual time.

    The models of Prometheus' scrapes, KEDA, the HPA, the ReplicaSet controller, the
    scheduler, the kubelet and the cluster autoscaler run at their real periods."""
    from gpuscale.cli import _simulate  # noqa: PLC0415 - heavy; see module doc

    _simulate.execute(
        manifests=manifests,
        profile=profile,
        scenario=scenario,
        trace=trace,
        trace_format=trace_format,
        workload=workload,
        speedup=speedup,
        until=until,
        seed=seed,
        namespace=namespace,
        timeline=timeline,
        report=report,
        plots=plots,
        label=label,
        output=output,
    )
