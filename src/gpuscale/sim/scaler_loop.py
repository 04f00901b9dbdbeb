"""The scalers' loop: each :class:`~gpuscale.sim.scalers.Scaler` (KEDA's poll, the HPA,
a stand-in) syncs at its own period over a :class:`~gpuscale.sim.scalers.ScaleView` of
its workload, and what it decides is applied to the workload's scale subresource. Pure.

Syncs run at ``first + n * period`` (not "period after the last"), so a slow step does
not make the loop drift from the one a controller's ticker would give.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuscale.sim.cluster import Workload
from gpuscale.sim.engine import Priority
from gpuscale.sim.scalers import ScaleDecision, Scaler, ScaleView

if TYPE_CHECKING:
    from gpuscale.sim.world import World

__all__ = ["start_scaler"]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def start_scaler(world: World, workload: Workload, scaler: Scaler) -> None:
    """Sync ``scaler`` at its first sync time, then every period."""
    period = float(scaler.period_s)
    first = float(scaler.first_sync_s)
    if not (math.isfinite(period) and period > 0) or not (math.isfinite(first) and first >= 0):
        raise ValueError(f"scaler {scaler.name}: period must be > 0 and first sync >= 0")

    def sync(n: int) -> None:
        _scaler_sync(world, workload, scaler)
        world.engine.at(first + (n + 1) * period, lambda: sync(n + 1), priority=Priority.SCALER)

    world.engine.at(first, lambda: sync(0), priority=Priority.SCALER)


def _scale_view(world: World, workload: Workload) -> ScaleView:
    active = workload.active()
    return ScaleView(
        now_s=world.engine.now,
        namespace=workload.spec.namespace,
        name=workload.spec.name,
        spec_replicas=workload.spec_replicas,
        status_replicas=len(active),
        ready_replicas=sum(1 for p in active if p.state == "Ready"),
        available_replicas=sum(1 for p in active if p.state == "Ready" and p.available),
        metrics=world.metrics,
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
        world.recorder.touch()
