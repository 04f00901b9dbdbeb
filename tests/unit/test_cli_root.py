"""The root command in-process: ``--version`` and an unknown command (the entry point in a
new interpreter is tested in tests/integration/cli/test_entry_point.py)."""

from __future__ import annotations

import pytest

from gpuscale import __version__
from gpuscale.cli.main import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpuscale {__version__}"


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
