"""How much work a simulation is, estimated from its inputs before it starts.

A run's cost is its loop events (every scrape, KEDA poll, HPA sync and cluster-autoscaler
scan over the horizon) plus its requests (each is drawn, routed and accounted). Both are
known before the run: loop events are the horizon times the loops' rates, and requests
are the trace's length times the number of times it is tiled into the horizon, or the
integral of the scenario's request rates. The caller compares the total with a limit and
refuses what would run for hours (``gpuscale simulate --max-work``), so a typo such as
``until: 100000d`` or ``--speedup 1e-9`` costs a one-line error, not an afternoon.

Measured (``gpuscale simulate``, one core of a shared laptop-class machine, the tutorial
with a gauge scenario and with the Azure conversation trace tiled): about 30,000 loop
events per second, and about 4 µs and 300 bytes of memory per request; 10 million units
(:data:`DEFAULT_MAX_WORK`) is a few minutes of loops, or about a minute and 3 GB of
requests. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.sim.inputs import SimulationInputs
from gpuscale.sim.scenario import RampStep, RateStep, Scenario
from gpuscale.sim.specs import EngineCapacity

if TYPE_CHECKING:
    from gpuscale.sim.traces import Trace

__all__ = ["DEFAULT_MAX_WORK", "ENGINE_REQUEST", "WorkEstimate", "estimate_work"]

DEFAULT_MAX_WORK = 10_000_000
"""Work units (loop events + requests) a run may take unless the user raises the limit."""

ENGINE_REQUEST = 10
"""Work units of one request served by a vLLM engine (``serving.kind: vllm``): it costs
about ten times a queue-model request (``benchmarks/sim_vllm.py``,
``docs/benchmarks/serving.md``)."""


@dataclass(frozen=True)
class WorkEstimate:
    """A run's expected work, in loop events and requests."""

    horizon_s: float
    loops_per_s: float
    """Loop events per virtual second (scrapes, polls, syncs, scans)."""
    requests: float
    """Expected requests over the horizon."""
    engine_requests: float = 0.0
    """Of those, requests to ``serving.kind: vllm`` workloads, which cost more each."""

    @property
    def loop_events(self) -> float:
        """Loop events over the horizon."""
        return self.horizon_s * self.loops_per_s

    @property
    def total(self) -> float:
        """Loop events plus requests, each engine request counted :data:`ENGINE_REQUEST`
        times (infinite when the inputs are)."""
        return self.loop_events + self.requests + (ENGINE_REQUEST - 1) * self.engine_requests


def _rate(period: float | None) -> float:
    return 1.0 / period if period is not None and period > 0 else 0.0


def _loops_per_s(inputs: SimulationInputs) -> float:
    spec = inputs.spec
    rate = _rate(spec.prometheus.scrape_interval_s)
    rate += _rate(spec.control_plane.hpa.sync_period_s)
    rate += _rate(spec.autoscaler.scan_interval_s)
    for source in inputs.scaled_objects:
        rate += _rate(float(source.spec.polling_interval))
    return rate


def _scenario_requests(scenario: Scenario, horizon: float) -> float:
    """The integral of every workload's request rate over ``[0, horizon]``: each rate or
    ramp step holds for its workload until that workload's next rate or ramp step."""
    by_workload: dict[str | None, list[RateStep | RampStep]] = {}
    for step in scenario.steps:
        if isinstance(step, RateStep | RampStep):
            by_workload.setdefault(step.workload, []).append(step)
    total = 0.0
    for steps in by_workload.values():
        for index, step in enumerate(steps):
            end = min(steps[index + 1].at if index + 1 < len(steps) else horizon, horizon)
            length = max(end - step.at, 0.0)
            if isinstance(step, RateStep):
                total += step.rate * length
                continue
            ramping = min(step.over, length)
            slope = (step.end - step.start) / step.over
            total += step.start * ramping + slope * ramping * ramping / 2
            total += step.end * max(length - step.over, 0.0)
    return total


def _trace_requests(trace: Trace, horizon: float) -> float:
    if len(trace) == 0:
        return 0.0
    if trace.period <= 0:
        return float(len(trace))
    tiles = horizon / trace.period
    return len(trace) * (float(math.ceil(tiles)) if math.isfinite(tiles) else math.inf)


def estimate_work(
    inputs: SimulationInputs,
    *,
    horizon_s: float,
    scenario: Scenario | None = None,
    traces: Mapping[str, Trace] | None = None,
) -> WorkEstimate:
    """The expected work of simulating ``inputs`` for ``horizon_s`` under the load, with
    traces given untiled (they are counted as tiled into the horizon)."""
    requests = 0.0 if scenario is None else _scenario_requests(scenario, horizon_s)
    engines = {w.name for w in inputs.spec.workloads if isinstance(w.capacity, EngineCapacity)}
    engine_requests = 0.0
    for name, trace in (traces or {}).items():
        count = _trace_requests(trace, horizon_s)
        requests += count
        if name.split("/")[-1] in engines:
            engine_requests += count
    return WorkEstimate(horizon_s, _loops_per_s(inputs), requests, engine_requests)
