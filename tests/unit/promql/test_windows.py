"""Window bounds: the galloping search agrees with a plain bisection everywhere."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

from hypothesis import given
from hypothesis import strategies as st

from gpuscale.promql.engine import _bounds


@given(
    st.lists(st.integers(0, 5_000), min_size=1, max_size=3_000, unique=True),
    st.integers(-100, 5_100),
    st.integers(0, 6_000),
)
def test_bounds_match_bisection(times: list[int], first: int, span: int) -> None:
    ts = array("q", sorted(times))
    maxt = first + span
    hi = bisect_right(ts, maxt)
    assert _bounds(ts, first, maxt) == (bisect_left(ts, first, 0, hi), hi)
