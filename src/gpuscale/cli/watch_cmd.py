"""``gpuscale watch``: the live view of a workload's scaling chain, and its timeline.

On a terminal the view redraws every ``--interval``; piped, one line per change goes to
stdout. ``--timeline FILE`` writes the same JSON Lines format as ``gpuscale simulate``
(header ``world: live``), one record per change. ``--once`` prints one view and exits.
The Kubernetes client is imported when the command runs, not when ``gpuscale`` starts.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.live import Live

from gpuscale import __version__
from gpuscale.cli._options import (
    ContextOption,
    KubeconfigOption,
    WorkloadNamespaceOption,
    profile_option,
)
from gpuscale.cli._profile_input import optional_profile
from gpuscale.cli.main import app
from gpuscale.errors import InputError
from gpuscale.kube import parse_duration

if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuscale.live.watch import Snapshot, WatchState
    from gpuscale.timeline import Record

__all__ = ["WatchRuntime", "runtime", "watch_command"]


@dataclass
class WatchRuntime:
    """The clock, sleep and wall time the command uses; tests replace them."""

    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    tty: bool | None = None
    """Force the live view on (True) or the line output (False); None asks stdout."""


runtime = WatchRuntime()


@app.command("watch")
def watch_command(
    *,
    deployment: Annotated[
        str | None,
        typer.Option("--deployment", "-d", help="The Deployment (default: the only one)."),
    ] = None,
    namespace: WorkloadNamespaceOption = None,
    timeline: Annotated[
        Path | None, typer.Option("--timeline", help="Write the timeline (JSON Lines) here.")
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus", help="Prometheus base URL (default: the trigger's, forwarded)."
        ),
    ] = None,
    interval: Annotated[str, typer.Option("--interval", help="Time between reads.")] = "2s",
    for_: Annotated[
        str | None, typer.Option("--for", help="Stop after this long (default: until Ctrl-C).")
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="Print one view and exit.")] = False,
    profile: Annotated[
        Path | None,
        profile_option(
            "node pool prices for the cost column; default ./gpuscale.yaml if it exists, "
            "else the cost column stays at 0"
        ),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Watch replicas, pods, nodes, the ScaledObject, the HPA, the query and events."""
    from gpuscale.cli.load_cmd import _deployment_name  # noqa: PLC0415 - shared lookup
    from gpuscale.live.kube import Kube, connect  # noqa: PLC0415 - see module doc
    from gpuscale.live.watch import pools_from_profile, render  # noqa: PLC0415
    from gpuscale.live.watcher import TimelineWriter, Watcher, run_watch  # noqa: PLC0415
    from gpuscale.timeline import Header  # noqa: PLC0415

    every = _duration(interval, "--interval")
    if every <= 0:
        raise InputError("must be more than 0", where="--interval", fix="e.g. --interval 2s")
    duration = _duration(for_, "--for") if for_ is not None else None
    loaded, source = optional_profile(profile)
    pools = pools_from_profile(loaded) if source is not None else {}
    prices = {name: p["price_per_hour"] for name, p in pools.items()}
    api, target = connect(kubeconfig=kubeconfig, context=context)
    kube = Kube(api, target)
    ns = namespace or target.namespace
    name = _deployment_name(kube, ns, deployment)
    tty = sys.stdout.isatty() if runtime.tty is None else runtime.tty
    console = Console(highlight=False, soft_wrap=not tty, width=None if tty else 120)
    if timeline is not None and not (timeline.parent if str(timeline.parent) else Path()).is_dir():
        raise InputError(
            "the directory does not exist",
            where=str(timeline),
            fix="create it or pick another path",
        )
    writer = None
    try:
        if timeline is not None:
            path = timeline
            writer = TimelineWriter(
                lambda: path.open("w", encoding="utf-8"),
                Header(
                    world="live",
                    started_at=runtime.now().isoformat(timespec="seconds"),
                    pools=pools,
                    meta={
                        "deployment": f"{ns}/{name}",
                        "context": target.context,
                        "interval_seconds": every,
                        "gpuscale": __version__,
                    },
                ),
            )
        watcher = Watcher(kube, ns, name, prometheus=prometheus)
        try:
            if once or not tty:
                _plain(
                    watcher, writer, prices, every,
                    duration=duration, console=console, once=once, render=render,
                )  # fmt: skip
            else:
                with Live(console=console, auto_refresh=False, transient=False) as live:

                    def tick(snap: Snapshot, record: Record | None, state: WatchState) -> None:
                        if record is not None and writer is not None:
                            writer.write(record)
                        live.update(render(snap, state), refresh=True)

                    run_watch(
                        watcher, clock=runtime.clock, sleep=runtime.sleep, interval=every,
                        prices=prices, on_tick=tick, duration=duration,
                    )  # fmt: skip
        finally:
            watcher.close()
    finally:
        if writer is not None:
            writer.close()


def _plain(
    watcher: Any,
    writer: Any,
    prices: dict[str, float],
    every: float,
    *,
    duration: float | None,
    console: Console,
    once: bool,
    render: Any,
) -> None:
    from gpuscale.live.watcher import run_watch  # noqa: PLC0415 - see module doc

    def tick(snap: Snapshot, record: Record | None, state: WatchState) -> None:
        if record is not None and writer is not None:
            writer.write(record)
        if once:
            console.print(render(snap, state))
        elif record is not None:
            console.print(_line(snap, record), markup=False, highlight=False)

    run_watch(
        watcher, clock=runtime.clock, sleep=runtime.sleep, interval=every, prices=prices,
        on_tick=tick, duration=duration, ticks=1 if once else None,
    )  # fmt: skip


def _line(snap: Snapshot, record: Record) -> str:
    workload = record.workloads[0]
    pods = " ".join(f"{k}={v}" for k, v in workload.pods.items()) or "none"
    nodes = " ".join(
        f"{pool}:" + ",".join(f"{s}={n}" for s, n in states.items())
        for pool, states in record.nodes.items()
    )
    metrics = " ".join(f"{k}={'-' if v is None else f'{v:g}'}" for k, v in workload.metrics.items())
    text = (
        f"t+{record.t:g}s spec={workload.spec} ready={workload.ready} "
        f"desired={'-' if workload.desired is None else workload.desired} pods[{pods}] "
        f"nodes[{nodes or 'none'}] {metrics} cost=${record.cost_usd:.2f}"
    )
    for decision in record.decisions:
        text += f"\n  {decision.controller} {decision.action} {decision.reason} {decision.target}"
        if decision.detail:
            text += f": {decision.detail}"
    for error in snap.errors:
        text += f"\n  read failed: {error}"
    return text


def _duration(text: str, flag: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InputError(str(exc), where=flag, fix="e.g. 2s, 30s or 10m") from None
