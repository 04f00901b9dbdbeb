"""``gpuscale render``: manifests from files, directories or stdin as one YAML stream.

For ``gpuscale render DIR | kubectl apply -f -``: loads everything (skipping the profile
``gpuscale.yaml`` in directories), validates it against the schemas (``--no-validate``
to skip), optionally fills unset namespaces, and prints one multi-document stream with a
stable key order. To print a fresh scaffold instead, use ``gpuscale init --stdout``.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from gpuscale.cli.main import app
from gpuscale.errors import ManifestError
from gpuscale.manifests import DEFAULT_KUBE_VERSION, load_paths, render, validate

__all__ = ["render_command"]


@app.command("render")
def render_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Files, directories (*.yaml, *.yml) or - for stdin.", show_default=False
        ),
    ],
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            help="Set metadata.namespace on objects that have none.",
            show_default=False,
        ),
    ] = None,
    no_validate: Annotated[
        bool, typer.Option("--no-validate", help="Print even if a schema check fails.")
    ] = False,
    kube_version: Annotated[
        str, typer.Option("--kube-version", help="Kubernetes schemas to validate against.")
    ] = DEFAULT_KUBE_VERSION,
) -> None:
    """Print manifests as one multi-document YAML stream for `kubectl apply -f -`."""
    manifests = load_paths(paths, stdin=sys.stdin)
    if not manifests:
        raise ManifestError(
            "no objects found", where=" ".join(paths), fix="check the paths hold manifests"
        )
    if not no_validate:
        problems = validate(manifests, kube_version=kube_version)
        errors = [p for p in problems if p.severity == "error"]
        for problem in problems:
            if problem.severity != "error":
                sys.stderr.write(f"gpuscale: warning: {problem.one_line()}\n")
        if errors:
            for problem in errors[1:]:
                sys.stderr.write(f"gpuscale: error: {problem.one_line()}\n")
            first = errors[0]
            raise ManifestError(
                f"{first.ref}: {first.message}"
                + (f" ({len(errors) - 1} more above)" if len(errors) > 1 else ""),
                where=str(first.location),
                fix=first.fix,
            )
    bodies: list[dict[str, Any]] = []
    for manifest in manifests:
        body = dict(manifest.body)
        if namespace and manifest.namespace is None:
            metadata = dict(body.get("metadata") or {})
            metadata["namespace"] = namespace
            body["metadata"] = metadata
        bodies.append(body)
    sys.stdout.write(render(bodies))
