"""What ``gpuscale simulate`` and ``gpuscale demo`` share: running a simulation with a
progress bar, its timeline header, writing the timeline file, and the summary
table on the terminal (the summary itself is :mod:`gpuscale.report.summary`).

The I/O edge around ``gpuscale.sim``: files are written whole (a temporary name renamed
into place) or not at all; progress goes to stderr. rich is imported when something is
printed with it (a table, a progress bar), so ``simulate -o json`` does without it.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscale import __version__
from gpuscale._files import write_atomically
from gpuscale.cli import _gc
from gpuscale.errors import InputError
from gpuscale.kube import format_duration
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

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

__all__ = [
    "RunOutcome",
    "console",
    "run",
    "write_timeline",
]

_QUIET_FOR_S = 2.0
"""Wall seconds a run may take before it shows progress."""
_LINE_EVERY_S = 10.0
"""Wall seconds between plain progress lines when stderr is not a terminal."""


def console() -> Console:
    """stdout for tables: the terminal's width, or 120 columns when piped."""
    from rich.console import Console  # noqa: PLC0415 - see module doc

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


class _Progress:
    """Progress of a run on stderr, fed by the simulation's ``progress(t)`` callback.

    The engine reads no clock; this reads the wall clock. Nothing shows for a run that ends
    within :data:`_QUIET_FOR_S`; after that, a transient rich bar on a terminal, else a
    ``gpuscale: progress:`` line every :data:`_LINE_EVERY_S` (logs and CI keep them)."""

    def __init__(self, until: float, label: str, clock: Callable[[], float]) -> None:
        self.until = until
        self.label = label
        self.clock = clock
        self.started = clock()
        self.last_line = self.started
        self.console: Console | None = None
        self.bar: Progress | None = None
        self.task: Any = None

    def __call__(self, t: float) -> None:
        now = self.clock()
        if now - self.started < _QUIET_FOR_S:
            return
        done = format_duration(t)
        if self.console is None:
            from rich.console import Console  # noqa: PLC0415 - see module doc

            self.console = Console(stderr=True)
        if self.console.is_terminal:
            if self.bar is None:
                from rich.progress import (  # noqa: PLC0415 - see module doc
                    BarColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                )

                self.bar = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    TextColumn("{task.fields[at]} of {task.fields[until]} simulated"),
                    TimeElapsedColumn(),
                    console=self.console,
                    transient=True,
                )
                self.bar.start()
                self.task = self.bar.add_task(
                    self.label, total=self.until, at="0s", until=format_duration(self.until)
                )
            self.bar.update(self.task, completed=t, at=done)
            return
        if now - self.last_line >= _LINE_EVERY_S:
            self.last_line = now
            share = 100 * t / self.until if self.until > 0 else 100.0
            sys.stderr.write(
                f"gpuscale: progress: {self.label}: {done} of {format_duration(self.until)} "
                f"simulated ({share:.0f}%), {now - self.started:.0f}s elapsed\n"
            )
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@contextlib.contextmanager
def _progress(
    until: float, label: str, enabled: bool, clock: Callable[[], float]
) -> Iterator[Callable[[float], None] | None]:
    if not enabled:
        yield None
        return
    reporter = _Progress(until, label, clock)
    try:
        yield reporter
    finally:
        reporter.close()


def run(
    inputs: SimulationInputs,
    *,
    load: LoadSpec,
    until: float,
    seed: int,
    label: str,
    meta: Mapping[str, Any],
    progress: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> RunOutcome:
    """Simulate ``inputs`` under ``load`` up to ``until`` and summarise the run; with
    ``progress``, a run that takes more than a few seconds of ``clock`` shows it on stderr."""
    simulation = inputs.simulation(load=load, seed=seed)
    _gc.resume()  # start-up is over (gpuscale.cli._gc)
    with _progress(until, label, progress, clock) as tick:
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
    from gpuscale.cli._tables import grid_table  # noqa: PLC0415 - rich; see module doc

    return grid_table(
        side_by_side([o.label for o in outcomes], [o.summary for o in outcomes]), title
    )
