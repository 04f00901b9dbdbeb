"""Where requests come from: a trace, or a rate over time from a scenario, cut into fixed
windows of arrivals that are the same however the simulation is stepped.

Arrivals are produced window by window (``WINDOW_S`` seconds each, window ``k`` covering
``[k·W, (k+1)·W)``). A rate schedule draws each window from its own random stream,
seeded by the run's seed and ``k``, so a run advanced in one call or in ten thousand
gives the same requests. A rate schedule is piecewise linear (``request_rate`` steps and
``ramp`` steps); its arrivals are a non-homogeneous Poisson process, drawn by inverting
the cumulative rate Λ(t): unit-rate points in ``[Λ(a), Λ(b))`` mapped back through
Λ⁻¹, vectorised with numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from gpuscale.sim.scenario import RampStep, RateStep
from gpuscale.sim.traces import TiledTrace, Trace

__all__ = [
    "WINDOW_S",
    "ArrivalSource",
    "Arrivals",
    "FloatArray",
    "IntArray",
    "RateSchedule",
    "RateSource",
    "TraceSource",
]

WINDOW_S = 600.0
"""Seconds of arrivals produced at a time."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class Arrivals:
    """Requests arriving in one window, sorted by time."""

    times: FloatArray
    prompt_tokens: IntArray
    output_tokens: IntArray

    def __len__(self) -> int:
        return int(self.times.shape[0])


class ArrivalSource(Protocol):
    """Something that yields the arrivals of window ``k``."""

    has_tokens: bool

    def window(self, k: int) -> Arrivals:
        """Arrivals in ``[k·WINDOW_S, (k+1)·WINDOW_S)``."""


class TraceSource:
    """Arrivals replayed from a (scaled, tiled) trace, shifted to start at ``start_s``.

    A :class:`TiledTrace` is read tile by tile: :attr:`times` is filled as the windows
    reach each tile, and the token counts of a window are read from the one tile they
    repeat, so a week of a trace costs its arrival times (27 MB for the conversation
    trace), not the three whole arrays (80 MB)."""

    def __init__(self, trace: Trace, *, start_s: float = 0.0) -> None:
        if not (math.isfinite(start_s) and start_s >= 0):
            raise ValueError(f"trace start must be >= 0 seconds, got {start_s!r}")
        self.has_tokens = trace.has_tokens
        self._start = start_s
        self._tiled = trace if isinstance(trace, TiledTrace) and trace.ordered else None
        if isinstance(trace, TiledTrace) and trace.ordered:
            self.times: FloatArray = np.empty(len(trace), dtype=np.float64)
            """Every arrival, in order (the windows are consecutive slices of it); for a
            tiled trace, filled up to :attr:`_placed` as the windows reach the tiles."""
            self._placed = 0
            self._tile = 0
            self._prompt = trace.base.prompt_tokens
            self._output = trace.base.output_tokens
            return
        # start 0 adds nothing (x + 0.0 is x for the non-negative offsets a trace holds):
        # share the trace's array rather than copy it
        self.times = trace.offsets if start_s == 0 else trace.offsets + start_s
        self._prompt = trace.prompt_tokens
        self._output = trace.output_tokens

    def window(self, k: int) -> Arrivals:
        bounds = [k * WINDOW_S, (k + 1) * WINDOW_S]
        if self._tiled is None:
            lo, hi = np.searchsorted(self.times, bounds, side="left")
            return Arrivals(self.times[lo:hi], self._prompt[lo:hi], self._output[lo:hi])
        self._place_before(bounds[1])
        placed = self.times[: self._placed]
        # every arrival not yet placed is at or after the window's end (the tiles are in
        # order), so the search over the placed ones finds what a search over all would
        lo, hi = np.searchsorted(placed, bounds, side="left")
        first = lo % len(self._prompt)
        if first + (hi - lo) <= len(self._prompt):  # within one tile: views, no copies
            last = first + (hi - lo)
            return Arrivals(placed[lo:hi], self._prompt[first:last], self._output[first:last])
        rows = np.arange(lo, hi) % len(self._prompt)
        return Arrivals(placed[lo:hi], self._prompt[rows], self._output[rows])

    def _place_before(self, end: float) -> None:
        """Place whole tiles until the next one starts at or after ``end``."""
        tiled = self._tiled
        assert tiled is not None
        base = tiled.base.offsets
        while self._placed < tiled.keep:
            first = base[0] + tiled.starts[self._tile]
            if self._start != 0:
                first = first + self._start
            if first >= end:
                return
            values = tiled.tile_offsets(self._tile)
            if self._start != 0:
                values = values + self._start
            count = min(len(values), tiled.keep - self._placed)
            self.times[self._placed : self._placed + count] = values[:count]
            self._placed += count
            self._tile += 1


@dataclass(frozen=True, slots=True)
class _Segment:
    start: float
    end: float
    r0: float
    r1: float

    @property
    def slope(self) -> float:
        return 0.0 if math.isinf(self.end) else (self.r1 - self.r0) / (self.end - self.start)


class RateSchedule:
    """A piecewise-linear request rate built from scenario steps (requests per second)."""

    def __init__(self, steps: Sequence[RateStep | RampStep]) -> None:
        ordered = sorted(steps, key=lambda s: s.at)
        segments: list[_Segment] = []
        cursor, rate = 0.0, 0.0
        for index, step in enumerate(ordered):
            if step.at > cursor:
                segments.append(_Segment(cursor, step.at, rate, rate))
            nxt = ordered[index + 1].at if index + 1 < len(ordered) else math.inf
            if isinstance(step, RateStep):
                rate = step.rate
                cursor = step.at
                continue
            ramp_end = step.at + step.over
            cut = min(ramp_end, nxt)
            at_cut = step.start + (step.end - step.start) * (cut - step.at) / step.over
            if cut > step.at:
                segments.append(_Segment(step.at, cut, step.start, at_cut))
            cursor, rate = cut, (step.end if cut >= ramp_end else at_cut)
        segments.append(_Segment(cursor, math.inf, rate, rate))
        self._segments = [s for s in segments if s.end > s.start]
        self._starts = np.array([s.start for s in self._segments])
        cumulative = [0.0]
        for s in self._segments[:-1]:
            width = s.end - s.start
            cumulative.append(cumulative[-1] + width * (s.r0 + s.r1) / 2)
        self._cumulative = np.array(cumulative)

    def rate_at(self, t: float) -> float:
        """The rate at time ``t``."""
        s = self._segments[int(np.searchsorted(self._starts, t, side="right")) - 1]
        return s.r0 + s.slope * (t - s.start)

    def change_times(self) -> list[float]:
        """Times where the rate function has a corner (segment starts)."""
        return [s.start for s in self._segments]

    def cumulative(self, t: float) -> float:
        """Λ(t): expected arrivals in ``[0, t)``."""
        k = int(np.searchsorted(self._starts, t, side="right")) - 1
        s = self._segments[k]
        x = t - s.start
        return float(self._cumulative[k]) + s.r0 * x + 0.5 * s.slope * x * x

    def inverse(self, values: FloatArray) -> FloatArray:
        """Λ⁻¹ of each value (vectorised)."""
        k = np.searchsorted(self._cumulative, values, side="right") - 1
        starts = self._starts[k]
        r0 = np.array([s.r0 for s in self._segments])[k]
        slope = np.array([s.slope for s in self._segments])[k]
        d = values - self._cumulative[k]
        root = np.sqrt(np.maximum(r0 * r0 + 2.0 * slope * d, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(r0 + root > 0, 2.0 * d / (r0 + root), 0.0)
        result: FloatArray = starts + x
        return result


class RateSource:
    """Poisson arrivals following a :class:`RateSchedule` (window ``k``: stream ``(seed, k)``)."""

    has_tokens = False

    def __init__(self, schedule: RateSchedule, *, seed: int) -> None:
        self.schedule = schedule
        self._seed = seed
        self._empty_int = np.zeros(0, dtype=np.int64)

    def window(self, k: int) -> Arrivals:
        rng = np.random.default_rng([self._seed, k])
        lo = self.schedule.cumulative(k * WINDOW_S)
        hi = self.schedule.cumulative((k + 1) * WINDOW_S)
        count = int(rng.poisson(hi - lo)) if hi > lo else 0
        if count == 0:
            return Arrivals(np.zeros(0), self._empty_int, self._empty_int)
        points = np.sort(rng.uniform(lo, hi, size=count))
        times = self.schedule.inverse(points)
        times = np.clip(times, k * WINDOW_S, np.nextafter((k + 1) * WINDOW_S, -math.inf))
        zeros = np.zeros(count, dtype=np.int64)
        return Arrivals(times, zeros, zeros)
