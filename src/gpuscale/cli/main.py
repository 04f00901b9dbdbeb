"""Entry point of the ``gpuscale`` command: the root Typer app and error handling.

Exit codes (the same for every command):

- 0: success (for ``lint``/``verify``: nothing at or above the failure level)
- 1: the command ran and found a problem (lint findings, a failing verify check), or an
  outside service failed (``RetryableError``, ``UnavailableError``)
- 2: usage or input error: a bad flag, file, key or value (``InputError``)
- 130: interrupted (Ctrl-C)

Errors gpuscale raises on purpose are printed as one line on stderr, never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import typer

from gpuscale import __version__
from gpuscale.errors import GpuscaleError

app = typer.Typer(
    name="gpuscale",
    help=(
        "Autoscale GPU workloads on Kubernetes with KEDA and Prometheus, and predict what the "
        "autoscalers will do (replicas, time to capacity, GPU-hours, dollars) before paying "
        "for a GPU.\n\nStart with [bold]gpuscale demo[/bold]."
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gpuscale {__version__}")
        raise typer.Exit


@app.callback()
def root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """gpuscale: GPU autoscaling with KEDA, checked and rehearsed before it costs money."""


# The command modules, in the order `gpuscale --help` lists them (the order a user meets them).
COMMAND_MODULES = (
    "demo_cmd",
    "init_cmd",
    "render_cmd",
    "profile_cmd",
    "lint_cmd",
    "simulate_cmd",
    "report_cmd",
    "cluster_cmd",
    "install_cmd",
    "deploy_cmd",
    "verify_cmd",
    "load_cmd",
    "watch_cmd",
    "app_cmd",
)


def _register_commands() -> None:
    """Import the command modules; each adds its commands to :data:`app`."""
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpuscale.cli.{name}")


def fail(error: GpuscaleError) -> int:
    """Print ``error`` as one line on stderr and return its exit code."""
    sys.stderr.write(f"gpuscale: error: {error.one_line()}\n")
    return error.exit_code


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script)."""
    _register_commands()
    try:
        app(args=argv, prog_name="gpuscale", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except GpuscaleError as error:
        return fail(error)
    except KeyboardInterrupt:
        sys.stderr.write("gpuscale: interrupted\n")
        return 130
    return 0


def console() -> None:  # pragma: no cover - thin wrapper for the console script
    sys.exit(main())
