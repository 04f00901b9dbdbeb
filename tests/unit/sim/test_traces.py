"""Trace parsing, scaling and tiling.

The Azure and Mooncake snippets are the first rows of ``../shared/traces`` (Azure LLM
inference trace 2023, CC-BY-4.0; Mooncake FAST'25 conversation trace, Apache-2.0).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpuscale.errors import InputError
from gpuscale.inputs import read_trace
from gpuscale.sim.traces import parse_trace

AZURE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:51.2224670,879,55
2023-11-16 18:15:51.3910170,91,16
"""
MOONCAKE = """{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}
{"timestamp": 0, "input_length": 7322, "output_length": 490, "hash_ids": [0, 14]}
{"timestamp": 3000, "input_length": 7236, "output_length": 794, "hash_ids": [0, 28]}
"""
SHARED = "/work/shared/traces/AzureLLMInferenceTrace_conv.csv"


def test_azure_rows_become_offsets_and_tokens() -> None:
    trace = parse_trace(AZURE, source="conv.csv")
    assert len(trace) == 4
    assert trace.offsets[0] == 0.0
    assert trace.offsets[1] == pytest.approx(4.314579)
    assert list(trace)[3] == pytest.approx((4.710427, 91, 16))
    assert trace.has_tokens


def test_mooncake_timestamps_are_milliseconds() -> None:
    trace = parse_trace(MOONCAKE)
    assert trace.offsets.tolist() == [0.0, 0.0, 3.0]
    assert trace.prompt_tokens.tolist() == [6758, 7322, 7236]
    assert trace.output_tokens.tolist() == [500, 490, 794]


def test_generic_csv_with_seconds_iso_and_optional_tokens() -> None:
    seconds = parse_trace("timestamp,prompt_tokens,output_tokens\n10,5,7\n12.5,6,8\n")
    assert seconds.offsets.tolist() == [0.0, 2.5]
    assert seconds.output_tokens.tolist() == [7, 8]
    iso = parse_trace("Timestamp\n2024-01-01T00:00:01Z\n2024-01-01T00:00:00Z\n")
    assert iso.offsets.tolist() == [0.0, 1.0]  # sorted by arrival
    assert not iso.has_tokens
    assert iso.prompt_tokens.tolist() == [0, 0]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (AZURE.replace("374,44", "374"), "t.csv:2", "expected 3 columns"),
        (AZURE.replace("18:15:50.9951690", "yesterday"), "t.csv:3", "TIMESTAMP"),
        (AZURE.replace("879,55", "879,-1"), "t.csv:4", "must be >= 0"),
        (AZURE.replace("91,16", "91,1.5"), "t.csv:5", "whole number"),
        ('{"timestamp": 0}\nnot json\n', "t.csv:2", "not a JSON line"),
        ('{"input_length": 3}\n', "t.csv:1", "timestamp"),
        ("when,tokens\n1,2\n", "t.csv:1", "no timestamp column"),
        ("timestamp\nnoon\n", "t.csv:2", "neither seconds nor ISO"),
        ("\n\n", "t.csv", "no requests"),
    ],
)
def test_bad_traces_name_file_and_line(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_trace(text, source="t.csv")
    assert str(info.value).startswith(where + ":") or str(info.value).startswith(where + " ")


def test_scaling_and_tiling_keep_the_rate_continuous() -> None:
    trace = parse_trace("timestamp\n0\n1\n2\n3\n")
    assert trace.span == 3.0
    assert trace.mean_gap == 1.0
    assert trace.scaled(2.0).offsets.tolist() == [0.0, 0.5, 1.0, 1.5]
    tiled = trace.tiled(10.0)
    assert tiled.offsets.tolist() == [float(x) for x in range(10)]
    assert trace.tiled(9.5, period=5.0).offsets.tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    with pytest.raises(ValueError, match="speedup"):
        trace.scaled(0)
    with pytest.raises(ValueError, match="period"):
        trace.tiled(10.0, period=0.0)


@pytest.mark.parametrize(
    ("text", "copies"),
    [
        ("timestamp\n0\n1\n2\n3\n", 1),
        ("timestamp\n0\n1\n4\n4\n4\n", 1),  # ties at the end, as in the Mooncake trace
        ("timestamp\n0\n0.25\n7.5\n", 3),
    ],
)
def test_tiling_to_whole_periods_keeps_every_row(text: str, copies: int) -> None:
    trace = parse_trace(text)
    assert trace.period == trace.span + trace.mean_gap
    for speedup in (1.0, 3.0):
        scaled = trace.scaled(speedup)
        tiled = scaled.tiled(copies * scaled.period)
        assert len(tiled) == copies * len(trace)
        assert tiled.offsets[-1] == pytest.approx((copies - 1) * scaled.period + scaled.span)


def test_read_trace_reports_missing_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "trace.csv"
    path.write_text(AZURE)
    assert len(read_trace(str(path))) == 4
    with pytest.raises(InputError, match="no such trace file"):
        read_trace(str(tmp_path / "missing.csv"))


@pytest.mark.skipif(not os.path.exists(SHARED), reason="shared traces not on this machine")
def test_the_conversation_trace_tiles_to_a_week() -> None:
    trace = read_trace(SHARED)
    assert len(trace) == 19366
    assert len(trace.tiled(trace.period)) == 19366
    week = trace.tiled(7 * 86400)
    assert 3_300_000 < len(week) < 3_400_000
    assert np.all(np.diff(week.offsets) >= 0)
    assert week.offsets[-1] < 7 * 86400
