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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
from gpuscale.errors import InputError

if TYPE_CHECKING:
    from gpuscale.live.apply import ApplyResult
    from gpuscale.manifests import ManifestSet
    from gpuscale.profile import Profile

__all__ = [
    "DeployRuntime",
    "check_manifests",
    "deploy_command",
    "runtime",
]


@dataclass
class DeployRuntime:
    """The clock and sleep used while waiting for a new CRD to be served; tests replace them."""

    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


runtime = DeployRuntime()


def check_manifests(
    manifest_set: ManifestSet, profile: Profile | None, *, force: bool, namespace: str
) -> None:
    """Lint the manifests as ``gpuscale lint`` does, with the one validator included
    (rules ``schema-invalid`` and ``scaledobject-invalid``: what the API server or KEDA
    would refuse, as ``render`` and ``simulate`` refuse it), with objects that name no
    namespace in ``namespace``. Each error is one ``gpuscale: error: file:line: rule:
    message (fix: ...)`` line on stderr, warnings ``gpuscale: warning: ...`` (errors too,
    marked ``(ignored: --force)``, under ``force``); with errors
    and without ``force`` a note says nothing was applied and the command exits 2, before
    anything is sent. ``profile`` is None when the user gave none, so lint judges exactly
    as ``gpuscale lint`` without ``--profile`` would (and checks schemas of the default
    Kubernetes version)."""
    from gpuscale.lint import LintOptions, Severity, run_lint  # noqa: PLC0415 - see module doc

    report = run_lint(manifest_set, profile, LintOptions(namespace=namespace, validate=True))
    errors = 0
    for finding in report.findings:
        if finding.severity not in (Severity.ERROR, Severity.WARNING):
            continue
        is_error = finding.severity is Severity.ERROR
        errors += is_error
        label = "error" if is_error and not force else "warning"
        fix = finding.fix.strip().removeprefix("# ")
        if "\n" in fix or not fix:
            fix = f"gpuscale lint {finding.location.file} shows the fix"
        tail = f" (fix: {fix})" if label == "error" else ""
        if is_error and force:
            tail = " (ignored: --force)"
        sys.stderr.write(
            f"gpuscale: {label}: {finding.location.file}:{finding.location.line}: "
            f"{finding.rule}: {' '.join(finding.message.split())}{tail}\n"
        )
    if errors and not force:
        sys.stderr.write(
            f"gpuscale: note: {errors} problem{'s' if errors > 1 else ''} in the manifests; "
            "nothing was applied (correct them, or pass --force to apply anyway)\n"
        )
        raise typer.Exit(2)


def _refuse_invalid(manifest_set: ManifestSet, profile: Profile | None) -> None:
    """Exit 2 on what the one validator refuses (:func:`gpuscale.manifests.validate`, as
    lint's ``schema-invalid`` reports it), before any connection: an object the API server
    or KEDA would refuse is never a reason to reach the cluster. The rest of lint, which
    judges objects in the namespace they land in, runs once the context is known."""
    from gpuscale.lint import LintOptions  # noqa: PLC0415 - see module doc
    from gpuscale.lint._run import schema_version  # noqa: PLC0415
    from gpuscale.manifests import format_path, is_templated, validate  # noqa: PLC0415

    version = schema_version(LintOptions(validate=True), profile)
    errors = [
        (manifest, problem)
        for manifest in manifest_set
        for problem in validate(manifest, kube_version=version)
        if problem.severity == "error" and not is_templated(manifest.get(problem.path))
    ]
    for _, problem in errors:
        sys.stderr.write(
            f"gpuscale: error: {problem.location.file}:{problem.location.line}: "
            f"schema-invalid: {format_path(problem.path)}: "
            f"{' '.join(problem.message.split())} (fix: {problem.fix})\n"
        )
    if errors:
        count = len(errors)
        sys.stderr.write(
            f"gpuscale: note: {count} problem{'s' if count > 1 else ''} in the manifests; "
            "nothing was applied and the cluster was not contacted (correct them, or pass "
            "--force to apply anyway)\n"
        )
        raise typer.Exit(2)


@app.command("deploy")
def deploy_command(
    manifests: Annotated[
        list[str],
        typer.Argument(help="Manifest files or directories (- for stdin).", show_default=False),
    ],
    *,
    namespace: NamespaceOption = None,
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
        profile_option(
            "cluster.version picks the schemas; default: gpuscale.yaml beside the manifests "
            "(or one level up), else ./gpuscale.yaml if it exists"
        ),
    ] = None,
    output: OutputOption = "text",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Validate, lint, then server-side apply manifests in dependency order."""
    from gpuscale.inputs import read_manifests  # noqa: PLC0415 - see module doc

    if dry_run not in (None, "client", "server"):
        raise InputError(
            f"unknown dry-run mode {dry_run!r}", where="--dry-run", fix="use client or server"
        )
    check_output(output)
    manifest_set = read_manifests(manifests, stdin=sys.stdin)
    loaded, profile_file = optional_profile(profile, manifests)
    lint_profile = loaded if profile_file is not None else None
    if dry_run == "client":
        from gpuscale.live.kube import context_namespace  # noqa: PLC0415 - see module doc

        in_context = (
            None if namespace else context_namespace(kubeconfig=kubeconfig, context=context)
        )
        check_manifests(
            manifest_set, lint_profile, force=force, namespace=namespace or in_context or "default"
        )
        _client_dry_run(manifest_set, namespace, in_context)
        return
    from gpuscale.live.applier import Applier  # noqa: PLC0415 - see module doc
    from gpuscale.live.kube import Kube, connect  # noqa: PLC0415 - see module doc

    if not force:
        _refuse_invalid(manifest_set, lint_profile)
    api, target = connect(kubeconfig=kubeconfig, context=context)
    check_manifests(
        manifest_set, lint_profile, force=force, namespace=namespace or target.namespace
    )
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
    manifest_set: ManifestSet, namespace: str | None, in_context: str | None
) -> None:
    """Print the objects as they would be sent; ``in_context`` is the kubeconfig
    context's namespace (None without a kubeconfig, or with ``--namespace``)."""
    from gpuscale.live.apply import CLUSTER_SCOPED_KINDS, client_objects  # noqa: PLC0415
    from gpuscale.manifests import render  # noqa: PLC0415 - see module doc

    if namespace is None and in_context is None:
        unplaced = [
            m for m in manifest_set if not m.namespace and m.kind not in CLUSTER_SCOPED_KINDS
        ]
        if unplaced:
            sys.stderr.write(
                f"note: no kubeconfig; {unplaced[0].ref} and any other object without "
                "a namespace are printed without one (linted as in namespace default)\n"
            )
    objects = client_objects(manifest_set, flag=namespace, context=in_context)
    sys.stdout.write(render(objects))
    sys.stderr.write(
        f"client dry run: {len(objects)} object{'s' if len(objects) != 1 else ''} in apply "
        "order; nothing was sent\n"
    )
