"""``gpuscale cluster create|status|kubeconfig|enable-gpu-metrics|delete``: DOKS via pydo.

Results go to stdout (text, or JSON with ``-o json``); progress, prices and warnings to
stderr. ``--dry-run`` prints the API requests as a JSON array and sends nothing (it
needs no token). The token comes from ``DIGITALOCEAN_ACCESS_TOKEN`` or ``--token-file``.

The heavy clients (pydo, azure-core), the profile models and rich's progress bar are
imported when a command runs, not when ``gpuscale`` starts or for ``--help``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuscale.cli._options import OutputOption, check_output, profile_option
from gpuscale.cli.main import CommandGroup, app
from gpuscale.errors import InputError
from gpuscale.kube import format_duration, parse_duration

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from gpuscale.cloud.api import ApiCall
    from gpuscale.cloud.client import DigitalOcean
    from gpuscale.cloud.ops import DeletePlan
    from gpuscale.cloud.plan import ClusterStatus, CreateCheck
    from gpuscale.cloud.spec import DoksCluster

__all__ = [
    "CloudRuntime",
    "cluster_app",
    "create_command",
    "delete_command",
    "enable_gpu_metrics_command",
    "kubeconfig_command",
    "runtime",
    "status_command",
]


@dataclass
class CloudRuntime:
    """What the commands take from the outside world; tests replace it."""

    transport: Any = None
    """An azure-core ``HttpTransport`` for pydo; None for the default (requests)."""
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    environ: Mapping[str, str] | None = None
    """None means ``os.environ``."""
    home: Path | None = None
    """None means ``Path.home()``."""
    poll_interval: float = 10.0
    endpoint: str | None = None
    """The API's base URL; None for ``https://api.digitalocean.com`` (tests point it at
    a server on loopback)."""

    def env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ


runtime = CloudRuntime()

cluster_app = typer.Typer(
    cls=CommandGroup,
    name="cluster",
    help="Create, inspect and delete the DOKS cluster the profile describes (DigitalOcean).",
    no_args_is_help=True,
)
app.add_typer(cluster_app, name="cluster")

_ProfileOption = Annotated[Path, profile_option("its cluster and node_pools keys")]
_DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Print the API requests as JSON (token redacted); send nothing."
    ),
]
_TokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        help="Read the API token from this file instead of $DIGITALOCEAN_ACCESS_TOKEN.",
    ),
]
_PROFILE = Path("gpuscale.yaml")


def _stderr() -> Console:
    from rich.console import Console  # noqa: PLC0415 - see module doc

    return Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


def _spec(profile: Path) -> DoksCluster:
    from gpuscale.cloud.spec import cluster_spec_from_profile  # noqa: PLC0415 - see module doc
    from gpuscale.inputs import read_profile  # noqa: PLC0415 - see module doc

    return cluster_spec_from_profile(read_profile(profile), source=str(profile))


def _connect(token_file: Path | None) -> DigitalOcean:
    from gpuscale.cloud.client import (  # noqa: PLC0415 - see module doc
        DigitalOcean,
        make_client,
        read_token,
    )

    token = read_token(token_file, runtime.env())
    from gpuscale.cloud.api import ENDPOINT  # noqa: PLC0415 - see module doc

    client = make_client(token, transport=runtime.transport, endpoint=runtime.endpoint or ENDPOINT)
    return DigitalOcean(client, clock=runtime.clock)


def _print_plan(calls: Sequence[ApiCall]) -> None:
    typer.echo(json.dumps([c.describe() for c in calls], indent=2))


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}/h"


class _RichReporter:
    """Prices, notes and a progress bar on stderr."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: Any = None

    def checked(self, check: CreateCheck) -> None:
        for warning in check.warnings:
            self.console.print(f"warning: {warning}")
        for row in check.prices:
            self.console.print(
                f"pool {row.pool}: {row.size} at {_money(row.price_hourly)} per node; "
                f"at most {row.largest_count} nodes = {_money(row.max_per_hour)}"
            )
        self.console.print(f"all pools at their largest: {_money(check.max_per_hour)}")

    def progress(self, status: ClusterStatus, elapsed: float) -> None:
        total = 1 + status.nodes_expected
        done = (1 if status.running else 0) + min(status.nodes_running, status.nodes_expected)
        text = (
            f"{status.name}: {status.state}, "
            f"{status.nodes_running}/{status.nodes_expected} nodes running"
        )
        if self._progress is None:
            from rich.progress import (  # noqa: PLC0415 - see module doc
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(text, total=total)
        self._progress.update(self._task, description=text, total=total, completed=done)

    def note(self, text: str) -> None:
        self.console.print(text)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _status_lines(status: ClusterStatus, cost: float | None = None) -> list[str]:
    lines = [
        f"cluster {status.name}: {status.state} (id {status.id}, region {status.region}, "
        f"version {status.version})"
    ]
    if status.endpoint:
        lines.append(f"  endpoint {status.endpoint}")
    for pool in status.pools:
        nodes = ", ".join(f"{n} {state}" for state, n in sorted(pool.nodes.items())) or "no nodes"
        scale = (
            f"autoscaled {pool.min_nodes}..{pool.max_nodes}"
            if pool.auto_scale
            else f"fixed {pool.count}"
        )
        lines.append(f"  pool {pool.name}: {pool.size}, {scale}; {nodes}")
    addons = [
        f"{name} {'on' if on else 'off'}" for name, on in status.addons.items() if on is not None
    ]
    if addons:
        lines.append(f"  add-ons: {', '.join(addons)}")
    if cost is not None:
        lines.append(f"  nodes now cost {_money(cost)}")
    return lines


@cluster_app.command("create")
def create_command(
    *,
    profile: _ProfileOption = _PROFILE,
    dry_run: _DryRunOption = False,
    token_file: _TokenFileOption = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait until the cluster runs.")
    ] = True,
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait, e.g. 30m.")] = "30m",
    output: OutputOption = "text",
) -> None:
    """Create the cluster (idempotent), wait for it, enable the GPU add-ons."""
    from gpuscale.cloud import ops  # noqa: PLC0415 - see module doc

    check_output(output)
    spec = _spec(profile)
    seconds = _duration(timeout, "--timeout")
    if dry_run:
        _print_plan(ops.plan_create(spec))
        return
    do = _connect(token_file)
    reporter = _RichReporter(_stderr())
    try:
        outcome = ops.create(
            do,
            spec,
            reporter=reporter,
            clock=runtime.clock,
            sleep=runtime.sleep,
            source=str(profile),
            wait=wait,
            timeout=seconds,
            poll_interval=runtime.poll_interval,
        )
    finally:
        reporter.close()
    if output == "json":
        doc: dict[str, Any] = {
            "created": outcome.created,
            "metrics_update_sent": outcome.metrics_update_sent,
            "cluster": outcome.status.as_dict(),
        }
        if outcome.check is not None:
            doc["prices"] = [
                {
                    "pool": r.pool,
                    "size": r.size,
                    "price_hourly": r.price_hourly,
                    "largest_count": r.largest_count,
                    "max_per_hour": r.max_per_hour,
                }
                for r in outcome.check.prices
            ]
            doc["max_per_hour"] = outcome.check.max_per_hour
            doc["warnings"] = list(outcome.check.warnings)
        typer.echo(json.dumps(doc, indent=2))
        return
    for line in _status_lines(outcome.status):
        typer.echo(line)
    if outcome.metrics_update_sent:
        typer.echo("  enabled the AMD metrics exporter add-on with a separate update")
    typer.echo(f"next: gpuscale cluster kubeconfig --profile {profile} --merge")


@cluster_app.command("status")
def status_command(
    *,
    profile: _ProfileOption = _PROFILE,
    dry_run: _DryRunOption = False,
    token_file: _TokenFileOption = None,
    output: OutputOption = "text",
) -> None:
    """Show the cluster's state, pools, nodes, add-ons and what its nodes cost now."""
    from gpuscale.cloud import ops  # noqa: PLC0415 - see module doc
    from gpuscale.cloud.plan import hourly_cost  # noqa: PLC0415 - see module doc

    check_output(output)
    spec = _spec(profile)
    if dry_run:
        _print_plan(ops.plan_status(spec))
        return
    do = _connect(token_file)
    status = ops.require_cluster(do, spec, source=str(profile))
    cost = hourly_cost(status, ops.fetch_sizes(do))
    if output == "json":
        doc = status.as_dict()
        doc["cost_per_hour_now"] = cost
        typer.echo(json.dumps(doc, indent=2))
        return
    for line in _status_lines(status, cost):
        typer.echo(line)


@cluster_app.command("kubeconfig")
def kubeconfig_command(
    *,
    profile: _ProfileOption = _PROFILE,
    dry_run: _DryRunOption = False,
    token_file: _TokenFileOption = None,
    output_file: Annotated[
        Path | None,
        typer.Option(
            "--output-file", "-f", help="Write a kubeconfig for this cluster only to FILE."
        ),
    ] = None,
    merge: Annotated[
        bool,
        typer.Option("--merge", help="Merge into $KUBECONFIG's first file (else ~/.kube/config)."),
    ] = False,
    expiry: Annotated[
        str, typer.Option("--expiry", help="Credential lifetime, e.g. 1h, 24h, 7d.")
    ] = "24h",
    set_current: Annotated[
        bool,
        typer.Option(
            "--set-current/--no-set-current", help="Make it the current context when merging."
        ),
    ] = True,
) -> None:
    """Write a kubeconfig from short-lived credentials (mode 0600; never printed)."""
    from gpuscale.cloud import ops  # noqa: PLC0415 - see module doc
    from gpuscale.cloud.kubeconfig import (  # noqa: PLC0415 - see module doc
        build_kubeconfig,
        default_kubeconfig_path,
        dump_yaml,
        merge_kubeconfig,
        read_kubeconfig,
        write_private,
    )

    if (output_file is None) == (not merge):
        raise InputError(
            "say where the kubeconfig goes",
            where="--output-file/--merge",
            fix="pass --output-file FILE, or --merge to add it to your KUBECONFIG",
        )
    seconds = int(_duration(expiry, "--expiry"))
    if seconds < 1:
        raise InputError(
            "the credentials must live at least 1s", where="--expiry", fix="e.g. --expiry 24h"
        )
    spec = _spec(profile)
    if dry_run:
        _print_plan(ops.plan_kubeconfig(spec, seconds))
        return
    do = _connect(token_file)
    status, credentials = ops.get_credentials(do, spec, seconds, source=str(profile))
    config = build_kubeconfig(status.name, status.region, credentials)
    if output_file is not None:
        target = output_file
        document = config
    else:
        target = default_kubeconfig_path(runtime.env(), runtime.home or Path.home())
        document = merge_kubeconfig(read_kubeconfig(target), config, set_current=set_current)
    write_private(target, dump_yaml(document))
    expires = credentials.get("expires_at") or f"in {format_duration(seconds)}"
    typer.echo(
        f"wrote context {config['current-context']} to {target} (mode 0600); "
        f"credentials expire {expires}"
    )


@cluster_app.command("enable-gpu-metrics")
def enable_gpu_metrics_command(
    *,
    profile: _ProfileOption = _PROFILE,
    dry_run: _DryRunOption = False,
    token_file: _TokenFileOption = None,
) -> None:
    """Turn on the AMD Device Metrics Exporter add-on of an existing cluster."""
    from gpuscale.cloud import ops  # noqa: PLC0415 - see module doc

    spec = _spec(profile)
    if "amd" not in spec.vendors:
        raise InputError(
            "no node pool has AMD GPUs (gpu: amd); DOKS's metrics exporter add-on is AMD's",
            where=f"{profile}: node_pools",
            fix="for NVIDIA pools install NVIDIA's dcgm-exporter (docs/walkthrough-doks.md)",
        )
    if dry_run:
        _print_plan(ops.plan_enable_gpu_metrics(spec))
        return
    do = _connect(token_file)
    status, changed = ops.enable_gpu_metrics(do, spec, source=str(profile))
    if changed:
        typer.echo(f"cluster {status.name}: AMD metrics exporter add-on enabled")
    else:
        typer.echo(f"cluster {status.name}: AMD metrics exporter add-on was already enabled")


@cluster_app.command("delete")
def delete_command(
    *,
    profile: _ProfileOption = _PROFILE,
    dry_run: _DryRunOption = False,
    token_file: _TokenFileOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    with_resources: Annotated[
        bool,
        typer.Option(
            "--with-associated-resources",
            help="Also delete the load balancers, volumes and snapshots the cluster created.",
        ),
    ] = False,
) -> None:
    """Delete the cluster after listing what goes (asks unless --yes)."""
    from gpuscale.cloud import ops  # noqa: PLC0415 - see module doc

    spec = _spec(profile)
    if dry_run:
        _print_plan(ops.plan_delete(spec, with_resources=with_resources))
        return
    do = _connect(token_file)
    console = _stderr()

    def confirm(plan: DeletePlan) -> bool:
        console.print("will delete:")
        for line in _status_lines(plan.status):
            console.print(line)
        for kind, items in plan.associated.items():
            names = ", ".join(str(i.get("name") or i.get("id")) for i in items)
            if not names:
                continue
            verb = "delete" if with_resources else "keep (still billed)"
            console.print(f"  {kind}: {names} -> {verb}")
        if yes:
            return True
        return typer.confirm(f"Delete cluster {plan.status.name}?", default=False, err=True)

    plan = ops.delete(do, spec, confirm=confirm, with_resources=with_resources, source=str(profile))
    if plan is None:
        typer.echo("not confirmed; nothing deleted", err=True)
        raise typer.Exit(1)
    typer.echo(f"cluster {plan.status.name} (id {plan.status.id}) is being deleted")


def _duration(text: str, flag: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InputError(
            str(exc), where=flag, fix="write a duration such as 30s, 10m or 24h"
        ) from None
