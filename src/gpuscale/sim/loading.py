"""The load on the simulated cluster: a scenario's gauge steps applied to pods, its
request-rate steps and the traces turned into request sources, each bound to its
workload's router. Pure.

A gauge step sets the gauge on pods the Service routes to (those whose program does not
serve yet refuse it, as a real connection would be refused); a rate or a trace feeds
the workload's :class:`~gpuscale.sim.requests.Router`, and the rate the load asks for
(or, for a trace, the rate measured each minute) goes into the timeline's ``load``.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.errors import InputError
from gpuscale.sim.cluster import Workload
from gpuscale.sim.engine import Priority
from gpuscale.sim.load_checks import check_capacity, step_workload
from gpuscale.sim.scenario import GaugeStep, RampStep, RateStep, Scenario
from gpuscale.sim.specs import RequestCapacity
from gpuscale.timeline import Decision

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gpuscale.sim.load import RateSchedule, RateSource, TraceSource
    from gpuscale.sim.traces import Trace
    from gpuscale.sim.world import World

__all__ = ["LoadDriver", "LoadSpec"]


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """The load driving a run."""

    scenario: Scenario | None = None
    """Timed steps: gauges, request rates, ramps."""
    traces: Mapping[str, Trace] = field(default_factory=dict)
    """Workload name → the trace (already scaled and tiled) its Service receives."""


class LoadDriver:
    """Schedules a :class:`LoadSpec` on a world (at construction) and applies its steps."""

    __slots__ = ("_lb_rng", "_track_busy", "_world", "spec")

    def __init__(
        self,
        world: World,
        spec: LoadSpec,
        *,
        load_seed: int,
        router_seed: int,
        lb_rng: random.Random,
        track_busy: bool,
    ) -> None:
        self._world = world
        self.spec = spec
        self._lb_rng = lb_rng
        self._track_busy = track_busy
        self._setup(load_seed, router_seed)

    def _setup(self, load_seed: int, router_seed: int) -> None:
        world = self._world
        scenario = self.spec.scenario
        names_of = [w.spec.name for w in world.workloads.values()]
        rate_steps: dict[str, list[RateStep | RampStep]] = {}
        if scenario is not None:
            names = ", ".join(w.spec.name for w in world.workloads.values())
            for step in scenario.steps:
                where = f"{scenario.source}:{step.line}" if step.line else scenario.source
                named = step_workload(step, names_of)
                try:
                    target = None if named is None else world.workload(named)
                except KeyError:
                    raise InputError(
                        f"no workload named {step.workload!r}",
                        where=where,
                        fix=f"name one of: {names}",
                    ) from None
                if target is None:
                    raise InputError(
                        "the step names no workload and the simulation has several",
                        where=where,
                        fix=f"add 'workload:' to the step or the scenario (one of: {names})",
                    )
                if isinstance(step, GaugeStep):
                    world.engine.at(
                        step.at,
                        functools.partial(self._set_gauge, target, step),
                        priority=Priority.LOAD,
                    )
                else:
                    rate_steps.setdefault(target.spec.key, []).append(step)
        for workload in world.workloads.values():
            trace = self.spec.traces.get(workload.spec.name) or self.spec.traces.get(
                workload.spec.key
            )
            steps = rate_steps.get(workload.spec.key)
            if trace is not None and steps:
                first = steps[0]
                assert scenario is not None
                raise InputError(
                    f"workload {workload.spec.name} gets requests from both a trace and the "
                    "scenario's request_rate/ramp steps",
                    where=f"{scenario.source}:{first.line}" if first.line else scenario.source,
                    fix="send its requests from one of them (a scenario's set_gauge steps "
                    "combine with a trace)",
                )
        check_capacity(scenario, self.spec.traces, world.spec.workloads)
        for index, workload in enumerate(world.workloads.values()):
            trace = self.spec.traces.get(workload.spec.name) or self.spec.traces.get(
                workload.spec.key
            )
            steps = rate_steps.get(workload.spec.key)
            if trace is None and not steps:
                continue
            # Requests need numpy (sim.load, sim.requests, sim.serving); a run of gauge
            # steps alone imports none of them.
            from gpuscale.sim.load import RateSchedule, RateSource, TraceSource  # noqa: PLC0415
            from gpuscale.sim.requests import Router  # noqa: PLC0415
            from gpuscale.sim.serving import EngineRouter, reads_histograms  # noqa: PLC0415

            capacity = workload.spec.capacity
            assert capacity is not None  # check_capacity above
            if trace is not None:
                source: TraceSource | RateSource = TraceSource(trace)
            else:
                assert steps is not None
                schedule = RateSchedule(steps)
                source = RateSource(schedule, seed=load_seed + index)
                for t in schedule.change_times():
                    world.engine.at(
                        t,
                        functools.partial(self._record_rate, workload, schedule),
                        priority=Priority.LOAD,
                    )
            round_robin = world.spec.control_plane.load_balancing == "round-robin"
            if isinstance(capacity, RequestCapacity):
                workload.router = Router(
                    source,
                    capacity,
                    buckets=workload.spec.metric_names.buckets,
                    seed=router_seed + index,
                    round_robin=round_robin,
                    track_busy=self._track_busy,
                )
            else:
                workload.router = EngineRouter(
                    source,
                    capacity,
                    seed=router_seed + index,
                    round_robin=round_robin,
                    track_busy=self._track_busy,
                    histograms=reads_histograms(world.scrape.keep),
                )
            world.servers[workload.spec.key] = []
            if trace is not None:
                world.engine.at(
                    60.0, functools.partial(self._measure_rate, workload, 0), priority=Priority.LOAD
                )

    def _record_rate(self, workload: Workload, schedule: RateSchedule) -> None:
        world = self._world
        world.load_values[f"request_rate:{workload.spec.name}"] = schedule.rate_at(world.engine.now)
        world.recorder.touch()

    def _measure_rate(self, workload: Workload, last: int) -> None:
        world = self._world
        router = workload.router
        assert router is not None
        router.advance(world.engine.now)
        rate = (router.arrived - last) / 60.0
        key = f"arrival_rate:{workload.spec.name}"
        if world.load_values.get(key) != rate:
            world.load_values[key] = rate
            world.recorder.touch()
        arrived = router.arrived
        world.engine.after(
            60.0, lambda: self._measure_rate(workload, arrived), priority=Priority.LOAD
        )

    def _set_gauge(self, workload: Workload, step: GaugeStep) -> None:
        world = self._world
        targets = [p for p in workload.pods.values() if p.routable and p.gone_at > world.engine.now]
        target_name = f"deployment/{workload.spec.key}"
        if not targets:
            world.recorder.decide(
                Decision(
                    "load",
                    "set_gauge",
                    "NoEndpoints",
                    target_name,
                    f"{step.name}={step.value:g}: the Service has no ready pods",
                )
            )
            return
        chosen = (
            targets
            if step.pods is None
            else self._lb_rng.sample(targets, min(step.pods, len(targets)))
        )
        refused = [p for p in chosen if world.engine.now < p.serving_at]
        if refused:
            world.recorder.decide(
                Decision(
                    "load",
                    "set_gauge",
                    "ConnectionRefused",
                    target_name,
                    f"{step.name}={step.value:g}: {', '.join(p.name for p in refused)} is Ready "
                    "but its program does not serve yet",
                )
            )
            chosen = [p for p in chosen if p not in refused]
            if not chosen:
                return
        for pod in chosen:
            pod.gauges[step.name] = step.value
        world.load_values[step.name] = step.value
        world.recorder.decide(
            Decision(
                "load",
                "set_gauge",
                "Scenario",
                target_name,
                f"{step.name}={step.value:g} on {', '.join(p.name for p in chosen)}",
            )
        )
