"""``gpuscale lint PATH...``: find autoscaling mistakes in manifests, with the fix.

The command is the I/O edge of :mod:`gpuscale.lint`: it expands directories, reads the
files (``-`` is standard input), hands each text to the manifest parser, reads the
profile, calls :func:`gpuscale.lint.run_lint` and prints the report as text, JSON or
SARIF. Exit codes: 0 when no finding is at or above ``--fail-on`` (default ``error``), 1
when one is, 2 for usage or input errors (a bad flag, a missing file, a manifest or
profile that does not parse).

Not registered in :mod:`gpuscale.cli.main` yet: it needs the manifest loader
(``gpuscale.manifests``) and the profile reader (``gpuscale.profile``), which
:func:`register` takes as arguments, so wiring it is one call in
``_register_commands()``::

    from gpuscale.cli import lint_cmd
    lint_cmd.register(app, parse=<(text, file) -> objects>, read_profile=<path -> ProfileValues>)
"""

from __future__ import annotations

import enum
import gc
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Annotated, TextIO

import typer

from gpuscale.cli.main import fail
from gpuscale.errors import GpuscaleError, InputError
from gpuscale.lint import (
    DEFAULT_NAMESPACE,
    LintOptions,
    ManifestObject,
    ProfileValues,
    Severity,
    parse_slugs,
    run_lint,
)

__all__ = [
    "MANIFEST_SUFFIXES",
    "LintArgs",
    "ManifestParser",
    "OutputFormat",
    "ProfileReader",
    "collect_files",
    "execute",
    "register",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
"""Files a directory argument contributes (files named explicitly are read whatever their name)."""

ManifestParser = Callable[[str, str], Sequence[ManifestObject]]
"""``parse(text, file)``: the objects of one file; raises ``ManifestError`` for bad input."""

ProfileReader = Callable[[Path], ProfileValues]
"""``read_profile(path)``: the profile's values for lint; raises ``ProfileError``."""


class OutputFormat(enum.StrEnum):
    """``-o``: how the report is printed."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


@dataclass(frozen=True)
class LintArgs:
    """The command line of ``gpuscale lint``, parsed."""

    paths: tuple[str, ...] = ()
    """Files, directories (searched recursively for *.yaml, *.yml, *.json) or ``-``."""
    profile: Path | None = None
    """``--profile``: gpuscale.yaml, for node pools, Prometheus release and timings."""
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
    """``--explain SLUG``: print one rule's explanation and exit."""
    list_rules: bool = False
    """``--list``: print the catalogue and exit."""


def collect_files(paths: Sequence[str]) -> list[str]:
    """The files ``paths`` name: files as given, directories walked in sorted order."""
    files: list[str] = []
    for raw in paths:
        if raw == "-":
            files.append(raw)
            continue
        path = Path(raw)
        if path.is_dir():
            found = _walk(path)
            if not found:
                raise InputError(
                    "no .yaml, .yml or .json files in this directory",
                    where=raw,
                    fix="name the manifest files, or a directory that holds them",
                )
            files.extend(found)
        elif path.is_file():
            files.append(raw)
        else:
            raise InputError(
                "no such file or directory", where=raw, fix="check the path; use - for stdin"
            )
    return list(dict.fromkeys(files))


def _walk(directory: Path) -> list[str]:
    """Manifest files under ``directory``: its files, then its subdirectories', each in name
    order; hidden files and directories are skipped."""
    found: list[str] = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            os.path.join(root, name)
            for name in sorted(names)
            if name.endswith(MANIFEST_SUFFIXES) and not name.startswith(".")
        )
    return found


def _read(files: Sequence[str], stdin: TextIO) -> dict[str, str]:
    texts: dict[str, str] = {}
    for file in files:
        try:
            texts[file] = stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise InputError(
                f"not UTF-8 text ({error.reason})", where=file, fix="lint YAML or JSON manifests"
            ) from error
        except OSError as error:
            raise InputError(
                f"cannot read: {error.strerror}", where=file, fix="check the file's permissions"
            ) from error
    return texts


def execute(
    args: LintArgs,
    *,
    parse: ManifestParser,
    read_profile: ProfileReader,
    stdin: TextIO,
    stdout: TextIO,
    cwd: PurePath,
) -> int:
    """Run ``gpuscale lint``; returns the exit code. Raises ``InputError`` for bad input."""
    # Rendering pulls in rich's syntax highlighting; import it only when lint runs.
    from rich.console import Console  # noqa: PLC0415

    from gpuscale.lint.output import (  # noqa: PLC0415
        explain,
        print_catalogue,
        print_explanation,
        print_text,
        render_json,
        render_sarif,
    )

    console = Console(file=stdout, highlight=False)
    if args.list_rules:
        print_catalogue(console)
        return 0
    if args.explain is not None:
        entry = explain(args.explain)
        if entry is None:
            raise InputError(
                f"unknown rule {args.explain}",
                where="--explain",
                fix="`gpuscale lint --list` prints every rule's slug",
            )
        print_explanation(entry, console)
        return 0
    if not args.paths:
        raise InputError(
            "no manifests given", where="PATH", fix="gpuscale lint k8s/ (or - for stdin)"
        )
    options = LintOptions(
        select=parse_slugs(args.select, flag="--select") if args.select else None,
        ignore=parse_slugs(args.ignore, flag="--ignore"),
        fail_on=args.fail_on,
        namespace=args.namespace,
    )
    texts = _read(collect_files(args.paths), stdin)
    objects: list[ManifestObject] = []
    for file, text in texts.items():
        objects.extend(parse(text, file))
    # The loaded manifests live until the command ends: keep the cyclic garbage collector
    # from re-scanning them while the rules run (it made large sets superlinear).
    gc.freeze()
    try:
        profile = read_profile(args.profile) if args.profile is not None else None
        report = run_lint(objects, profile, options, sources=texts)
    finally:
        gc.unfreeze()
    if args.output is OutputFormat.JSON:
        stdout.write(render_json(report))
    elif args.output is OutputFormat.SARIF:
        stdout.write(render_sarif(report, cwd))
    else:
        print_text(report, console)
    return report.exit_code


def register(app: typer.Typer, *, parse: ManifestParser, read_profile: ProfileReader) -> None:
    """Add the ``lint`` command to ``app``, reading manifests with ``parse``."""

    @app.command("lint")
    def lint(
        *,
        paths: Annotated[
            list[str] | None,
            typer.Argument(
                metavar="PATH...",
                help="Manifest files or directories (*.yaml, *.yml, *.json inside); - for stdin.",
                show_default=False,
            ),
        ] = None,
        profile: Annotated[
            Path | None,
            typer.Option("--profile", help="gpuscale.yaml: node pools, Prometheus, timings."),
        ] = None,
        namespace: Annotated[
            str,
            typer.Option(
                "--namespace",
                "-n",
                help="Namespace of objects that set none, as kubectl apply -n would place them.",
            ),
        ] = DEFAULT_NAMESPACE,
        output: Annotated[
            OutputFormat, typer.Option("--output", "-o", help="text, json or sarif.")
        ] = OutputFormat.TEXT,
        select: Annotated[
            list[str] | None,
            typer.Option("--select", help="Only these rules (slugs; repeat or use commas)."),
        ] = None,
        ignore: Annotated[
            list[str] | None, typer.Option("--ignore", help="Skip these rules.")
        ] = None,
        fail_on: Annotated[
            Severity,
            typer.Option("--fail-on", help="Exit 1 on findings at or above this severity."),
        ] = Severity.ERROR,
        explain: Annotated[
            str | None,
            typer.Option("--explain", metavar="SLUG", help="Explain one rule and exit."),
        ] = None,
        list_rules: Annotated[
            bool, typer.Option("--list", help="List every rule and exit.")
        ] = False,
    ) -> None:
        """Find autoscaling mistakes in manifests: file:line, why, and the fix.

        Exit 0 when nothing is at or above --fail-on, 1 when something is, 2 for bad input.
        Suppress a finding with a YAML comment: # gpuscale: ignore\\[slug].
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
        try:
            code = execute(
                args,
                parse=parse,
                read_profile=read_profile,
                stdin=sys.stdin,
                stdout=sys.stdout,
                cwd=Path.cwd(),
            )
        except GpuscaleError as error:
            raise typer.Exit(fail(error)) from None
        raise typer.Exit(code)
