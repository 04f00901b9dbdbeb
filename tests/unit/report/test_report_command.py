from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.report import PLOT_NAMES
from tests.unit.report import timelines


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    tutorial, fixed = tmp_path / "tutorial.jsonl", tmp_path / "fixed.jsonl"
    tutorial.write_text(timelines.lines(timelines.tutorial()), encoding="utf-8")
    fixed.write_text(timelines.lines(timelines.fixed()), encoding="utf-8")
    return tutorial, fixed


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_prints_both_summaries_and_the_comparison(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(files[0]), str(files[1])]) == 0
    out = capsys.readouterr().out
    assert "Summary" in out
    assert "tutorial" in out
    assert "fixed" in out
    assert "replicas (spec) min–max" in out
    assert "flaps" in out
    assert "Comparison: tutorial vs fixed" in out
    assert "30s of 15m (3%)" in out


def test_json_output(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", *map(str, files), "--label", "A", "--label", "B", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in document["runs"]] == ["A", "B"]
    assert document["runs"][0]["world"] == "simulate"
    rows = {
        (s["title"], r["label"]): r["value"]
        for s in document["runs"][0]["summary"]
        for r in s["rows"]
    }
    short = timelines.WORKLOAD.split("/")[1]
    assert rows[(f"Workload {short}", "replicas (spec) min–max")] == "1–2"
    assert rows[(f"Workload {short}", "flaps")] == 2
    spec = next(s for s in document["comparison"]["series"] if s["name"] == "spec replicas")
    assert spec["seconds_different"] == 30
    assert document["written"] == {}


def test_single_timeline_has_no_comparison(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(files[0]), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"] is None


def test_writes_html_and_plots(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html, plots = tmp_path / "out.html", tmp_path / "plots"
    code = main(
        ["report", *map(str, files), "--html", str(html), "--plots", str(plots), "-o", "json"]
    )
    assert code == 0
    captured = capsys.readouterr()
    written = json.loads(captured.out)["written"]
    assert written["html"] == str(html)
    assert written["plots"] == [str(plots / f"{n}.png") for n in PLOT_NAMES]
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert f"wrote {html}" in captured.err


def test_missing_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["report", str(missing)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"gpuscale: error: {missing}: no such file")


def test_bad_json_line_is_one_line_exit_2(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    broken = files[0].parent / "broken.jsonl"
    broken.write_text(files[0].read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n")
    assert (
        main(["report", str(files[1]), str(broken), "--html", str(files[0].parent / "r.html")]) == 2
    )
    assert _one_error_line(capsys).startswith(f"gpuscale: error: {broken}:2: not a JSON line")
    assert not (files[0].parent / "r.html").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--label", "only-one"], "--label: 1 --label for 2 timelines"),
        (["-o", "yaml"], "--output: unknown output format 'yaml'"),
    ],
)
def test_bad_flags_are_one_line_exit_2(
    files: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    assert main(["report", *map(str, files), *extra]) == 2
    assert _one_error_line(capsys).startswith(f"gpuscale: error: {message}")


def test_labels_default_to_file_stems_or_paths(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "again"
    other.mkdir()
    twin = other / "tutorial.jsonl"
    twin.write_text(files[0].read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["report", str(files[0]), str(files[1]), "-o", "json"]) == 0
    assert [r["label"] for r in json.loads(capsys.readouterr().out)["runs"]] == [
        "tutorial",
        "fixed",
    ]
    assert main(["report", str(files[0]), str(twin), "-o", "json"]) == 0
    labels = [r["label"] for r in json.loads(capsys.readouterr().out)["runs"]]
    assert labels == [str(files[0]), str(twin)]


def test_a_header_only_timeline_is_an_error_not_an_empty_table(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(files[0].read_text().splitlines()[0] + "\n", encoding="utf-8")
    html = tmp_path / "page.html"
    assert main(["report", str(files[0]), str(empty), "--html", str(html)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"gpuscale: error: {empty}: the timeline holds no records")
    assert "(fix: " in line
    assert not html.exists()
