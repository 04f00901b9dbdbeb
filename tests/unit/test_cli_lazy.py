"""The root group's table of commands (``COMMAND_HELP``) against what the modules register.

``gpuscale --help`` lists the commands from ``gpuscale.cli.main.COMMAND_HELP`` without
importing their modules; these tests import every module and check that the table names
each module's command, its one-line help and its kind, and that the lazy listing has the
order Typer gives when every module is imported. A new command module fails here until
its line is added to the table. (``tests/integration/test_cli_startup.py`` checks what a
fresh process imports.)
"""

from __future__ import annotations

import inspect

import pytest
import typer

from gpuscale.cli import main as cli_main
from gpuscale.cli.main import (
    COMMAND_HELP,
    COMMAND_MODULES,
    LazyGroup,
    _register_commands,
    _Unloaded,
    app,
)


def _registered() -> dict[str, tuple[str, bool]]:
    """Command name -> (module that registers it, whether it is a group), every module in."""
    _register_commands()
    found: dict[str, tuple[str, bool]] = {}
    for command in app.registered_commands:
        assert command.name is not None
        assert command.callback is not None
        found[command.name] = (command.callback.__module__, False)
    for group in app.registered_groups:
        assert group.name is not None
        assert group.typer_instance is not None
        modules = {
            c.callback.__module__
            for c in group.typer_instance.registered_commands
            if c.callback is not None
        }
        assert len(modules) == 1, f"group {group.name} spans modules {modules}"
        found[group.name] = (modules.pop(), True)
    return found


def test_the_table_describes_every_command_module() -> None:
    missing = set(COMMAND_MODULES) - set(COMMAND_HELP)
    assert not missing, (
        f"add {sorted(missing)} to COMMAND_HELP in gpuscale/cli/main.py: "
        'LazyCommand("<command>", "<its one-line help>"[, group=True])'
    )
    assert set(COMMAND_HELP) <= set(COMMAND_MODULES), "COMMAND_HELP names a module not listed"


def test_every_registered_command_is_in_the_table() -> None:
    assert sorted(entry.name for entry in COMMAND_HELP.values()) == sorted(_registered())


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_entry_is_the_command_its_module_registers(module: str) -> None:
    entry = COMMAND_HELP[module]
    assert _registered()[entry.name] == (f"gpuscale.cli.{module}", entry.group)


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_one_line_help_is_the_first_paragraph_of_the_commands_help(module: str) -> None:
    entry = COMMAND_HELP[module]
    _register_commands()
    root = typer.main.get_command(app)
    assert isinstance(root, LazyGroup)
    command = root.commands[entry.name]
    assert not isinstance(command, _Unloaded)
    assert inspect.cleandoc(command.help or "").split("\n\n")[0] == entry.help


def test_listing_order_is_the_order_typer_gives() -> None:
    # Typer adds plain commands first, then groups, each in the order the modules register
    # them (``_register_commands`` imports them in COMMAND_MODULES order).
    registered = _registered()
    order = {f"gpuscale.cli.{module}": index for index, module in enumerate(COMMAND_MODULES)}

    def typer_position(name: str) -> tuple[bool, int]:
        module, group = registered[name]
        return group, order[module]

    expected = sorted(registered, key=typer_position)
    fresh = LazyGroup(name="gpuscale")
    assert fresh.list_commands(None) == expected
    assert typer.main.get_command(app).list_commands(None) == expected


def test_a_fresh_group_holds_placeholders_with_the_table_help() -> None:
    fresh = LazyGroup(name="gpuscale")
    by_name = {entry.name: (module, entry) for module, entry in COMMAND_HELP.items()}
    for name, command in fresh.commands.items():
        module, entry = by_name[name]
        assert isinstance(command, _Unloaded)
        assert (command.module, command.name, command.help) == (module, name, entry.help)


def test_a_module_missing_from_the_table_is_imported_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    imported: list[str] = []
    monkeypatch.setattr(cli_main.importlib, "import_module", imported.append)
    monkeypatch.delitem(COMMAND_HELP, "app_cmd")
    cli_main._register_unlisted()
    assert imported == ["gpuscale.cli.app_cmd"]
