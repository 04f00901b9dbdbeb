"""Run a simulation: the world in an engine, advanced in virtual time.

:class:`Simulation` is the entry point. ``run(until)`` replays as fast as the CPU
allows; ``advance_to(t)`` moves to any later time and stops there, so the same world can
be driven tick by tick in tests or by a wall clock. Both keep the run
deterministic for a seed: arrivals are drawn per fixed window and every other random
choice comes from streams derived from the seed, so how a run is stepped does not
change what happens.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence

from gpuscale.sim.engine import EventLoop
from gpuscale.sim.metrics import MetricsBackend
from gpuscale.sim.scalers import Scaler
from gpuscale.sim.specs import SimulationSpec
from gpuscale.sim.world import LoadSpec, SimulationResult, World

__all__ = ["Simulation"]


class Simulation:
    """A simulated cluster under a load, with its scalers, in virtual time from 0."""

    def __init__(
        self,
        spec: SimulationSpec,
        *,
        metrics: MetricsBackend,
        seed: int = 0,
        scalers: Mapping[str, Sequence[Scaler]] | None = None,
        load: LoadSpec | None = None,
        warm_start: bool = True,
        audit: bool = False,
        scrape_only: Collection[str] | None = None,
    ) -> None:
        """Build the world at time 0.

        ``scalers`` maps a workload name to the scalers (KEDA, HPA or stand-ins) that
        resize it. With ``warm_start`` the initial replicas are already Ready at 0, as a
        Deployment running before the scenario begins; otherwise they start cold. With
        ``audit`` the world checks its invariants as it goes (see ``result().audit``).
        ``scrape_only`` names the metrics the scalers' queries can select: only those are
        stored, which changes no answer (``gpuscale.sim.scrape``); None stores everything.
        """
        self.engine = EventLoop()
        self.world = World(
            spec,
            metrics=metrics,
            seed=seed,
            scalers=scalers,
            load=load,
            warm_start=warm_start,
            audit=audit,
            engine=self.engine,
            scrape_only=scrape_only,
        )
        self.events = 0

    @property
    def now(self) -> float:
        """Virtual seconds since the start."""
        return self.engine.now

    def advance_to(self, t: float) -> None:
        """Run everything due up to ``t`` and stop there."""
        self.events += self.engine.advance_to(t)

    def run(
        self,
        until: float,
        *,
        progress: Callable[[float], None] | None = None,
        progress_every_s: float = 3600.0,
    ) -> SimulationResult:
        """Advance to ``until`` and return the result; ``progress(t)`` is called on the way."""
        if not (math.isfinite(until) and until >= self.now):
            raise ValueError(f"until must be a finite time not before now, got {until!r}")
        while self.now < until:
            step = min(until, self.now + progress_every_s)
            self.advance_to(step)
            if progress is not None:
                progress(self.now)
        return self.result()

    def result(self) -> SimulationResult:
        """The result of the run so far (accounts requests up to now)."""
        result = self.world.finish(self.now)
        return SimulationResult(
            header=result.header,
            records=result.records,
            requests=result.requests,
            cost=result.cost,
            until=result.until,
            events=self.events,
            scrapes=result.scrapes,
            audit=result.audit,
        )
