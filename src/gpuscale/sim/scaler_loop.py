"""The scalers' loop: each :class:`~gpuscale.sim.scalers.Scaler` (KEDA's poll, the HPA,
a stand-in) syncs over a :class:`~gpuscale.sim.scalers.ScaleView` of its workload, and
what it decides is applied to the workload's scale subresource. Pure.

Each loop is scheduled as its upstream loop schedules itself (``gpuscale.sim.timing``
cites the code):

- ``hpa``: the first sync one sync period after KEDA's first reconcile created the HPA
  (``enqueueHPA`` → ``AddRateLimited``); each next one a sync period after the
  previous reconcile *finished* (``processNextWorkItem``), so the loop drifts by one
  reconcile per period;
- ``keda``: the first poll when KEDA's first reconcile starts the loop, then ticks every
  ``pollingInterval`` start to start (``startScaleLoop``); each check reads the clock
  after its queries, a poll latency after its tick;
- any other scaler (the tests' stand-ins): ``first + n * period`` exactly.

With :attr:`~gpuscale.sim.timing.Latencies.exact` timing the HPA and KEDA run on the
exact grid too (the HPA still first syncs one period after its creation).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuscale.sim.cluster import Workload
from gpuscale.sim.engine import Priority
from gpuscale.sim.scalers import ScaleDecision, Scaler, ScaleView
from gpuscale.sim.timing import LoopClock

if TYPE_CHECKING:
    from gpuscale.sim.world import World

__all__ = ["start_scaler"]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def start_scaler(world: World, workload: Workload, scaler: Scaler) -> None:
    """Schedule ``scaler``'s syncs as its upstream loop runs (see the module docstring)."""
    period = float(scaler.period_s)
    first = float(scaler.first_sync_s)
    if not (math.isfinite(period) and period > 0) or not (math.isfinite(first) and first >= 0):
        raise ValueError(f"scaler {scaler.name}: period must be > 0 and first sync >= 0")
    engine = world.engine
    timing = world.spec.timing
    key = workload.spec.key
    if scaler.name not in ("hpa", "keda"):

        def sync(n: int) -> None:
            _scaler_sync(world, workload, scaler)
            engine.at(first + (n + 1) * period, lambda: sync(n + 1), priority=Priority.SCALER)

        engine.at(first, lambda: sync(0), priority=Priority.SCALER)
        return
    clock = LoopClock(timing, world.seed, scaler.name, key)
    # KEDA's first reconcile of the ScaledObject starts its loop and creates its HPA
    started = first + timing.draw_once(timing.keda_start_s, world.seed, "keda-start", key)
    if scaler.name == "hpa":

        def reconcile() -> None:
            _scaler_sync(world, workload, scaler)
            done = engine.now + clock.latency(timing.hpa_reconcile_s)
            engine.at(done + period, reconcile, priority=Priority.SCALER)

        engine.at(started + period, reconcile, priority=Priority.SCALER)
        return

    def check(tick: float) -> None:
        _scaler_sync(world, workload, scaler)
        following = max(tick + period, engine.now)
        engine.at(
            following + clock.latency(timing.keda_poll_s),
            lambda: check(following),
            priority=Priority.SCALER,
        )

    engine.at(
        started + clock.latency(timing.keda_poll_s),
        lambda: check(started),
        priority=Priority.SCALER,
    )


def _scale_view(world: World, workload: Workload) -> ScaleView:
    status = ready = available = 0
    for pod in workload.pods.values():
        if pod.deleted_at is None:
            status += 1
            if pod.state == "Ready":
                ready += 1
                if pod.available:
                    available += 1
    spec = workload.spec
    return ScaleView(
        now_s=world.engine.now,
        namespace=spec.namespace,
        name=spec.name,
        spec_replicas=workload.spec_replicas,
        status_replicas=status,
        ready_replicas=ready,
        available_replicas=available,
        metrics=world.metrics,
        clock_phase_s=world.clock_phase,
    )


def _scaler_sync(world: World, workload: Workload, scaler: Scaler) -> None:
    decision: ScaleDecision = scaler.sync(_scale_view(world, workload))
    changed = False
    for name, value in decision.metrics.items():
        if name not in workload.metrics or not _same(workload.metrics[name], value):
            workload.metrics[name] = value
            changed = True
    if decision.desired is not None and decision.desired != workload.desired:
        workload.desired = decision.desired
        changed = True
    if decision.decisions:
        world.recorder.decisions.extend(decision.decisions)
        changed = True
    if decision.replicas is not None and decision.replicas != workload.spec_replicas:
        if decision.replicas < 0:
            raise ValueError(f"scaler {scaler.name} asked for {decision.replicas} replicas")
        workload.spec_replicas = decision.replicas
        changed = True
        world.request_rs_sync(workload)
    if changed:
        workload.shown = None
        world.recorder.touch()
