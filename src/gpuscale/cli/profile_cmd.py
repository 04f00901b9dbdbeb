"""``gpuscale profile check|show``: validate ``gpuscale.yaml`` and print its effective values.

``check`` exits 0 and prints a one-line summary, or prints the one-line error (file:line,
what, fix) and exits 2. ``show`` prints every value with the defaults filled, as YAML or
JSON; with no file it shows the built-in defaults. The profile models are imported when
a sub-command runs, not for ``--help``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.main import CommandGroup, app
from gpuscale.errors import InputError

__all__ = ["check", "profile_app", "show"]

profile_app = typer.Typer(
    cls=CommandGroup,
    name="profile",
    help="Check gpuscale.yaml, or show its effective values with every default filled.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)
app.add_typer(profile_app, name="profile")


@profile_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The profile, e.g. gpuscale.yaml.")],
) -> None:
    """Validate a profile: exit 0 when it is valid, 2 with a one-line error otherwise.

    Every key is optional; docs/profile.md explains each one.

    [bold]Examples[/bold]

      gpuscale profile check gpuscale.yaml
      gpuscale profile check examples/tutorial/gpuscale.yaml
    """
    from gpuscale.errors import ProfileError  # noqa: PLC0415 - see module doc
    from gpuscale.inputs import read_profile  # noqa: PLC0415 - see module doc
    from gpuscale.manifests import format_path  # noqa: PLC0415 - see module doc

    profile = read_profile(file)
    problem = profile.creation_problem()
    if problem is not None:
        path, message, fix = problem
        raise ProfileError(
            f"{format_path(path)}: {message}", where=profile.where(path), fix=fix, key_path=path
        )
    gpu = sum(1 for pool in profile.node_pools if pool.gpu != "none")
    sys.stdout.write(
        f"{file}: ok ({profile.cluster.provider}, {len(profile.node_pools)} node pools of which "
        f"{gpu} with GPUs, {len(profile.workloads)} workloads)\n"
    )


@profile_app.command("show")
def show(
    file: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE", help="The profile; omit it to see the defaults.", show_default=False
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="yaml|json", help="yaml or json.")
    ] = "yaml",
) -> None:
    """Print the effective profile: every value, defaults and catalogue entries filled.

    Documentation: docs/commands/profile.md and docs/profile.md.

    [bold]Examples[/bold]

      gpuscale profile show                      # the built-in defaults
      gpuscale profile show gpuscale.yaml -o json
    """
    from gpuscale.inputs import read_profile  # noqa: PLC0415 - see module doc
    from gpuscale.manifests import render  # noqa: PLC0415 - see module doc
    from gpuscale.profile import Profile  # noqa: PLC0415 - see module doc

    if output not in ("yaml", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use yaml or json"
        )
    profile = read_profile(file) if file is not None else Profile.default()
    data = profile.model_dump(mode="json")
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render([data]))
