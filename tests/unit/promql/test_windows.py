"""Window bounds: the galloping search of range selectors agrees with a plain bisection.

``count_over_time`` over a range selector counts exactly the samples its window holds,
so the engine's answer is compared with the bisection of the same timestamps: ``[maxt -
range, maxt]`` in 2.x, ``(maxt - range, maxt]`` in 3.x.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuscale.promql import Engine, SeriesStore, VectorResult


@settings(max_examples=60, deadline=None)
# The window's first sample right after each galloping probe (8, 64 and 512 back).
@example(list(range(100)), 93, 6)
@example(list(range(100)), 37, 62)
@example(list(range(1000)), 489, 510)
@given(
    st.lists(st.integers(0, 5_000), min_size=1, max_size=3_000, unique=True),
    st.integers(-100, 5_100),
    st.integers(1, 6_000),
)
def test_window_bounds_match_bisection(times: list[int], first: int, span: int) -> None:
    ts = sorted(times)
    store = SeriesStore()
    ref = store.series_ref({"__name__": "x"})
    for t in ts:
        store.append_ref(ref, t, 1.0)
    maxt = first + span
    hi = bisect_right(ts, maxt)
    for version, lo in (
        ("2", bisect_left(ts, first, 0, hi)),
        ("3", bisect_right(ts, first, 0, hi)),
    ):
        result = Engine(store, version=version).instant(f"count_over_time(x[{span}ms])", maxt)  # type: ignore[arg-type]
        assert isinstance(result, VectorResult)
        got = result.samples[0].value if result.samples else 0.0
        assert got == float(max(0, hi - lo)), version
