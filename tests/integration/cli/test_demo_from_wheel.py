"""``gpuscale demo`` from a built wheel, away from the checkout: the examples it runs ship
inside the package (hatch force-include into ``gpuscale/_examples/``)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.integration


def test_the_wheel_carries_the_examples_and_the_demo_runs_from_it(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("gpuscale-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for example in ("tutorial", "tutorial-fixed"):
            for name in ("resources.yaml", "gpuscale.yaml"):
                packaged = f"gpuscale/_examples/{example}/{name}"
                assert packaged in names
                assert archive.read(packaged) == (ROOT / "examples" / example / name).read_bytes()
        assert "gpuscale/_examples/tutorial-scenario.yaml" in names
        archive.extractall(tmp_path / "installed")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", "demo"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / "installed" / "gpuscale" / "_examples" / "tutorial") in done.stdout
    assert "the same cycle repeats" in done.stdout
    assert (work / "gpuscale-demo" / "report.html").is_file()
