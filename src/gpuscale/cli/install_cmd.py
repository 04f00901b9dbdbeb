"""``gpuscale install``: kube-prometheus-stack and KEDA with Helm, idempotently.

``--dry-run`` prints the chart versions it would install, the helm commands and the
values files, and runs nothing (no helm needed). A real run needs ``helm`` on PATH and a
kubeconfig helm can use; the chart versions and helm's output go to stderr, the summary
to stdout. The Helm module (and the profile it reads) is
imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuscale.cli._options import ContextOption, KubeconfigOption, profile_option
from gpuscale.cli._profile_input import optional_profile
from gpuscale.cli.main import app
from gpuscale.errors import InputError
from gpuscale.kube import parse_duration

if TYPE_CHECKING:
    from gpuscale.live.helm import InstallSpec

__all__ = ["install_command"]


@app.command("install")
def install_command(
    *,
    profile: Annotated[
        Path | None,
        profile_option(
            "its prometheus and keda sections; default ./gpuscale.yaml if it exists, else "
            "the defaults"
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the helm commands and values; run nothing.")
    ] = False,
    context: ContextOption = None,
    kubeconfig: KubeconfigOption = None,
    timeout: Annotated[
        str, typer.Option("--timeout", help="How long helm waits for each release, e.g. 10m.")
    ] = "10m",
) -> None:
    """Install kube-prometheus-stack and KEDA (helm upgrade --install --wait)."""
    from gpuscale.live.helm import (  # noqa: PLC0415 - see module doc
        HelmRunner,
        chart_versions,
        find_helm,
        install_plan,
        install_summary,
        values_yaml,
    )

    spec = _spec(profile)
    try:
        seconds = parse_duration(timeout)
    except ValueError as exc:
        raise InputError(str(exc), where="--timeout", fix="e.g. --timeout 10m") from None
    spec = replace(spec, timeout=f"{int(seconds)}s")
    commands = install_plan(spec, kube_context=context, kubeconfig=kubeconfig)
    if dry_run:
        typer.echo(f"# {chart_versions(spec)}")
        for number, command in enumerate(commands, start=1):
            typer.echo(f"# {number}. {command.note}")
            typer.echo(command.shell())
        for command in commands:
            for name, doc in command.values.items():
                typer.echo(f"\n# --- {name}")
                typer.echo(values_yaml(doc).rstrip("\n"))
        return
    helm = find_helm()
    _check_kubeconfig(kubeconfig, context)
    print(f"gpuscale: note: {chart_versions(spec)}", file=sys.stderr)
    runner = HelmRunner(helm, on_output=lambda line: print(line, file=sys.stderr))
    runner.run_all(commands)
    for line in install_summary(spec):
        typer.echo(line)


def _check_kubeconfig(kubeconfig: str | None, context: str | None) -> None:
    """Refuse a kubeconfig helm could not use (missing, broken, no such context) before
    helm runs, with gpuscale's one-line errors; inside a pod without one, helm uses the
    service account."""
    import os  # noqa: PLC0415 - see module doc

    from gpuscale.live.kubeconfig import NoKubeconfigError, choose_kubeconfig  # noqa: PLC0415

    try:
        choose_kubeconfig(kubeconfig=kubeconfig, context=context)
    except NoKubeconfigError:
        if not os.environ.get("KUBERNETES_SERVICE_HOST"):
            raise


def _spec(profile: Path | None) -> InstallSpec:
    from gpuscale.live.helm import install_spec_from_profile  # noqa: PLC0415 - see module doc

    return install_spec_from_profile(optional_profile(profile)[0])
