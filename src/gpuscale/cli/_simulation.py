"""What ``gpuscale simulate`` and ``gpuscale demo`` share: running a simulation with a
progress bar, its timeline header, writing the timeline file, and the summary
table on the terminal (the summary itself is :mod:`gpuscale.report.summary`).

The I/O edge around ``gpuscale.sim``: files are written whole (a temporary name renamed
into place) or not at all; progress goes to stderr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpuscale import __version__
from gpuscale._files import write_atomically
from gpuscale.cli._tables import grid_table
from gpuscale.errors import InputError
from gpuscale.report import (
    ReportRun,
    RunStats,
    Summary,
    side_by_side,
    summarize,
    summary_table,
)
from gpuscale.sim.inputs import APPROXIMATIONS, SimulationInputs
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import Header, Timeline, encode_header, encode_record
from gpuscale.units import format_duration

__all__ = [
    "RunOutcome",
    "console",
    "run",
    "write_timeline",
]

_PROGRESS_ABOVE_S = 6 * 3600.0
"""Runs longer than this (virtual time) show a progress bar on a terminal."""


def console() -> Console:
    """stdout for tables: the terminal's width, or 120 columns when piped."""
    probe = Console()
    return Console(highlight=False, width=None if probe.is_terminal else 120)


@dataclass(frozen=True)
class RunOutcome:
    """One finished run, with everything the outputs need."""

    label: str
    inputs: SimulationInputs
    result: SimulationResult
    stats: RunStats
    summary: Summary
    timeline: Timeline

    def report_run(self, source: str = "") -> ReportRun:
        """The run as ``gpuscale.report`` takes it."""
        return ReportRun(self.label, self.timeline, self.summary, source)


@contextlib.contextmanager
def _progress(until: float, label: str, enabled: bool) -> Iterator[Any]:
    console = Console(stderr=True)
    if not enabled or not console.is_terminal or until < _PROGRESS_ABOVE_S:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[at]} of {task.fields[until]} simulated"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=until, at="0s", until=format_duration(until))
        yield lambda t: bar.update(task, completed=t, at=format_duration(t))


def run(
    inputs: SimulationInputs,
    *,
    load: LoadSpec,
    until: float,
    seed: int,
    label: str,
    meta: Mapping[str, Any],
    progress: bool = True,
) -> RunOutcome:
    """Simulate ``inputs`` under ``load`` up to ``until`` and summarise the run."""
    simulation = inputs.simulation(load=load, seed=seed)
    with _progress(until, label, progress) as tick:
        step = max(until / 200, 600.0)
        result = simulation.run(until, progress=tick, progress_every_s=step)
    stats = summarize(
        result.records,
        until=until,
        pools=result.header.pools,
        requests=result.requests,
        latency_targets=inputs.latency_targets,
    )
    header = Header(
        world="simulate",
        pools=result.header.pools,
        meta={
            "label": label,
            **meta,
            "seed": seed,
            "until": format_duration(until),
            "duration_s": until,
            "namespace": inputs.namespace,
            "gpuscale_version": __version__,
            "thresholds": inputs.thresholds(),
            "warnings": list(inputs.warnings),
            "approximations": list(APPROXIMATIONS),
        },
    )
    timeline = Timeline(header=header, records=result.records)
    return RunOutcome(
        label=label,
        inputs=inputs,
        result=result,
        stats=stats,
        summary=summary_table(stats),
        timeline=timeline,
    )


def write_timeline(path: Path, timeline: Timeline) -> None:
    """Write ``timeline`` as JSON Lines to ``path``, whole or not at all."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(
            "the directory does not exist", where=str(path), fix="create it or pick another path"
        )
    text = "".join(
        [encode_header(timeline.header) + "\n"]
        + [encode_record(record) + "\n" for record in timeline.records]
    )
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(
            f"cannot write the timeline ({exc.strerror})",
            where=str(path),
            fix="pick a writable path",
        ) from None


def summaries_table(outcomes: Sequence[RunOutcome], title: str) -> Table:
    """Several runs' summaries side by side."""
    return grid_table(
        side_by_side([o.label for o in outcomes], [o.summary for o in outcomes]), title
    )
