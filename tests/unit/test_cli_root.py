from __future__ import annotations

import subprocess
import sys

import pytest

from gpuscale import __version__
from gpuscale.cli.main import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpuscale {__version__}"


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_console_script_runs_as_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "gpuscale demo" in done.stdout
