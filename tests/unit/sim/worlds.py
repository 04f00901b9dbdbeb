"""The stand-in HPA the simulator tests put on the shared worlds (the worlds themselves are
:mod:`gpuscale.sim.worlds`, shared with the benchmarks)."""

from __future__ import annotations

from gpuscale.sim.worlds import TUTORIAL_QUERY
from tests.unit.sim.standins import ThresholdScaler


def stand_in_hpa(query: str = TUTORIAL_QUERY) -> ThresholdScaler:
    """ceil(value / 80) within [1, 8], highest of the last 300 s (the HPA's default window)."""
    return ThresholdScaler(
        query, 80.0, 1, 8, name="hpa", metric="s0-prometheus", scale_down_window_s=300.0
    )
