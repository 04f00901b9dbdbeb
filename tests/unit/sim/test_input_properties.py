"""Property-based: the simulator's parsers (scenario, each trace format) and simulate's
value parsers give a value or gpuscale's own one-line error, whatever the text.

Derandomized with a fixed budget, so CI runs the same examples every time. Structured
strategies build near-valid documents (the shapes users write, with values swapped for
hostile ones), and raw text covers what no shape predicts.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.cli import _simulate
from gpuscale.errors import InputError
from gpuscale.sim.budget import estimate_work
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.traces import Trace, parse_trace

_SETTINGS = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_HOSTILE_SCALARS = st.one_of(
    st.sampled_from(
        [
            "0s",
            "-5s",
            "1e400",
            ".nan",
            ".inf",
            "-.inf",
            "true",
            "null",
            "[1]",
            "{a: 1}",
            "''",
            "9" * 5000,
            "1h30m",
            "5m",
            "all",
            "0",
            "1e-300",
            "~",
            "&a x",
            "*a",
            "!!binary aGk=",
        ]
    ),
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).map(json.dumps),
)


@st.composite
def _scenario_text(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append(f"until: {draw(_HOSTILE_SCALARS)}")
    if draw(st.booleans()):
        lines.append(f"workload: {draw(_HOSTILE_SCALARS)}")
    lines.append("steps:")
    for _ in range(draw(st.integers(0, 3))):
        lines.append(f"  - at: {draw(_HOSTILE_SCALARS)}")
        kind = draw(st.sampled_from(["request_rate", "set_gauge", "ramp", "other"]))
        if kind == "request_rate":
            lines.append(f"    request_rate: {draw(_HOSTILE_SCALARS)}")
        elif kind == "set_gauge":
            name, value, pods = (draw(_HOSTILE_SCALARS) for _ in range(3))
            lines.append(f"    set_gauge: {{name: {name}, value: {value}, pods: {pods}}}")
        elif kind == "ramp":
            start, end, over = (draw(_HOSTILE_SCALARS) for _ in range(3))
            lines.append(f"    ramp: {{from: {start}, to: {end}, over: {over}}}")
        else:
            lines.append(f"    {draw(_HOSTILE_SCALARS)}: {draw(_HOSTILE_SCALARS)}")
    return "\n".join(lines) + "\n"


def _only_our_error(call) -> object:  # type: ignore[no-untyped-def]
    try:
        return call()
    except InputError as error:
        line = error.one_line()
        assert "\n" not in line
        assert line
        return error


@_SETTINGS
@given(st.one_of(_scenario_text(), st.text(max_size=300)))
def test_scenario_parser_gives_a_scenario_or_an_input_error(text: str) -> None:
    result = _only_our_error(lambda: parse_scenario(text, source="s.yaml"))
    if not isinstance(result, InputError):
        for step in result.steps:  # type: ignore[attr-defined]
            assert math.isfinite(step.at)
            assert step.at >= 0


_CELLS = st.one_of(
    st.sampled_from(
        ["0", "1.5", "-1", "nan", "inf", "-inf", "1e15", "1e308", "x", "", " ", "2.5", "1e12"]
    ),
    st.sampled_from(["2023-11-16 18:15:46.68", "2023-13-45 00:00:00", "2023-11-16 18:15:nan"]),
    st.sampled_from(["2024-01-01T00:00:00Z", "0001-01-01T00:00:00", "9" * 5000]),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8).filter(lambda s: "," not in s and "\n" not in s and "\r" not in s),
)


@st.composite
def _csv_text(draw: st.DrawFn) -> str:
    header = draw(
        st.sampled_from(
            [
                "timestamp,prompt_tokens,output_tokens",
                "TIMESTAMP,ContextTokens,GeneratedTokens",
                "timestamp",
                "\ufefftimestamp,input_tokens",
                "\ufeffTIMESTAMP,ContextTokens,GeneratedTokens",
                "time,x",
            ]
        )
    )
    width = draw(st.integers(1, 4))
    rows = [",".join(draw(_CELLS) for _ in range(width)) for _ in range(draw(st.integers(0, 4)))]
    return "\n".join([header, *rows]) + "\n"


_JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=5),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@st.composite
def _mooncake_text(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        doc = {
            key: draw(_JSON_VALUES)
            for key in ("timestamp", "input_length", "output_length")
            if draw(st.booleans())
        }
        lines.append(json.dumps(doc))
    if draw(st.booleans()):
        lines.append("[" * draw(st.integers(1, 50_000)) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fmt", ["auto", "azure", "mooncake", "csv"])
@_SETTINGS
@given(text=st.one_of(_csv_text(), _mooncake_text(), st.text(max_size=200)))
def test_each_trace_format_gives_a_trace_or_an_input_error(fmt: str, text: str) -> None:
    result = _only_our_error(lambda: parse_trace(text, source="t", fmt=fmt))  # type: ignore[arg-type]
    if isinstance(result, Trace):
        assert len(result) > 0
        assert math.isfinite(result.span)
        assert float(result.offsets[0]) == 0.0
        assert bool((result.offsets[1:] >= result.offsets[:-1]).all())
        assert len(result.tiled(60.0)) >= 1


_FLAG_TEXT = st.one_of(
    st.sampled_from(["0", "-1", "nan", "inf", "1e400", "1e-9", "5m", "2h", "7d", "1e7", "0s"]),
    st.text(max_size=20),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@_SETTINGS
@given(_FLAG_TEXT)
def test_simulate_value_parsers_give_a_value_or_an_input_error(text: str) -> None:
    until = _only_our_error(lambda: _simulate._duration(text, "--until"))
    if not isinstance(until, InputError):
        assert until > 0  # type: ignore[operator]
    limit = _only_our_error(lambda: _simulate._max_work(text))
    if not isinstance(limit, InputError):
        assert math.isfinite(limit) and limit > 0  # type: ignore[arg-type]  # noqa: PT018


@_SETTINGS
@given(st.floats(min_value=1.0, max_value=1e300), st.floats(min_value=1e-300, max_value=1e300))
def test_the_work_estimate_is_finite_or_refused_never_an_exception(
    horizon: float, speedup: float
) -> None:
    trace = parse_trace("timestamp\n0\n1\n", source="t").scaled(speedup)
    estimate = estimate_work(_tutorial_inputs(), horizon_s=horizon, traces={"w": trace})
    assert estimate.total >= estimate.loop_events > 0
    assert estimate.requests >= 2 or horizon < trace.period


_INPUTS: list[object] = []


def _tutorial_inputs():  # type: ignore[no-untyped-def]
    if not _INPUTS:
        from pathlib import Path

        from gpuscale.inputs import read_manifests, read_profile
        from gpuscale.sim.inputs import build_inputs

        root = Path(__file__).parents[3] / "examples" / "tutorial-fixed"
        _INPUTS.append(
            build_inputs(
                read_manifests([root]), read_profile(root / "gpuscale.yaml"), namespace="default"
            )
        )
    return _INPUTS[0]
