"""Stand-in scaling policies for the simulator's tests: not models of KEDA or the HPA.

They exercise the loops (syncs, the application of decisions) with deliberately simple
rules; the real scalers are ``gpuscale.sim.keda``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuscale.sim.metrics import query_scalar
from gpuscale.sim.scalers import ScaleDecision, ScaleView
from gpuscale.timeline import Decision


@dataclass
class FixedScaler:
    """Stand-in policy: sets ``spec.replicas`` to a schedule of ``(from_time_s, replicas)``."""

    schedule: Sequence[tuple[float, int]]
    name: str = "stand-in"
    period_s: float = 15.0
    first_sync_s: float = 0.0

    def sync(self, view: ScaleView) -> ScaleDecision:
        wanted: int | None = None
        for at, replicas in self.schedule:
            if view.now_s >= at:
                wanted = replicas
        if wanted is None or wanted == view.spec_replicas:
            return ScaleDecision(desired=wanted)
        return ScaleDecision(
            replicas=wanted,
            desired=wanted,
            decisions=(
                Decision(
                    self.name,
                    "scale",
                    "Schedule",
                    f"deployment/{view.namespace}/{view.name}",
                    f"{view.spec_replicas} -> {wanted}",
                ),
            ),
        )


@dataclass
class ThresholdScaler:
    """Stand-in policy: ``ceil(query / target)`` clamped to ``[min_replicas, max_replicas]``.

    Like an HPA AverageValue target without tolerance or rate limits, with an optional
    scale-down window (the highest recommendation of the last ``scale_down_window_s``
    wins) — a deliberately simple policy to exercise the loops, not a model of the HPA.
    """

    query: str
    target: float
    min_replicas: int = 1
    max_replicas: int = 10
    name: str = "stand-in"
    period_s: float = 15.0
    first_sync_s: float = 0.0
    metric: str = "value"
    scale_down_window_s: float = 0.0
    writes: bool = True
    """False: only query and report (like KEDA's poll when minReplicaCount >= 1)."""
    history: list[tuple[float, float | None]] = field(default_factory=list)
    recommendations: list[tuple[float, int]] = field(default_factory=list)

    def sync(self, view: ScaleView) -> ScaleDecision:
        value = query_scalar(view.metrics.query(self.query, view.now_ms))
        self.history.append((view.now_s, value))
        usable = 0.0 if value is None or not math.isfinite(value) else value
        raw = max(self.min_replicas, min(self.max_replicas, math.ceil(usable / self.target)))
        self.recommendations = [
            (t, r) for t, r in self.recommendations if view.now_s - t < self.scale_down_window_s
        ]
        self.recommendations.append((view.now_s, raw))
        desired = max(r for _, r in self.recommendations)
        metrics = {f"query:{self.metric}": value}
        if not self.writes:
            return ScaleDecision(metrics=metrics)
        if desired == view.spec_replicas:
            return ScaleDecision(desired=desired, metrics=metrics)
        return ScaleDecision(
            replicas=desired,
            desired=desired,
            metrics=metrics,
            decisions=(
                Decision(
                    self.name,
                    "scale",
                    "AboveTarget" if desired > view.spec_replicas else "BelowTarget",
                    f"deployment/{view.namespace}/{view.name}",
                    f"{self.metric} {usable:g} / target {self.target:g} -> {desired}",
                ),
            ),
        )
