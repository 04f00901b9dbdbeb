"""Entry point of the ``gpuscale`` command: the root Typer app and error handling.

Exit codes (the same for every command):

- 0: success (for ``lint``/``verify``: nothing at or above the failure level)
- 1: the command ran and found a problem (lint findings, a failing verify check), or an
  outside service failed (``RetryableError``, ``UnavailableError``)
- 2: usage or input error: a bad flag, file, key or value (``InputError``)
- 130: interrupted (Ctrl-C); except ``gpuscale app``, which drains on SIGTERM/SIGINT and
  exits 0 (a clean stop, as a process manager expects)

Errors gpuscale raises on purpose are printed as one line on stderr, never a traceback;
so are Click's usage errors (an unknown option or command, a missing argument, a value
not among the choices), which Typer would otherwise draw as a boxed panel under the usage
line: one line naming the command, what is wrong and where its ``--help`` is, exit 2.

Start-up: a command module is imported only when its command runs (or its own ``--help``
is asked for). ``gpuscale --help`` lists every command from :data:`COMMAND_HELP`, the
name and one-line help of each module's command, without importing any of them; a test
checks that table against the commands the modules really register. The command modules
in turn import what their work needs inside the command, so ``gpuscale lint --help``
does not load the lint rules (``benchmarks/cli_startup.py`` measures it).
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

from gpuscale import __version__
from gpuscale.errors import GpuscaleError

# Click's exceptions, wherever this Typer takes Click from (0.2x vendors it as typer._click):
# the module of the one exception class Typer re-exports.
_click_errors: Any = sys.modules[typer.BadParameter.__module__]

__all__ = [
    "COMMAND_HELP",
    "COMMAND_MODULES",
    "CommandGroup",
    "LazyCommand",
    "LazyGroup",
    "app",
    "console",
    "fail",
    "main",
    "root",
    "usage_error",
]


class LazyCommand(NamedTuple):
    """What ``gpuscale --help`` shows for a command module that is not imported yet."""

    name: str
    """The command the module adds to :data:`app`."""
    help: str
    """Its one-line help: the first paragraph of its docstring or ``help=``."""
    group: bool = False
    """True for a group of sub-commands (``app.add_typer``); Typer lists groups last."""


class _Unloaded(TyperCommand):
    """Stands in the root group for a command whose module is not imported yet."""

    def __init__(self, module: str, entry: LazyCommand) -> None:
        super().__init__(entry.name, help=entry.help)
        self.module = module


class CommandGroup(TyperGroup):
    """A Typer group whose ``--help`` flag, when not given, is False rather than unset.

    Typer 0.29 coerces every parameter value that is not a bool through pydantic, and a
    group's ``--help`` has no default: ``gpuscale lint --help`` imported pydantic (about
    0.1 s) only to read the root's unset flag. The root group and the sub-command groups
    (``profile``, ``cluster``: ``typer.Typer(cls=CommandGroup)``) use this class.
    """

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


class LazyGroup(CommandGroup):
    """The root group: imports a command's module the first time the command is needed.

    Every command of :data:`COMMAND_HELP` is in :attr:`commands` from the start, as an
    :class:`_Unloaded` placeholder until its module is imported, so the listing order,
    ``No such command`` and Typer's "Did you mean" work as with every module imported.
    Formatting the root help reads the placeholders' name and help; anything else that
    asks for a command (running it, its ``--help``, shell completion) gets the real one.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        loaded = dict(self.commands)
        self.commands = {}
        for module in _listing_order():
            entry = COMMAND_HELP[module]
            real = loaded.pop(entry.name, None)
            self.commands[entry.name] = _Unloaded(module, entry) if real is None else real
        self.commands.update(loaded)
        self._listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if isinstance(command, _Unloaded) and not self._listing:
            importlib.import_module(f"gpuscale.cli.{command.module}")
            root = typer.main.get_command(app)
            command = root.commands.get(cmd_name) if isinstance(root, TyperGroup) else None
            if command is None or isinstance(command, _Unloaded):
                msg = f"gpuscale.cli.main.COMMAND_HELP: {cmd_name!r} is not registered"
                raise RuntimeError(msg)
            self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    cls=LazyGroup,
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


# The command modules, in the order `gpuscale --help` lists them (the order a user meets them;
# Typer lists the groups, `profile` and `cluster`, after the plain commands).
COMMAND_MODULES = (
    "demo_cmd",
    "init_cmd",
    "render_cmd",
    "profile_cmd",
    "lint_cmd",
    "simulate_cmd",
    "tune_cmd",
    "report_cmd",
    "cluster_cmd",
    "install_cmd",
    "deploy_cmd",
    "verify_cmd",
    "load_cmd",
    "watch_cmd",
    "calibrate_cmd",
    "app_cmd",
)

# What `gpuscale --help` shows for each command module without importing it: the command
# the module adds, its one-line help (the first paragraph of its docstring or help=) and
# whether it is a group. A module listed above but not here still works (it is imported
# at start-up), but tests/unit/test_cli_lazy.py fails until its line is added.
COMMAND_HELP: dict[str, LazyCommand] = {
    "demo_cmd": LazyCommand(
        "demo", "Simulate the tutorial and its fix side by side (no cluster, no cloud account)."
    ),
    "init_cmd": LazyCommand(
        "init",
        "Scaffold a corrected Deployment, Service, ServiceMonitor, ScaledObject and gpuscale.yaml.",
    ),
    "render_cmd": LazyCommand(
        "render", "Print manifests as one multi-document YAML stream for `kubectl apply -f -`."
    ),
    "profile_cmd": LazyCommand(
        "profile",
        "Check gpuscale.yaml, or show its effective values with every default filled.",
        group=True,
    ),
    "lint_cmd": LazyCommand(
        "lint", "Find autoscaling mistakes in manifests: file:line, why, and the fix."
    ),
    "simulate_cmd": LazyCommand(
        "simulate",
        "Replay a scenario or a trace through KEDA, the HPA and the autoscaler in virtual time.",
    ),
    "tune_cmd": LazyCommand(
        "tune", "Search the cheapest KEDA and HPA settings that meet an SLO on your own trace."
    ),
    "report_cmd": LazyCommand(
        "report",
        "Summarise timelines side by side; compare two; write the HTML report and PNG plots.",
    ),
    "cluster_cmd": LazyCommand(
        "cluster",
        "Create, inspect and delete the DOKS cluster the profile describes (DigitalOcean).",
        group=True,
    ),
    "install_cmd": LazyCommand(
        "install", "Install kube-prometheus-stack and KEDA (helm upgrade --install --wait)."
    ),
    "deploy_cmd": LazyCommand(
        "deploy", "Validate, lint, then server-side apply manifests in dependency order."
    ),
    "verify_cmd": LazyCommand(
        "verify", "Check every link of the scaling chain on the live cluster (read-only)."
    ),
    "load_cmd": LazyCommand(
        "load", "Set the workload's gauge on one pod, or send requests to its Service at a rate."
    ),
    "watch_cmd": LazyCommand(
        "watch", "Watch replicas, pods, nodes, the ScaledObject, the HPA, the query and events."
    ),
    "calibrate_cmd": LazyCommand(
        "calibrate",
        "Measure an OpenAI-compatible LLM server and write the serving model's step cost "
        "into the profile.",
    ),
    "app_cmd": LazyCommand(
        "app",
        "Run the workload program: GET /?value=<number> sets a gauge, GET /metrics exports it.",
    ),
}


def _listing_order() -> list[str]:
    """The modules of :data:`COMMAND_HELP` in the order ``--help`` lists their commands:
    :data:`COMMAND_MODULES` order, plain commands before groups (as Typer builds it)."""
    known = [module for module in COMMAND_MODULES if module in COMMAND_HELP]
    return [m for m in known if not COMMAND_HELP[m].group] + [
        m for m in known if COMMAND_HELP[m].group
    ]


def _register_commands() -> None:
    """Import every command module; each adds its commands to :data:`app`."""
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpuscale.cli.{name}")


def _register_unlisted() -> None:
    """Import the command modules :data:`COMMAND_HELP` does not describe (yet), so their
    commands exist; the others are imported when their command is needed."""
    for name in COMMAND_MODULES:
        if name not in COMMAND_HELP:
            importlib.import_module(f"gpuscale.cli.{name}")


def fail(error: GpuscaleError) -> int:
    """Print ``error`` as one line on stderr and return its exit code; the line has
    every secret masked (:meth:`GpuscaleError.one_line` passes it through
    :func:`gpuscale._redact.redact`)."""
    sys.stderr.write(f"gpuscale: error: {error.one_line()}\n")
    return error.exit_code


def usage_error(error: Any, argv: list[str] | None = None) -> int:
    """Print a Click usage error (a ``ClickException``) as one line on stderr, naming the
    command and its ``--help``, and return its exit code (2 for usage errors).

    Some errors (an option missing its value) carry no context; the command is then read
    from ``argv``: the leading words that name a command, then a sub-command."""
    ctx = getattr(error, "ctx", None)
    command = ctx.command_path if ctx is not None else "gpuscale"
    group = ctx.command if ctx is not None else typer.main.get_command(app)
    for word in argv or []:
        commands = getattr(group, "commands", None)
        if not isinstance(commands, dict) or word not in commands:
            break
        command = f"{command} {word}"
        group = commands[word]
    message = error.format_message().replace("Value error, ", "")  # pydantic's prefix
    line = GpuscaleError(message, where=command, fix=f"see {command} --help").one_line()
    sys.stderr.write(f"gpuscale: error: {line}\n")
    return int(error.exit_code)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script).

    Click runs in non-standalone mode so that its usage errors reach :func:`usage_error`
    instead of Typer's panel; ``typer.Exit(code)`` and ``--help`` come back as their
    exit code, a command that returns normally as None (exit 0).
    """
    _register_unlisted()
    try:
        result = app(args=argv, prog_name="gpuscale", standalone_mode=False)
    except _click_errors.NoArgsIsHelpError:
        return 2  # Typer has printed the help, as for `gpuscale` alone
    except _click_errors.ClickException as error:
        return usage_error(error, sys.argv[1:] if argv is None else argv)
    except typer.Abort:
        sys.stderr.write("gpuscale: aborted\n")
        return 1
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except GpuscaleError as error:
        return fail(error)
    except KeyboardInterrupt:
        sys.stderr.write("gpuscale: interrupted\n")
        return 130
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


def console() -> None:  # pragma: no cover - thin wrapper for the console script
    code = main()
    # The process ends: spare the collector its walk over every object at shutdown (a
    # tenth of a small simulate's CPU time; docs/benchmarks/sim_startup.md).
    gc.freeze()
    sys.exit(code)
