"""What one HPA sync reports: its status conditions, its metric proposals, its result.

Follows upstream ``horizontal.go``'s ``setCondition`` / ``setConditionInList`` and
``removeCondition`` (a condition of a type is replaced in place or appended) and the
``autoscaling/v2`` status they write (``HorizontalPodAutoscalerCondition``; the current
metric values and ``desiredReplicas``, carried here by :class:`MetricProposal` and
:class:`ReconcileResult`). The sync that fills them is ``controller``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuscale.controllers._hpa.spec import MetricTarget

__all__ = [
    "Condition",
    "ConditionType",
    "MetricProposal",
    "ReconcileResult",
    "remove_condition",
    "set_condition",
]

ConditionType = Literal["AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"]


@dataclass(frozen=True, slots=True)
class Condition:
    """One entry of ``status.conditions`` (message included, transition time not modelled)."""

    type: ConditionType
    status: Literal["True", "False"]
    reason: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class MetricProposal:
    """What one metric proposed this sync (upstream ``computeReplicasForMetric``)."""

    metric: MetricTarget
    """The metric spec."""
    replicas: int | None
    """The replica proposal, or None when the metric failed."""
    usage_milli: int | None
    """The usage upstream writes to status, in milli-units (Value: total; AverageValue: per pod)."""
    ratio: float | None
    """The usage ratio the tolerance was judged on."""
    error: str | None = None
    """Why the metric failed, when it did."""

    @property
    def usage(self) -> float | None:
        """``usage_milli`` in plain units."""
        return None if self.usage_milli is None else self.usage_milli / 1000

    def describe(self) -> str:
        """One line for logs: ``external metric qps 160 / target 80 (Value) -> desired 2``."""
        target = self.metric.target_milli / 1000
        if self.usage_milli is None or self.replicas is None:
            return f"{self.metric.label}: failed ({self.error})"
        return (
            f"{self.metric.label} {self.usage_milli / 1000:g} / target {target:g} "
            f"({self.metric.target_type}) -> desired {self.replicas}"
        )


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """Everything one sync decided, for logs and timelines."""

    now: float
    """When the sync ran."""
    current_replicas: int
    """The scale's spec replicas the sync started from."""
    replicas: int
    """The scale's spec replicas after the sync (what ``reconcile`` returns)."""
    desired_replicas: int
    """``status.desiredReplicas`` after the sync (unchanged from before when metrics failed)."""
    rescaled: bool
    """Whether the scale subresource was written."""
    metric_replicas: int | None
    """The max over metric proposals, or None when metrics were not computed or all failed."""
    stabilized_replicas: int | None
    """The count after stabilization and before rate limits, when normalization ran."""
    proposals: tuple[MetricProposal, ...]
    """One entry per metric, in spec order (empty when metrics were not computed)."""
    conditions: tuple[Condition, ...]
    """``status.conditions`` after the sync, in upstream's order."""
    rescale_reason: str
    """Upstream's rescale reason, e.g. ``external metric qps above target``."""
    error: str | None
    """The error upstream's reconcile returns, if any (the HPA may still have scaled)."""

    def condition(self, condition_type: ConditionType) -> Condition | None:
        """The condition of that type, if set."""
        for condition in self.conditions:
            if condition.type == condition_type:
                return condition
        return None

    def describe(self) -> str:
        """One line: the proposals and the outcome, with the limiting reason."""
        parts = [proposal.describe() for proposal in self.proposals]
        limited = self.condition("ScalingLimited")
        outcome = f"{self.current_replicas} -> {self.replicas}"
        if limited is not None and limited.status == "True":
            outcome += f" ({limited.reason})"
        return "; ".join([*parts, outcome])


def set_condition(
    conditions: list[Condition],
    condition_type: ConditionType,
    status: bool,
    reason: str,
    message: str,
) -> None:
    """setConditionInList: replace the condition of this type in place, or append it (an
    equal one is left in place: conditions are values)."""
    text: Literal["True", "False"] = "True" if status else "False"
    for index, condition in enumerate(conditions):
        if condition.type == condition_type:
            if (
                condition.status != text
                or condition.reason != reason
                or condition.message != message
            ):
                conditions[index] = Condition(condition_type, text, reason, message)
            return
    conditions.append(Condition(condition_type, text, reason, message))


def remove_condition(conditions: list[Condition], condition_type: ConditionType) -> None:
    """removeCondition: drop the condition of this type, if set."""
    conditions[:] = [c for c in conditions if c.type != condition_type]
