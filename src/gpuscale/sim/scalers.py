"""The seam for the objects that write a Deployment's scale subresource: KEDA's polling
loop and the HPA's sync loop.

The simulator calls each :class:`Scaler` at its own period (``period_s``, first at
``first_sync_s``; ``gpuscale.sim.scaler_loop`` schedules KEDA's and the HPA's loops as
upstream does, with the run's latencies), handing it a :class:`ScaleView` of its
target — spec, status and ready replicas, the current time and the metrics backend to
query — and applies the :class:`ScaleDecision` it returns: ``replicas`` is written to
``spec.replicas`` (as the scale subresource would be), ``desired`` is shown as the
HPA's ``status.desiredReplicas``, ``metrics`` are recorded as named values in the
timeline (``query:<name>`` for what the query returned, ``hpa:<name>`` for what the HPA
read) and ``decisions`` are recorded with their reasons.

The scalers are KEDA's polling loop and the HPA KEDA generates, both in
:mod:`gpuscale.sim.keda` (``ScaledObjectLoops``) over ``gpuscale.controllers.keda`` and
``gpuscale.controllers.hpa``; and :class:`ReplicaSchedule`, a replica count fixed in
advance for each moment (``gpuscale tune``'s clairvoyant reference), which writes
``spec.replicas`` as a person with ``kubectl scale`` on a timer would. The tests'
stand-ins are in ``tests/unit/sim/standins.py``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from gpuscale.sim.metrics import MetricsBackend
from gpuscale.timeline import Decision

__all__ = ["ReplicaSchedule", "ScaleDecision", "ScaleView", "Scaler"]


@dataclass(frozen=True, slots=True)
class ScaleView:
    """What a scaler sees of its target at one sync."""

    now_s: float
    """Seconds since the start of the run."""
    namespace: str
    name: str
    """The Deployment."""
    spec_replicas: int
    """``spec.replicas`` (KEDA's and the HPA's "current replicas")."""
    status_replicas: int
    """``status.replicas``: non-terminated pods, Pending included."""
    ready_replicas: int
    """``status.readyReplicas``."""
    available_replicas: int
    """``status.availableReplicas``."""
    metrics: MetricsBackend
    """Where to run queries, at ``now_ms``."""
    clock_phase_s: float = 0.0
    """The sub-second part of the wall clock at ``t = 0``: a ``metav1.Time`` written at
    ``t`` reads back as :func:`gpuscale.sim.timing.whole_seconds` of it."""

    @property
    def now_ms(self) -> int:
        """The current time in integer milliseconds, as queries take it."""
        return round(self.now_s * 1000)


@dataclass(frozen=True, slots=True)
class ScaleDecision:
    """What one sync decided."""

    replicas: int | None = None
    """New ``spec.replicas``; None leaves it alone."""
    desired: int | None = None
    """The HPA's ``status.desiredReplicas`` to show; None keeps the last one."""
    decisions: tuple[Decision, ...] = ()
    """Decisions to record, with upstream's reasons."""
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    """Named values to record (``query:<metric>``, ``hpa:<metric>``)."""


@runtime_checkable
class Scaler(Protocol):
    """A loop that may rescale one Deployment: KEDA's poll or the HPA's sync."""

    @property
    def name(self) -> str:
        """``keda`` or ``hpa`` (or a stand-in's name); used as the decisions' controller."""

    @property
    def period_s(self) -> float:
        """Seconds between the starts of two syncs (pollingInterval, sync period)."""

    @property
    def first_sync_s(self) -> float:
        """When the first sync runs (seconds since the start)."""

    def sync(self, view: ScaleView) -> ScaleDecision:
        """Run one sync against ``view``."""


@dataclass(frozen=True, slots=True)
class ReplicaSchedule:
    """Replicas given in advance: from ``times[i]`` on, ``replicas[i]`` (before
    ``times[0]``, the Deployment's own). At each sync it writes the count due then."""

    times: Sequence[float]
    """Increasing seconds since the start."""
    replicas: Sequence[int]
    period_s: float = 15.0
    first_sync_s: float = 0.0
    name: str = "schedule"

    def __post_init__(self) -> None:
        if len(self.times) != len(self.replicas):
            raise ValueError("a replica schedule needs one count per time")
        if any(b <= a for a, b in zip(self.times, self.times[1:], strict=False)):
            raise ValueError("a replica schedule's times must increase")
        if any(r < 0 for r in self.replicas):
            raise ValueError("a replica schedule's counts must be >= 0")
        if not self.period_s > 0:
            raise ValueError("a replica schedule's period must be > 0")

    def due(self, t: float) -> int | None:
        """The count due at ``t`` (None before the first time)."""
        index = bisect.bisect_right(self.times, t) - 1
        return None if index < 0 else self.replicas[index]

    def sync(self, view: ScaleView) -> ScaleDecision:
        """Write the count due now, if it differs from ``spec.replicas``."""
        wanted = self.due(view.now_s)
        if wanted is None or wanted == view.spec_replicas:
            return ScaleDecision(desired=wanted)
        decision = Decision(
            self.name,
            "scale",
            "Scheduled",
            target=f"deployment/{view.namespace}/{view.name}",
            detail=f"{view.spec_replicas} -> {wanted} (the schedule)",
        )
        return ScaleDecision(replicas=wanted, desired=wanted, decisions=(decision,))
