"""``gpuscale verify``: check every link of the live scaling chain, read-only.

Prints a table (check, status, evidence, fix; :func:`checks_table`, the one place the
checks are rendered) on stdout, or JSON with ``-o json``; exits
1 when any check fails, 0 otherwise (warnings and skips do not fail). Sends only
``GET`` requests to the API server (and port-forwards to a Prometheus pod) and to
Prometheus; with ``provider: doks`` and a DigitalOcean token, one read of the cluster's
node pools. The Kubernetes and DigitalOcean clients, the manifests package and the
profile models are imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuscale.cli._options import (
    ContextOption,
    KubeconfigOption,
    NamespaceOption,
    OutputOption,
    check_output,
    profile_option,
)
from gpuscale.cli._profile_input import optional_profile
from gpuscale.cli.main import app
from gpuscale.errors import GpuscaleError, InputError

if TYPE_CHECKING:
    from gpuscale.live.verifier import PoolReader
    from gpuscale.live.verify import Check, PoolCapacity
    from gpuscale.profile import Profile

    _Pools = tuple[tuple[PoolCapacity, ...], str]

__all__ = ["VerifyRuntime", "checks_table", "runtime", "verify_command"]


@dataclass
class VerifyRuntime:
    """What the command takes from the outside world; tests replace it."""

    do_transport: Any = None
    """An azure-core ``HttpTransport`` for pydo; None for the default."""
    environ: Mapping[str, str] | None = None
    """None means ``os.environ``."""
    tty: bool | None = None
    """Force terminal output width (True) or the fixed 160 columns (False); None asks stdout."""

    def env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ


runtime = VerifyRuntime()


@app.command("verify")
def verify_command(
    manifests: Annotated[
        list[str],
        typer.Argument(help="Manifest files or directories (- for stdin).", show_default=False),
    ],
    *,
    namespace: NamespaceOption = None,
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus",
            help="Prometheus base URL (default: each trigger's serverAddress, forwarded).",
        ),
    ] = None,
    profile: Annotated[
        Path | None,
        profile_option(
            "node pools, KEDA's namespace; default: gpuscale.yaml beside the manifests (or "
            "one level up), else ./gpuscale.yaml if it exists"
        ),
    ] = None,
    output: OutputOption = "text",
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="DigitalOcean token file (else $DIGITALOCEAN_ACCESS_TOKEN), to read the "
            "DOKS node pools.",
        ),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Check every link of the scaling chain on the live cluster (read-only)."""
    from gpuscale.inputs import read_manifests  # noqa: PLC0415 - see module doc
    from gpuscale.live.kube import Kube, connect  # noqa: PLC0415 - see module doc
    from gpuscale.live.verifier import gather  # noqa: PLC0415 - see module doc
    from gpuscale.live.verify import summary, verify_checks  # noqa: PLC0415
    from gpuscale.live.watcher import open_prometheus  # noqa: PLC0415 - see module doc

    check_output(output)
    manifest_set = read_manifests(manifests, stdin=sys.stdin)
    loaded, source = optional_profile(profile, manifests)
    api, target = connect(kubeconfig=kubeconfig, context=context)
    kube = Kube(api, target)
    facts = gather(
        kube,
        manifest_set,
        profile=loaded,
        namespace=namespace,
        prometheus_url=prometheus,
        pools=_pool_reader(loaded, source, token_file),
        open_client=lambda url: open_prometheus(url, timeout_s=15),
    )
    checks = verify_checks(manifest_set, facts, namespace=namespace, prometheus_url=prometheus)
    # a check that could not read what it needed has not passed either
    failed = any(c.status in ("fail", "error") for c in checks)
    if output == "json":
        typer.echo(
            json.dumps(
                {
                    "ok": not failed,
                    "summary": summary(checks),
                    "checks": [c.as_dict() for c in checks],
                },
                indent=2,
            )
        )
    else:
        tty = sys.stdout.isatty() if runtime.tty is None else runtime.tty
        console = Console(highlight=False, width=None if tty else 160, no_color=not tty)
        console.print(checks_table(checks))
        console.print(summary(checks), markup=False)
    if failed:
        raise typer.Exit(1)


_STYLE = {
    "pass": "green",
    "fail": "bold red",
    "warn": "yellow",
    "skip": "dim",
    "error": "red",
}


def checks_table(checks: Sequence[Check]) -> Table:
    """The checks as a table: check (and what it is about), status, evidence, fix."""
    table = Table(show_lines=True, expand=False)
    for column in ("CHECK", "STATUS", "EVIDENCE", "FIX"):
        table.add_column(column, overflow="fold")
    for check in checks:
        name = Text(check.name)
        if check.subject:
            name.append(f"\n{check.subject}", style="dim")
        table.add_row(
            name,
            Text(check.status, style=_STYLE[check.status]),
            Text(check.evidence),
            Text(check.fix),
        )
    return table


def _pool_reader(
    profile: Profile, source: str | None, token_file: Path | None
) -> PoolReader | None:
    """Where the node pools come from: DigitalOcean when the provider is doks and a token
    is set, else the profile's pools; None without a profile."""
    if source is None:
        return None
    from gpuscale.live.verifier import profile_pools  # noqa: PLC0415 - see module doc

    def from_profile(
        nodes: Sequence[dict[str, Any]], why: str
    ) -> tuple[tuple[PoolCapacity, ...], str]:
        return profile_pools(profile, nodes), why

    if profile.cluster.provider != "doks":
        return lambda nodes: from_profile(nodes, f"the profile {source}")
    from gpuscale.cloud.client import read_token  # noqa: PLC0415 - see module doc

    try:
        token = read_token(token_file, runtime.env())
    except InputError:
        return lambda nodes: from_profile(
            nodes, f"the profile {source}; no DigitalOcean token to check it against DOKS"
        )

    def from_doks(nodes: Sequence[dict[str, Any]]) -> _Pools:
        from gpuscale.cloud.client import DigitalOcean, make_client  # noqa: PLC0415
        from gpuscale.cloud.ops import find_cluster  # noqa: PLC0415
        from gpuscale.live.verify import doks_pool  # noqa: PLC0415

        try:
            do = DigitalOcean(make_client(token, transport=runtime.do_transport))
            status = find_cluster(do, profile.cluster.name)
        except GpuscaleError as error:
            return from_profile(nodes, f"the profile {source}; DigitalOcean: {error.one_line()}")
        if status is None:
            return from_profile(
                nodes,
                f"the profile {source}; DigitalOcean has no cluster named {profile.cluster.name!r}",
            )
        pools = tuple(
            doks_pool(
                pool.name,
                pool.size,
                auto_scale=pool.auto_scale,
                min_nodes=pool.min_nodes,
                max_nodes=pool.max_nodes,
                count=pool.count,
                nodes=sum(pool.nodes.values()) or pool.count,
                catalogue=profile.catalogue,
            )
            for pool in status.pools
        )
        return pools, "DigitalOcean"

    return from_doks
