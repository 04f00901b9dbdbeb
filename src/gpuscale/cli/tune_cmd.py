"""``gpuscale tune``: search the cheapest KEDA and HPA settings that meet an SLO on the
user's own trace, measured against a lower bound and a clairvoyant schedule.

This module holds only the command's options (so ``--help`` imports nothing heavy);
the work is in :mod:`gpuscale.cli._tune`.
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

__all__ = ["tune_command"]


@app.command("tune")
def tune_command(
    *,
    manifests: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH",
            help="Manifest files or directories (the Deployment and its ScaledObject).",
            show_default=False,
        ),
    ],
    trace: Annotated[
        Path,
        typer.Option(
            "--trace",
            metavar="FILE",
            help="Request trace to tune on (Azure LLM CSV, Mooncake JSONL or CSV).",
            show_default=False,
        ),
    ],
    slo: Annotated[
        list[str],
        typer.Option(
            "--slo",
            metavar="SLO",
            help="An objective, e.g. 'late<=1%', 'failed==0', 'latency_p99<=20s', "
            "'pending_p99<=10m', and for a serving.kind vllm workload 'ttft_p95<=2s', "
            "'itl_p99<=100ms'; repeat for several (all must hold).",
            show_default=False,
        ),
    ],
    profile: Annotated[
        Path | None,
        profile_option(
            "gpuscale.yaml, found as simulate finds it; its tune: section bounds the search"
        ),
    ] = None,
    validate_trace: Annotated[
        Path | None,
        typer.Option(
            "--validate-trace",
            metavar="FILE",
            help="Score the recommendation on this trace too (exclusive with --holdout).",
            show_default=False,
        ),
    ] = None,
    holdout: Annotated[
        str | None,
        typer.Option(
            "--holdout",
            metavar="PERCENT",
            help="Tune on the first part of the trace, score on the last PERCENT (e.g. 30%).",
            show_default=False,
        ),
    ] = None,
    trials: Annotated[
        int, typer.Option("--trials", metavar="N", help="TPE trials (the cheapest config).")
    ] = 60,
    front_trials: Annotated[
        int | None,
        typer.Option(
            "--front-trials",
            metavar="N",
            help="NSGA-II trials for the dollars-vs-attainment front (default: a quarter of "
            "--trials).",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", metavar="N", help="Trials at a time (processes).")
    ] = 1,
    study: Annotated[
        str | None,
        typer.Option(
            "--study",
            metavar="FILE|URL",
            help="SQLite file keeping the study (or a database URL such as postgresql://...): "
            "run again to resume it (after Ctrl-C too); refused with other inputs.",
            show_default=False,
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDR",
            help="Run the trials on this Ray cluster (pip install 'gpuscale\\[ray]'); "
            "'local' starts one here.",
            show_default=False,
        ),
    ] = None,
    trace_format: TraceFormatOption = "auto",
    workload: Annotated[str | None, workload_option("The Deployment to tune.")] = None,
    speedup: SpeedupOption = 1.0,
    until: Annotated[str | None, until_option("one pass of the trace, each trial")] = None,
    seed: SeedOption = 0,
    namespace: ManifestNamespaceOption = "default",
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="DIR",
            help="Write the recommended manifests (and profile) here: your files with only "
            "the tuned keys changed.",
            show_default=False,
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="FILE",
            help="Write an HTML page: the front, the search's convergence, replica timelines.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="text|json", help="text or json.")
    ] = "text",
) -> None:
    """Search the cheapest KEDA and HPA settings that meet an SLO on your own trace.

    Each trial simulates the trace with one configuration (docs/tune.md: the search
    space, the objective, the lower bound and the clairvoyant schedule every result is
    compared with). Documentation: docs/commands/tune.md.

    [bold]Examples[/bold]

      gpuscale tune k8s/ --trace azure_conv.csv --slo 'late<=1%' --holdout 30%
      gpuscale tune k8s/ --trace conv.csv --slo 'late<=1%' --slo 'failed==0' \\
          --trials 200 --jobs 2 --study tune.db --write tuned/ --report tune.html
    """
    from gpuscale.cli import _tune  # noqa: PLC0415 - heavy; see module doc

    _tune.execute(
        manifests=manifests,
        trace=trace,
        slos=slo,
        profile=profile,
        validate_trace=validate_trace,
        holdout=holdout,
        trials=trials,
        front_trials=front_trials,
        jobs=jobs,
        study=study,
        ray_address=ray_address,
        trace_format=trace_format,
        workload=workload,
        speedup=speedup,
        until=until,
        seed=seed,
        namespace=namespace,
        write=write,
        report=report,
        output=output,
    )
