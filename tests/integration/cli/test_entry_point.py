"""``python -m gpuscale`` runs the command line in a new interpreter (``gpuscale/__main__.py``),
as the console script does."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_console_script_runs_as_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0
    assert "gpuscale demo" in done.stdout
