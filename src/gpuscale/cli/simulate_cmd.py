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

from gpuscale.cli._options import (
    ManifestNamespaceOption,
    SeedOption,
    SpeedupOption,
    TraceFormatOption,
    profile_option,
    until_option,
    workload_option,
)
from gpuscale.cli.main import app

__all__ = ["simulate_command"]


@app.command("simulate")
def simulate_command(
    *,
    manifests: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH",
            help="Manifest files or directories (Deployment, Service, ServiceMonitor, "
            "ScaledObject).",
            show_default=False,
        ),
    ],
    profile: Annotated[
        Path | None,
        profile_option(
            "default: the gpuscale.yaml beside the manifests or one level up, else "
            "./gpuscale.yaml, else the defaults"
        ),
    ] = None,
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario",
            metavar="FILE",
            help="Scenario file (timed load steps).",
            show_default=False,
        ),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            metavar="FILE",
            help="Request trace (Azure LLM CSV, Mooncake JSONL or CSV with a timestamp column).",
            show_default=False,
        ),
    ] = None,
    trace_format: TraceFormatOption = "auto",
    workload: Annotated[
        str | None, workload_option("The Deployment the trace's requests go to.")
    ] = None,
    speedup: SpeedupOption = 1.0,
    until: Annotated[
        str | None,
        until_option(
            "the scenario's until, one pass of the trace with every request, else 1h; "
            "a trace shorter than this is repeated"
        ),
    ] = None,
    max_work: Annotated[
        str | None,
        typer.Option(
            "--max-work",
            metavar="N",
            help="Refuse runs estimated above N units of work (loop events + requests, "
            "10 per request to a serving.kind vllm engine; default 1e7, a few minutes). "
            "Raise it for long runs.",
            show_default=False,
        ),
    ] = None,
    seed: SeedOption = 0,
    namespace: ManifestNamespaceOption = "default",
    timeline: Annotated[
        Path | None,
        typer.Option(
            "--timeline",
            metavar="FILE",
            help="Write the timeline (JSON Lines) here.",
            show_default=False,
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", metavar="FILE", help="Write the HTML report here.", show_default=False
        ),
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option(
            "--plots",
            metavar="DIR",
            help="Write PNG plots into this directory.",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            metavar="TEXT",
            help="Name of the run in tables and plots.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="text|json", help="text or json.")
    ] = "text",
) -> None:
    """Replay a scenario or a trace through KEDA, the HPA and the autoscaler in virtual time.

    The models of Prometheus' scrapes, KEDA, the HPA, the ReplicaSet controller, the
    scheduler, the kubelet and the cluster autoscaler run at their real periods.
    Documentation: docs/commands/simulate.md.

    [bold]Examples[/bold]

      gpuscale simulate examples/tutorial-fixed --scenario examples/tutorial-scenario.yaml
      gpuscale simulate k8s/ --profile gpuscale.yaml --trace azure_conv.csv \\
          --workload llm --speedup 4 --until 2h --report run.html
      gpuscale simulate k8s/ --scenario spike.yaml --timeline run.jsonl -o json
    """
    from gpuscale.cli import _gc  # noqa: PLC0415 - see module doc

    with _gc.paused():  # until the run starts (gpuscale.cli._simulation.run)
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
            max_work=max_work,
        )
