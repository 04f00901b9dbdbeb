"""A tiled trace read tile by tile (``TraceSource`` over a ``TiledTrace``) gives the same
windows, request for request, as the whole tiled arrays, which the tiled trace builds on
first use exactly as ``Trace.tiled`` used to."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.sim.load import WINDOW_S, Arrivals, TraceSource
from gpuscale.sim.traces import TiledTrace, Trace


def _eager_window(trace: Trace, start: float, k: int) -> Arrivals:
    """The windows as ``TraceSource`` cut them from whole arrays before tiles were lazy."""
    times = trace.offsets + start
    lo, hi = np.searchsorted(times, [k * WINDOW_S, (k + 1) * WINDOW_S], side="left")
    return Arrivals(times[lo:hi], trace.prompt_tokens[lo:hi], trace.output_tokens[lo:hi])


def _eager_tiled(base: Trace, until: float, step: float) -> tuple[np.ndarray, int]:
    tiles = max(int(np.ceil(until / step)), 1)
    starts = np.arange(tiles, dtype=np.float64) * step
    offsets = (base.offsets[None, :] + starts[:, None]).ravel()
    return offsets, int(np.searchsorted(offsets, until, side="left"))


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.just(0.0) | st.floats(0.01, 400.0), min_size=1, max_size=30),
    tokens=st.integers(0, 5000),
    until=st.floats(1.0, 5_000.0, allow_nan=False),
    start=st.sampled_from([0.0, 0.1, 37.5, 600.0]),
    period=st.none() | st.floats(0.5, 3000.0, allow_nan=False),
)
def test_lazy_tiles_give_the_eager_windows(
    gaps: list[float], tokens: int, until: float, start: float, period: float | None
) -> None:
    offsets = np.cumsum([0.0, *gaps[1:]])
    n = len(offsets)
    base = Trace(
        offsets,
        (np.arange(n, dtype=np.int64) * 7 + tokens) % 9001,
        (np.arange(n, dtype=np.int64) * 3 + tokens) % 503,
    )
    if base.period == 0 and period is None:
        return  # one burst: not tiled
    tiled = base.tiled(until, period)
    assert isinstance(tiled, TiledTrace)
    whole, keep = _eager_tiled(base, until, base.period if period is None else period)
    assert len(tiled) == keep
    assert tiled.offsets.tolist() == whole[:keep].tolist()
    if keep:
        assert tiled.span == float(whole[keep - 1])
    lazy = TraceSource(tiled, start_s=start)
    eager = TraceSource(base.tiled(until, period), start_s=start)
    eager_trace = base.tiled(until, period)
    for k in range(int((until + start) // WINDOW_S) + 2):
        got = lazy.window(k)
        want = _eager_window(eager_trace, start, k)
        assert got.times.tolist() == want.times.tolist()
        assert got.prompt_tokens.tolist() == want.prompt_tokens.tolist()
        assert got.output_tokens.tolist() == want.output_tokens.tolist()
        assert eager.window(k).times.tolist() == want.times.tolist()
    if not tiled.ordered:
        return  # tiles that overlap (a period shorter than the span) are read whole
    placed = lazy._placed
    assert placed > 0 or keep == 0 or whole[0] + start >= (k + 1) * WINDOW_S
    assert lazy.times[:placed].tolist() == (whole[:keep] + start).tolist()[:placed]
