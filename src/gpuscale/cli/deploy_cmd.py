"""``gpuscale deploy``: validate, lint, then server-side apply the manifests in dependency order.

Results go to stdout, one line per object as ``kubectl apply`` prints them (or JSON with
``-o json``); validation and lint findings, notes and errors to stderr.
``--dry-run=client`` prints the objects it would send as YAML, ready for
``kubectl apply -f -``, and contacts nothing; ``--dry-run=server`` sends every request
with ``dryRun=All`` so the API server (admission included) checks it and stores nothing.
The Kubernetes client, the manifests package (schemas) and the lint rules are imported
when the command runs, not when ``gpuscale`` starts or for ``--help``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuscale.cli._profile_input import optional_profile
from gpuscale.cli.main import app
from gpuscale.errors import GpuscaleError, InputError

if TYPE_CHECKING:
    from gpuscale.live.apply import ApplyResult
    from gpuscale.manifests import ManifestSet
    from gpuscale.profile import Profile

__all__ = ["DeployRuntime", "deploy_command", "runtime"]


@dataclass
class DeployRuntime:
    """The clock and sleep used while waiting for a new CRD to be served; tests replace them."""

    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


runtime = DeployRuntime()


def _lint_errors(
    manifest_set: ManifestSet, profile: Profile | None, namespace: str | None
) -> list[str]:
    """The error-level findings of ``gpuscale lint`` for these manifests, one line each.

    ``profile`` is None when the user gave none, so lint judges exactly as
    ``gpuscale lint`` without ``--profile`` would."""
    from gpuscale.lint import DEFAULT_NAMESPACE, LintOptions, Severity, run_lint  # noqa: PLC0415

    report = run_lint(manifest_set, profile, LintOptions(namespace=namespace or DEFAULT_NAMESPACE))
    return [
        f"{f.location.file}:{f.location.line}: {f.rule}: {f.message}"
        for f in report.findings
        if f.severity is Severity.ERROR
    ]


def kube_version(profile: Profile) -> str:
    """The Kubernetes minor version to validate against: the profile's cluster version
    when it names one (``1.33``, ``1.33.1-do.0``), else the default."""
    from gpuscale.manifests import DEFAULT_KUBE_VERSION  # noqa: PLC0415 - see module doc

    match = re.match(r"v?(\d+\.\d+)", profile.cluster.version)
    return match.group(1) if match else DEFAULT_KUBE_VERSION


def check_manifests(
    manifest_set: ManifestSet,
    profile: Profile,
    *,
    force: bool,
    namespace: str | None = None,
    profile_given: bool = True,
) -> None:
    """Print validation warnings, validation errors and lint errors on stderr; raise an
    :class:`InputError` when there are errors, unless ``force``."""
    from gpuscale.manifests import validate  # noqa: PLC0415 - see module doc

    problems = validate(manifest_set, kube_version=kube_version(profile))
    errors = [p.one_line() for p in problems if p.severity == "error"]
    errors += _lint_errors(manifest_set, profile if profile_given else None, namespace)
    for problem in problems:
        if problem.severity != "error":
            sys.stderr.write(f"warning: {problem.one_line()}\n")
    label = "ignored (--force)" if force else "error"
    for line in errors:
        sys.stderr.write(f"{label}: {line}\n")
    if errors and not force:
        count = len(errors)
        raise InputError(
            f"{count} problem{'s' if count > 1 else ''} in the manifests; nothing was applied",
            where=", ".join(manifest_set.files) or "manifests",
            fix="correct them (each is listed above with file:line), or pass --force to "
            "apply anyway",
        )


@app.command("deploy")
def deploy_command(
    manifests: Annotated[
        list[str],
        typer.Argument(help="Manifest files or directories (- for stdin).", show_default=False),
    ],
    *,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            help="Namespace for objects that name none (default: the context's).",
        ),
    ] = None,
    dry_run: Annotated[
        str | None,
        typer.Option(
            "--dry-run",
            help="client: print what would be sent, contact nothing; server: the API "
            "server checks every object and stores nothing.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Apply even when validation or lint finds errors.")
    ] = False,
    force_conflicts: Annotated[
        bool,
        typer.Option(
            "--force-conflicts",
            help="Take over fields another field manager (kubectl, helm) owns.",
        ),
    ] = False,
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            "-p",
            help="The profile (cluster.version picks the schemas); default ./gpuscale.yaml "
            "if it exists.",
        ),
    ] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text or json.")] = "text",
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="Kubeconfig file.")] = None,
    context: Annotated[str | None, typer.Option("--context", help="Kubeconfig context.")] = None,
) -> None:
    """Validate, lint, then server-side apply manifests in dependency order."""
    from gpuscale.inputs import read_manifests  # noqa: PLC0415 - see module doc

    if dry_run not in (None, "client", "server"):
        raise InputError(
            f"unknown dry-run mode {dry_run!r}", where="--dry-run", fix="use client or server"
        )
    if output not in ("text", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use text or json"
        )
    manifest_set = read_manifests(manifests, stdin=sys.stdin)
    loaded, profile_file = optional_profile(profile)
    check_manifests(
        manifest_set,
        loaded,
        force=force,
        namespace=namespace,
        profile_given=profile_file is not None,
    )
    if dry_run == "client":
        _client_dry_run(manifest_set, namespace, kubeconfig=kubeconfig, context=context)
        return
    from gpuscale.live.applier import Applier  # noqa: PLC0415 - see module doc
    from gpuscale.live.kube import Kube, connect  # noqa: PLC0415 - see module doc

    api, target = connect(kubeconfig=kubeconfig, context=context)
    applier = Applier(Kube(api, target), clock=runtime.clock, sleep=runtime.sleep)
    plan = applier.plan(manifest_set, namespace=namespace)

    def show(result: ApplyResult) -> None:
        if output == "text":
            typer.echo(result.line())

    results = applier.apply(
        plan, dry_run=dry_run == "server", force_conflicts=force_conflicts, on_result=show
    )
    if output == "json":
        typer.echo(json.dumps([r.as_dict() for r in results], indent=2))
    failed = [r for r in results if r.action == "failed"]
    if failed:
        for result in failed:
            sys.stderr.write(f"gpuscale: error: {result.detail}\n")
        raise typer.Exit(1)


def _client_dry_run(
    manifest_set: ManifestSet, namespace: str | None, *, kubeconfig: str | None, context: str | None
) -> None:
    from gpuscale.live.apply import CLUSTER_SCOPED_KINDS, client_objects  # noqa: PLC0415
    from gpuscale.live.kube import connect  # noqa: PLC0415 - see module doc
    from gpuscale.manifests import render  # noqa: PLC0415 - see module doc

    context_namespace = None
    try:
        context_namespace = connect(kubeconfig=kubeconfig, context=context)[1].namespace
    except GpuscaleError:
        unplaced = [
            m
            for m in manifest_set
            if not m.namespace and m.kind not in CLUSTER_SCOPED_KINDS and namespace is None
        ]
        if unplaced:
            sys.stderr.write(
                f"note: no usable kubeconfig; {unplaced[0].ref} and any other object without "
                "a namespace are printed without one\n"
            )
    objects = client_objects(manifest_set, flag=namespace, context=context_namespace)
    sys.stdout.write(render(objects))
    sys.stderr.write(
        f"client dry run: {len(objects)} object{'s' if len(objects) != 1 else ''} in apply "
        "order; nothing was sent\n"
    )
