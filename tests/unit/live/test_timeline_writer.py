"""``watch --timeline``'s writer opens its file at the first record: a watch that fails
before it has anything to record leaves no header-only timeline behind."""

from __future__ import annotations

from pathlib import Path

from gpuscale.live.watcher import TimelineWriter
from gpuscale.timeline import Header, Record, decode_lines


def _writer(path: Path) -> TimelineWriter:
    return TimelineWriter(lambda: path.open("w", encoding="utf-8"), Header(world="live"))


def test_no_record_no_file(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = _writer(path)
    writer.close()
    assert not path.exists()


def test_the_first_record_writes_the_header_then_each_record(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = _writer(path)
    writer.write(Record(t=0.0, workloads=()))
    writer.write(Record(t=2.0, workloads=()))
    writer.close()
    timeline = decode_lines(path.read_text().splitlines(), source=str(path))
    assert timeline.header.world == "live"
    assert [r.t for r in timeline.records] == [0.0, 2.0]
