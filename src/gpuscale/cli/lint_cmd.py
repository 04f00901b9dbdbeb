"""``gpuscale lint PATH...``: find autoscaling mistakes in manifests, with the fix.

The command is the I/O edge of :mod:`gpuscale.lint`: it loads the manifests with
:func:`gpuscale.inputs.read_manifests` (files, directories searched for ``*.yaml`` and
``*.yml`` with the profile ``gpuscale.yaml`` skipped, and ``-`` for standard input), the
profile by the rule every command shares (:mod:`gpuscale.cli._profile_input`:
``--profile``, else a ``gpuscale.yaml`` beside the manifests or one level up, else
``./gpuscale.yaml``, else none), calls :func:`gpuscale.lint.run_lint` with
schema validation on, and prints the report as text, JSON or SARIF. Exit codes: 0 when no
finding is at or above ``--fail-on`` (default ``error``), 1 when one is, 2 for usage or
input errors (a bad flag, a missing file, a manifest or profile that does not parse, no
objects to lint, selected rules none of which can run, a ``--select`` that names no rule,
a ``--namespace`` that is not a DNS-1123 label, manifests given with ``--list`` or
``--explain``, which print the catalogue as text or JSON and lint nothing).

The option types (:class:`~gpuscale.lint.Severity`) come from two small modules of
:mod:`gpuscale.lint`; the rules, the manifest loader and the profile are imported when
the command runs, so ``gpuscale lint --help`` starts without them.
"""

from __future__ import annotations

import enum
import gc
import sys
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from gpuscale.cli.main import app
from gpuscale.errors import InputError, ManifestError
from gpuscale.lint import DEFAULT_NAMESPACE, Severity

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["LintArgs", "OutputFormat", "execute", "lint"]


class OutputFormat(enum.StrEnum):
    """``-o``: how the report is printed."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


@dataclass(frozen=True)
class LintArgs:
    """The command line of ``gpuscale lint``, parsed."""

    paths: tuple[str, ...] = ()
    """Files, directories (searched recursively for *.yaml and *.yml) or ``-``."""
    profile: Path | None = None
    """``--profile``: gpuscale.yaml, for node pools, Prometheus release and timings;
    ``None``: found by :func:`gpuscale.cli._profile_input.find_profile_file`, else no
    profile."""
    namespace: str = DEFAULT_NAMESPACE
    """``--namespace``: where objects without a namespace go (as ``kubectl apply -n``)."""
    output: OutputFormat = OutputFormat.TEXT
    select: tuple[str, ...] = ()
    """``--select``: only these rules (slugs, repeated or comma-separated)."""
    ignore: tuple[str, ...] = ()
    """``--ignore``: not these rules."""
    fail_on: Severity = Severity.ERROR
    """``--fail-on``: the lowest severity that makes the exit code 1."""
    explain: str | None = None
    """``--explain SLUG``: print one rule's explanation (text or JSON) and exit; takes no
    paths."""
    list_rules: bool = False
    """``--list``: print the catalogue (text or JSON) and exit; takes no paths."""


def execute(args: LintArgs, *, stdin: TextIO, stdout: TextIO, cwd: PurePath) -> int:
    """Run ``gpuscale lint``; returns the exit code. Raises ``InputError`` for bad input."""
    # Rendering pulls in rich's syntax highlighting; import it only when lint runs.
    from rich.console import Console  # noqa: PLC0415

    from gpuscale.inputs import read_manifests  # noqa: PLC0415 - see module doc
    from gpuscale.lint import LintOptions, parse_slugs, run_lint  # noqa: PLC0415
    from gpuscale.lint.output import (  # noqa: PLC0415
        print_text,
        render_json,
        render_sarif,
    )

    console = Console(file=stdout, highlight=False)
    if args.list_rules or args.explain is not None:
        return _catalogue(args, console, stdout)
    if not args.paths:
        raise InputError(
            "no manifests given", where="PATH", fix="gpuscale lint k8s/ (or - for stdin)"
        )
    from gpuscale.manifests.names import check_namespace_flag  # noqa: PLC0415

    check_namespace_flag(args.namespace)
    from gpuscale.cli._profile_input import optional_profile  # noqa: PLC0415

    select = parse_slugs(args.select, flag="--select") if args.select else None
    if select is not None and not select:
        raise InputError(
            "names no rule, so nothing would be checked",
            where="--select",
            fix="name at least one rule (`gpuscale lint --list` prints them), or leave "
            "--select out to run every rule",
        )
    options = LintOptions(
        select=select,
        ignore=parse_slugs(args.ignore, flag="--ignore"),
        fail_on=args.fail_on,
        namespace=args.namespace,
        validate=True,
    )
    loaded, profile_file = optional_profile(args.profile, args.paths)
    profile = loaded if profile_file is not None else None
    manifests = read_manifests(args.paths, stdin=stdin)
    if not manifests:
        raise ManifestError(
            "no objects found", where=" ".join(args.paths), fix="check the paths hold manifests"
        )
    # The loaded manifests live until the command ends: keep the cyclic garbage collector
    # from re-scanning them while the rules run (it made large sets superlinear).
    gc.freeze()
    try:
        report = run_lint(manifests, profile, options)
    finally:
        gc.unfreeze()
    if args.output is OutputFormat.JSON:
        stdout.write(render_json(report))
    elif args.output is OutputFormat.SARIF:
        stdout.write(render_sarif(report, cwd))
    else:
        print_text(report, console)
    return report.exit_code


def _catalogue(args: LintArgs, console: Console, stdout: TextIO) -> int:
    """``--list`` and ``--explain SLUG``: the catalogue or one rule, as text or JSON."""
    from gpuscale.lint.output import (  # noqa: PLC0415
        explain,
        print_catalogue,
        print_explanation,
        render_catalogue_json,
    )

    flag = "--list" if args.list_rules else "--explain"
    if args.list_rules and args.explain is not None:
        raise InputError("--list and --explain are exclusive", where=flag, fix="use one of them")
    if args.paths:
        raise InputError(
            f"takes no manifests, got {' '.join(args.paths)}",
            where=flag,
            fix=f"run `gpuscale lint {' '.join(args.paths)}` and `gpuscale lint {flag}"
            f"{' ' + args.explain if args.explain else ''}` separately",
        )
    if args.output is OutputFormat.SARIF:
        raise InputError(
            "prints text or JSON, not SARIF",
            where=flag,
            fix="use -o json (a SARIF log of a lint run carries the catalogue too)",
        )
    entries = None
    if args.explain is not None:
        entry = explain(args.explain)
        if entry is None:
            raise InputError(
                f"unknown rule {args.explain}",
                where="--explain",
                fix="`gpuscale lint --list` prints every rule's slug",
            )
        entries = [entry]
    if args.output is OutputFormat.JSON:
        stdout.write(render_catalogue_json(entries))
    elif entries:
        print_explanation(entries[0], console)
    else:
        print_catalogue(console)
    return 0


@app.command("lint")
def lint(  # noqa: PLR0917 - one parameter per command-line option
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="PATH",
            help="Manifest files or directories (*.yaml, *.yml inside); - for stdin.",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            metavar="FILE",
            help="gpuscale.yaml: node pools, Prometheus, timings; default: the one beside the "
            "manifests (or one level up), else ./gpuscale.yaml if it exists.",
        ),
    ] = None,
    namespace: Annotated[
        str,
        typer.Option(
            "--namespace",
            "-n",
            metavar="NS",
            help="Namespace of objects that set none, as kubectl apply -n would place them.",
        ),
    ] = DEFAULT_NAMESPACE,
    output: Annotated[
        OutputFormat,
        typer.Option("--output", "-o", metavar="text|json|sarif", help="text, json or sarif."),
    ] = OutputFormat.TEXT,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select",
            metavar="SLUG,...",
            help="Only these rules (slugs; repeat or use commas).",
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore", metavar="SLUG,...", help="Skip these rules (repeat or use commas)."
        ),
    ] = None,
    fail_on: Annotated[
        Severity,
        typer.Option(
            "--fail-on",
            metavar="error|warning|info",
            help="Exit 1 on findings at or above this severity.",
        ),
    ] = Severity.ERROR,
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain", metavar="SLUG", help="Explain one rule and exit (no PATH; -o json)."
        ),
    ] = None,
    list_rules: Annotated[
        bool, typer.Option("--list", help="List every rule and exit (no PATH; -o json).")
    ] = False,
) -> None:
    """Find autoscaling mistakes in manifests: file:line, why, and the fix.

    Exit 0 when nothing is at or above --fail-on, 1 when something is, 2 for bad input
    (including no objects, or selected rules none of which can run).
    Suppress a finding with a YAML comment: # gpuscale: ignore\\[slug].
    Documentation: docs/commands/lint.md.

    [bold]Examples[/bold]

      gpuscale lint k8s/ --profile gpuscale.yaml
      gpuscale lint examples/tutorial --fail-on warning
      helm template web ./chart | gpuscale lint - -o sarif > lint.sarif
      gpuscale lint --list
      gpuscale lint --explain duplicate-object
    """
    args = LintArgs(
        paths=tuple(paths or ()),
        profile=profile,
        namespace=namespace,
        output=output,
        select=tuple(select or ()),
        ignore=tuple(ignore or ()),
        fail_on=fail_on,
        explain=explain,
        list_rules=list_rules,
    )
    raise typer.Exit(execute(args, stdin=sys.stdin, stdout=sys.stdout, cwd=Path.cwd()))
