"""``--help`` of the commands that need no cluster: every option explained, every value
named (``FILE``, ``DURATION``, ``text|json``) rather than typed (``<str>``, ``<path>``),
and an Examples section, as a user reading ``gpuscale init --help`` would need.

The live commands (deploy, verify, load, watch, install, cluster) are checked by their
own tests."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer

from gpuscale.cli.main import app, main

COMMANDS = [
    ("init",),
    ("render",),
    ("profile", "check"),
    ("profile", "show"),
    ("lint",),
    ("simulate",),
    ("demo",),
    ("report",),
    ("app",),
]
"""The non-live commands (issue 2's and the simulator's)."""

TYPE_LABEL = re.compile(r"<(str|path|int|float|list\[[^\]]*\])>")
"""Typer's type labels, which say nothing about what to pass."""


def _command(path: tuple[str, ...]) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        ctx = command.make_context("gpuscale", [], resilient_parsing=True)
        command = command.get_command(ctx, name)
    return command


def _ids(path: tuple[str, ...]) -> str:
    return " ".join(path)


@pytest.mark.parametrize("path", COMMANDS, ids=_ids)
def test_every_option_is_explained_and_names_its_value(path: tuple[str, ...]) -> None:
    command = _command(path)
    options = [p for p in command.params if p.param_type_name == "option"]
    assert command.params, "no parameters found: the command was not loaded"
    for option in options:
        assert option.help, f"{option.opts[0]} has no help text"
        if not option.is_flag:
            assert option.metavar, f"{option.opts[0]} shows a type, not what to pass"
    for argument in (p for p in command.params if p.param_type_name == "argument"):
        assert argument.help, f"{argument.name} has no help text"
        assert argument.metavar, argument.name
        assert argument.metavar.isupper(), argument.name


@pytest.mark.parametrize("path", COMMANDS, ids=_ids)
def test_help_has_examples_and_no_type_labels_for_options(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    heading = re.search(r"^ *Examples *$", text, re.MULTILINE)
    assert heading, "no Examples section"
    examples = text[heading.end() :]
    assert f"gpuscale {' '.join(path)}" in examples
    options_panel = text.split("─ Options ─", 1)[1]
    assert not TYPE_LABEL.search(options_panel), TYPE_LABEL.findall(options_panel)


def test_choices_are_shown() -> None:
    """Options with a fixed set of values show the set."""
    shown = {
        (path, option.opts[0]): option.metavar
        for path in COMMANDS
        for option in _command(path).params
        if option.param_type_name == "option" and option.metavar and "|" in option.metavar
    }
    assert shown[(("init",), "--gpu")] == "amd|nvidia"
    assert shown[(("init",), "--provider")] == "doks|generic"
    assert shown[(("lint",), "--output")] == "text|json|sarif"
    assert shown[(("simulate",), "--trace-format")] == "auto|azure|mooncake|csv"
    assert shown[(("profile", "show"), "--output")] == "yaml|json"
