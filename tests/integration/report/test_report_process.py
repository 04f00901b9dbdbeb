"""``gpuscale report`` as a user runs it: a separate process, real files, twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuscale.report import PLOT_NAMES
from tests.unit.report import timelines
from tests.unit.report.htmlcheck import external_references, parse_page

pytestmark = pytest.mark.integration


def _gpuscale(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuscale", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_two_processes_write_identical_reports(tmp_path: Path) -> None:
    tutorial, fixed = tmp_path / "tutorial.jsonl", tmp_path / "fixed.jsonl"
    tutorial.write_text(timelines.lines(timelines.tutorial()), encoding="utf-8")
    fixed.write_text(timelines.lines(timelines.fixed()), encoding="utf-8")
    outputs = []
    for attempt in ("one", "two"):
        html, plots = tmp_path / f"{attempt}.html", tmp_path / f"plots-{attempt}"
        done = _gpuscale(
            "report", str(tutorial), str(fixed), "--html", str(html), "--plots", str(plots)
        )
        assert done.returncode == 0, done.stderr
        assert "Comparison: tutorial vs fixed" in done.stdout
        outputs.append(
            (html.read_bytes(), {n: (plots / f"{n}.png").read_bytes() for n in PLOT_NAMES})
        )
    (page_one, plots_one), (page_two, plots_two) = outputs
    assert plots_one == plots_two
    assert page_one == page_two
    parsed = parse_page(page_one.decode("utf-8"))
    assert external_references(parsed) == []
    for name in PLOT_NAMES:
        assert f"plot-{name}" in parsed.ids()


def test_bad_line_exits_2_with_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    done = _gpuscale("report", str(broken))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"gpuscale: error: {broken}:1: not a JSON line (Expecting property name enclosed in "
        "double quotes) (fix: pass a file written by gpuscale simulate, demo or watch --timeline)"
    )
    assert done.stdout == ""


def test_the_command_line_does_not_import_matplotlib() -> None:
    probe = (
        "import sys; from gpuscale.cli.main import _register_commands; _register_commands(); "
        "import gpuscale.cli.report_cmd; print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
