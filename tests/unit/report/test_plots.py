from __future__ import annotations

import struct
import zlib

import pytest

from gpuscale.report import PLOT_NAMES, ReportRun, render_plots
from gpuscale.report.plots import DPI, thresholds_for
from gpuscale.timeline import Header, Timeline
from tests.unit.report import timelines

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _runs() -> list[ReportRun]:
    return [
        ReportRun("tutorial", timelines.tutorial()),
        ReportRun("fixed", timelines.fixed()),
    ]


@pytest.fixture(scope="module")
def plots() -> dict[str, bytes]:
    return render_plots(_runs())


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    _, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _png_text_chunks(data: bytes) -> list[bytes]:
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        body = data[offset + 8 : offset + 8 + length]
        crc = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])[0]
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        if kind in (b"tEXt", b"iTXt", b"zTXt", b"tIME"):
            chunks.append(kind + b":" + body)
        offset += 12 + length
    return chunks


def test_every_plot_is_a_valid_png_of_the_fixed_size(plots: dict[str, bytes]) -> None:
    assert list(plots) == list(PLOT_NAMES)
    for name, data in plots.items():
        width, height = _png_size(data)
        assert width == 9 * DPI, name
        if name == "metric":  # its legend sits under the axes: taller by its lines
            assert round(3.4 * DPI) < height <= round(6.0 * DPI), name
        else:
            assert height == round(3.4 * DPI), name
        assert len(data) > 5_000, f"{name} is suspiciously small"


def test_pngs_carry_no_software_or_time_metadata(plots: dict[str, bytes]) -> None:
    for name, data in plots.items():
        chunks = _png_text_chunks(data)
        assert not any(c.startswith((b"tIME", b"tEXt:Software")) for c in chunks), name
        assert not any(b"Date" in c or b"Creation" in c for c in chunks), name


def test_same_timelines_give_identical_bytes(plots: dict[str, bytes]) -> None:
    assert render_plots(_runs()) == plots


def test_different_runs_draw_different_plots(plots: dict[str, bytes]) -> None:
    alone = render_plots([ReportRun("tutorial", timelines.tutorial())])
    for name in PLOT_NAMES:
        assert alone[name] != plots[name], name


def test_threshold_argument_changes_the_metric_plot_only(plots: dict[str, bytes]) -> None:
    other = render_plots(_runs(), threshold=120)
    assert other["metric"] != plots["metric"]
    assert {n: other[n] for n in PLOT_NAMES if n != "metric"} == {
        n: plots[n] for n in PLOT_NAMES if n != "metric"
    }


def test_empty_timeline_still_draws_every_plot() -> None:
    empty = render_plots([ReportRun("nothing", Timeline(Header(world="live"), ()))])
    assert list(empty) == list(PLOT_NAMES)
    for data in empty.values():
        assert _png_size(data)[0] == 9 * DPI


def test_one_subplot_per_pool_makes_the_nodes_plot_taller() -> None:
    timeline = timelines.tutorial()
    header = Header(world="simulate", pools={"gpu": {}, "general": {}, "spare": {}})
    plots = render_plots([ReportRun("x", Timeline(header, timeline.records))])
    assert _png_size(plots["nodes"])[1] > _png_size(plots["replicas"])[1]


@pytest.mark.parametrize(
    ("meta", "metric", "expected"),
    [
        ({"thresholds": {"s0-prometheus": 80}}, "query:s0-prometheus", 80.0),
        ({"thresholds": {"hpa:s0-prometheus": 40}}, "hpa:s0-prometheus", 40.0),
        ({"thresholds": {"other": 80}, "threshold": 5}, "query:s0-prometheus", 5.0),
        ({"threshold": "80"}, "query:s0-prometheus", None),
        ({"threshold": float("nan")}, "query:s0-prometheus", None),
        ({}, "query:s0-prometheus", None),
    ],
)
def test_thresholds_for(meta: dict[str, object], metric: str, expected: float | None) -> None:
    assert thresholds_for(Timeline(Header(world="simulate", meta=meta), ()), metric) == expected
