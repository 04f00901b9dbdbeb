"""``gpuscale install``: kube-prometheus-stack and KEDA with Helm, idempotently.

``--dry-run`` prints the helm commands and the values files and runs nothing (no helm
needed). A real run needs ``helm`` on PATH and a kubeconfig helm can use; helm's output
goes to stderr, the summary to stdout. The Helm module (and the profile it reads) is
imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuscale.cli._profile_input import optional_profile
from gpuscale.cli.main import app
from gpuscale.errors import InputError
from gpuscale.units import parse_duration

if TYPE_CHECKING:
    from gpuscale.live.helm import InstallSpec

__all__ = ["install_command"]


@app.command("install")
def install_command(
    *,
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            "-p",
            help="The profile (its prometheus and keda sections); default ./gpuscale.yaml "
            "if it exists, else the defaults.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the helm commands and values; run nothing.")
    ] = False,
    kube_context: Annotated[
        str | None, typer.Option("--kube-context", help="The kubeconfig context helm uses.")
    ] = None,
    kubeconfig: Annotated[
        str | None, typer.Option("--kubeconfig", help="The kubeconfig file helm uses.")
    ] = None,
    timeout: Annotated[
        str, typer.Option("--timeout", help="How long helm waits for each release, e.g. 10m.")
    ] = "10m",
) -> None:
    """Install kube-prometheus-stack and KEDA (helm upgrade --install --wait)."""
    from gpuscale.live.helm import (  # noqa: PLC0415 - see module doc
        HelmRunner,
        find_helm,
        install_plan,
        values_yaml,
    )

    spec = _spec(profile)
    try:
        seconds = parse_duration(timeout)
    except ValueError as exc:
        raise InputError(str(exc), where="--timeout", fix="e.g. --timeout 10m") from None
    spec = replace(spec, timeout=f"{int(seconds)}s")
    commands = install_plan(spec, kube_context=kube_context, kubeconfig=kubeconfig)
    if dry_run:
        for number, command in enumerate(commands, start=1):
            typer.echo(f"# {number}. {command.note}")
            typer.echo(command.shell())
        for command in commands:
            for name, doc in command.values.items():
                typer.echo(f"\n# --- {name}")
                typer.echo(values_yaml(doc).rstrip("\n"))
        return
    runner = HelmRunner(find_helm(), on_output=lambda line: print(line, file=sys.stderr))
    runner.run_all(commands)
    typer.echo(
        f"installed kube-prometheus-stack (release {spec.prometheus_release}, namespace "
        f"{spec.prometheus_namespace}) and KEDA (release {spec.keda_release}, namespace "
        f"{spec.keda_namespace}); both ready"
    )
    typer.echo(f"Prometheus address for ScaledObject triggers: {spec.prometheus_url}")
    typer.echo(
        "ServiceMonitors: Prometheus selects every ServiceMonitor in every namespace "
        "(serviceMonitorSelectorNilUsesHelmValues: false); no release label needed"
    )


def _spec(profile: Path | None) -> InstallSpec:
    from gpuscale.live.helm import install_spec_from_profile  # noqa: PLC0415 - see module doc

    return install_spec_from_profile(optional_profile(profile)[0])
