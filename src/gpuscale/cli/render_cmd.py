"""``gpuscale render``: manifests from files, directories or stdin as one YAML stream.

For ``gpuscale render DIR | kubectl apply -f -``: loads everything (skipping the profile
``gpuscale.yaml`` in directories), refuses a set that defines one object twice (the same
API group, kind, namespace and name: ``kubectl apply`` would silently keep only the later
one; the error names both places), validates it against the schemas (``--no-validate``
to skip), optionally fills unset namespaces, and prints one multi-document stream with a
stable key order. Schema problems are printed one per line on stderr (``gpuscale: error:
file:line: ...``) and nothing goes to stdout; the exit code is then 2. To print a fresh
scaffold instead, use ``gpuscale init --stdout``. The YAML parser and jsonschema are
imported when the command runs; ``--help`` reads only the default Kubernetes version.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from gpuscale.cli.main import app
from gpuscale.errors import ManifestError
from gpuscale.manifests import DEFAULT_KUBE_VERSION

__all__ = ["render_command"]


@app.command("render")
def render_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH",
            help="Files, directories (*.yaml, *.yml) or - for stdin.",
            show_default=False,
        ),
    ],
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            metavar="NS",
            help="Set metadata.namespace on objects that have none.",
            show_default=False,
        ),
    ] = None,
    no_validate: Annotated[
        bool, typer.Option("--no-validate", help="Print even if a schema check fails.")
    ] = False,
    kube_version: Annotated[
        str,
        typer.Option(
            "--kube-version", metavar="VERSION", help="Kubernetes schemas to validate against."
        ),
    ] = DEFAULT_KUBE_VERSION,
) -> None:
    """Print manifests as one multi-document YAML stream for `kubectl apply -f -`.

    Validates every object first (exit 2 and nothing printed on an error), and refuses an
    object defined twice. Documentation: docs/commands/render.md.

    [bold]Examples[/bold]

      gpuscale render examples/tutorial-fixed | kubectl apply -f -
      gpuscale render k8s/ -n staging > staging.yaml
      helm template web ./chart | gpuscale render - --kube-version 1.31
    """
    from gpuscale.inputs import read_manifests  # noqa: PLC0415 - see module doc
    from gpuscale.manifests import render, validate  # noqa: PLC0415 - see module doc
    from gpuscale.manifests.names import check_namespace_flag  # noqa: PLC0415

    if namespace is not None:
        check_namespace_flag(namespace)
    manifests = read_manifests(paths, stdin=sys.stdin)
    if not manifests:
        raise ManifestError(
            "no objects found", where=" ".join(paths), fix="check the paths hold manifests"
        )
    duplicates = manifests.duplicates(default=namespace or "default")
    if duplicates:
        first, later = duplicates[0]
        more = f" (and {len(duplicates) - 1} more)" if len(duplicates) > 1 else ""
        raise ManifestError(
            f"{later.kind} {later.effective_namespace(namespace or 'default')}/{later.name} "
            f"is already defined at {first.source}; kubectl apply would keep only this later "
            f"definition{more}",
            where=str(later.line_of(("metadata", "name"))),
            fix="keep one definition: merge the two and delete the other",
        )
    if not no_validate:
        problems = validate(manifests, kube_version=kube_version)
        for problem in problems:
            sys.stderr.write(f"gpuscale: {problem.severity}: {problem.one_line()}\n")
        if any(problem.severity == "error" for problem in problems):
            raise typer.Exit(2)
    bodies: list[dict[str, Any]] = []
    for manifest in manifests:
        body = dict(manifest.body)
        if namespace and manifest.namespace is None:
            metadata = dict(body.get("metadata") or {})
            metadata["namespace"] = namespace
            body["metadata"] = metadata
        bodies.append(body)
    sys.stdout.write(render(bodies))
