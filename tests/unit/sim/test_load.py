"""Rate schedules and Poisson arrivals: exact Λ(t), determinism per window."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.sim.load import WINDOW_S, RateSchedule, RateSource, TraceSource
from gpuscale.sim.scenario import RampStep, RateStep
from gpuscale.sim.traces import parse_trace


def test_rate_steps_and_ramps_make_a_piecewise_linear_rate() -> None:
    schedule = RateSchedule([RateStep(10.0, 2.0), RampStep(100.0, 2.0, 12.0, 100.0)])
    assert schedule.rate_at(5.0) == 0.0
    assert schedule.rate_at(50.0) == 2.0
    assert schedule.rate_at(150.0) == pytest.approx(7.0)
    assert schedule.rate_at(500.0) == 12.0
    # Λ: 90 s at 2/s, then the ramp's area 100 * (2 + 12) / 2, then 12/s
    assert schedule.cumulative(100.0) == pytest.approx(180.0)
    assert schedule.cumulative(200.0) == pytest.approx(180.0 + 700.0)
    assert schedule.cumulative(300.0) == pytest.approx(880.0 + 1200.0)
    points = np.array([0.0, 180.0, 880.0, 2080.0])
    assert schedule.inverse(points) == pytest.approx([10.0, 100.0, 200.0, 300.0])


def test_a_later_step_cuts_a_ramp() -> None:
    schedule = RateSchedule([RampStep(0.0, 0.0, 10.0, 100.0), RateStep(50.0, 1.0)])
    assert schedule.rate_at(49.0) == pytest.approx(4.9)
    assert schedule.rate_at(60.0) == 1.0


def test_poisson_windows_are_deterministic_and_match_the_rate() -> None:
    schedule = RateSchedule([RateStep(0.0, 5.0)])
    a, b = RateSource(schedule, seed=3), RateSource(schedule, seed=3)
    w3 = a.window(3)
    assert np.array_equal(w3.times, b.window(3).times)
    assert np.all((w3.times >= 3 * WINDOW_S) & (w3.times < 4 * WINDOW_S))
    counts = [len(a.window(k)) for k in range(20)]
    assert abs(np.mean(counts) - 5.0 * WINDOW_S) < 4 * np.sqrt(5.0 * WINDOW_S / 20)
    assert not np.array_equal(w3.times, RateSource(schedule, seed=4).window(3).times)


def test_trace_source_slices_windows() -> None:
    trace = parse_trace("timestamp\n0\n599.9\n600\n1300\n")
    source = TraceSource(trace, start_s=0.0)
    assert source.window(0).times.tolist() == [0.0, 599.9]
    assert source.window(1).times.tolist() == [600.0]
    assert source.window(2).times.tolist() == [1300.0]
    assert len(source.window(5)) == 0
