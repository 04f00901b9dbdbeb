from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.errors import InputError
from gpuscale.report import PLOT_NAMES, ReportRun, read_timeline, write_report
from tests.unit.report import timelines
from tests.unit.report.htmlcheck import parse_page


def _runs() -> list[ReportRun]:
    return [ReportRun("tutorial", timelines.tutorial()), ReportRun("fixed", timelines.fixed())]


def test_writes_the_page_and_every_plot_with_stable_names(tmp_path: Path) -> None:
    done = write_report(_runs(), html=tmp_path / "report.html", plots_dir=tmp_path / "plots/new")
    assert done.html == tmp_path / "report.html"
    assert [p.name for p in done.plots] == [f"{n}.png" for n in PLOT_NAMES]
    assert sorted(p.name for p in (tmp_path / "plots/new").iterdir()) == sorted(
        f"{n}.png" for n in PLOT_NAMES
    )
    for path in done.plots:
        assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    parse_page(page)
    assert "comparison" in page
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_nothing_asked_writes_nothing(tmp_path: Path) -> None:
    done = write_report(_runs())
    assert (done.html, done.plots) == (None, ())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("html", "plots", "message"),
    [
        (
            "missing/report.html",
            None,
            "missing/report.html: the directory to write into does not exist",
        ),
        (".", None, ".: is a directory"),
        (None, "taken", "taken: exists and is not a directory"),
    ],
)
def test_bad_targets_fail_before_writing_anything(
    tmp_path: Path,
    html: str | None,
    plots: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file", encoding="utf-8")
    (tmp_path / "old.html").write_text("previous report", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        write_report(_runs(), html=html, plots_dir=plots or None)
    assert str(caught.value).startswith(message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.html", "taken"]


def test_a_bad_html_target_stops_the_plots_too(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        write_report(_runs(), html=tmp_path / "no/such/dir.html", plots_dir=tmp_path / "plots")
    assert not (tmp_path / "plots").exists()


def test_read_timeline_round_trips_and_names_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(timelines.lines(timelines.tutorial()), encoding="utf-8")
    assert read_timeline(path) == timelines.tutorial()
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file"):
        read_timeline(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        read_timeline(tmp_path)
    (tmp_path / "latin1.jsonl").write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputError, match="not UTF-8 text"):
        read_timeline(tmp_path / "latin1.jsonl")
