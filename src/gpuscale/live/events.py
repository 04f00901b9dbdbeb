"""Kubernetes events about a workload, and what each says a controller decided.

Events are how the controllers explain themselves: the HPA's ``SuccessfulRescale``, the
scheduler's ``FailedScheduling``, the cluster autoscaler's ``TriggeredScaleUp``, KEDA's
``KEDAScaleTargetActivated``. :func:`event_views` reads ``core/v1`` Event objects into
small values; :func:`decision_for` maps the reasons below to a timeline
:class:`~gpuscale.timeline.Decision` with the controller's own reason, so a live
timeline's decisions line up with the simulator's.

Reasons and where upstream emits them:

===============================  ==================  =====================================
reason                           controller          upstream
===============================  ==================  =====================================
SuccessfulRescale                hpa                 pkg/controller/podautoscaler/horizontal.go
FailedGetExternalMetric,         hpa                 same file (metric errors)
FailedComputeMetricsReplicas
ScalingReplicaSet                replicaset          pkg/controller/deployment/sync.go
SuccessfulCreate/Delete          replicaset          pkg/controller/replicaset/replica_set.go
Scheduled, FailedScheduling      scheduler           pkg/scheduler/schedule_one.go
TriggeredScaleUp,                cluster-autoscaler  cluster-autoscaler/core/scaleup,
NotTriggerScaleUp, ScaleDown                         core/scaledown (event reasons)
Started, Unhealthy, BackOff      kubelet             pkg/kubelet/events/event.go
KEDAScaleTargetActivated,        keda                kedacore/keda pkg/eventreason/eventreason.go
KEDAScaleTargetDeactivated,
KEDAScalerFailed
===============================  ==================  =====================================

Shared by ``gpuscale watch`` and ``verify`` (Pending pods with their scheduler and
autoscaler events). Pure: no client here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.timeline import Decision

__all__ = ["EventView", "decision_for", "event_views", "related_to"]


@dataclass(frozen=True, slots=True)
class EventView:
    """One event, reduced to what a person reads."""

    key: str
    """Identity of this occurrence: the event's uid (or name) and its count."""
    time: str
    """``lastTimestamp``, else ``eventTime``, else ``firstTimestamp`` (RFC 3339)."""
    type: str
    """``Normal`` or ``Warning``."""
    reason: str
    kind: str
    """The involved object's kind: Pod, Deployment, HorizontalPodAutoscaler, Node..."""
    name: str
    namespace: str
    message: str
    count: int = 1
    component: str = ""
    """``source.component`` or ``reportingComponent``."""

    @property
    def target(self) -> str:
        """``kind/namespace/name`` in the timeline's style (``pod/demo/app-1``)."""
        short = {
            "Pod": "pod",
            "Deployment": "deployment",
            "ReplicaSet": "replicaset",
            "HorizontalPodAutoscaler": "hpa",
            "ScaledObject": "scaledobject",
            "Node": "node",
        }.get(self.kind, self.kind.lower())
        return f"{short}/{self.namespace}/{self.name}" if self.namespace else f"{short}/{self.name}"


def event_views(events: Iterable[Mapping[str, Any]]) -> list[EventView]:
    """``core/v1`` Event objects as :class:`EventView`, oldest first."""
    views = []
    for event in events:
        meta = event.get("metadata") or {}
        involved = event.get("involvedObject") or {}
        count = int(event.get("count") or 1)
        views.append(
            EventView(
                key=f"{meta.get('uid') or meta.get('name')}#{count}",
                time=str(
                    event.get("lastTimestamp")
                    or event.get("eventTime")
                    or event.get("firstTimestamp")
                    or ""
                ),
                type=str(event.get("type") or "Normal"),
                reason=str(event.get("reason") or ""),
                kind=str(involved.get("kind") or ""),
                name=str(involved.get("name") or ""),
                namespace=str(involved.get("namespace") or ""),
                message=" ".join(str(event.get("message") or "").split()),
                count=count,
                component=str(
                    (event.get("source") or {}).get("component")
                    or event.get("reportingComponent")
                    or ""
                ),
            )
        )
    return sorted(views, key=lambda v: (v.time, v.key))


def related_to(
    views: Iterable[EventView], deployment: str, names: Iterable[str] = ()
) -> list[EventView]:
    """Events about the Deployment, its ReplicaSets and pods (``<deployment>-…``), the
    objects in ``names`` (its HPA, its ScaledObject), and any Node."""
    wanted = {deployment, *names}
    prefix = f"{deployment}-"
    return [
        v
        for v in views
        if v.name in wanted
        or (v.kind in ("ReplicaSet", "Pod") and v.name.startswith(prefix))
        or v.kind == "Node"
    ]


_DECISIONS: dict[str, tuple[str, str]] = {
    "SuccessfulRescale": ("hpa", "scale"),
    "FailedGetExternalMetric": ("hpa", "hold"),
    "FailedGetPodsMetric": ("hpa", "hold"),
    "FailedComputeMetricsReplicas": ("hpa", "hold"),
    "ScalingReplicaSet": ("replicaset", "scale"),
    "SuccessfulCreate": ("replicaset", "create-pod"),
    "SuccessfulDelete": ("replicaset", "delete-pod"),
    "Scheduled": ("scheduler", "bind"),
    "FailedScheduling": ("scheduler", "hold"),
    "TriggeredScaleUp": ("cluster-autoscaler", "scale-up"),
    "NotTriggerScaleUp": ("cluster-autoscaler", "hold"),
    "FailedToScaleUpGroup": ("cluster-autoscaler", "hold"),
    "ScaleDown": ("cluster-autoscaler", "remove-node"),
    "ScaleDownEmpty": ("cluster-autoscaler", "remove-node"),
    "Started": ("kubelet", "start"),
    "Unhealthy": ("kubelet", "hold"),
    "BackOff": ("kubelet", "hold"),
    "KEDAScaleTargetActivated": ("keda", "activate"),
    "KEDAScaleTargetDeactivated": ("keda", "deactivate"),
    "KEDAScalerFailed": ("keda", "hold"),
}


def decision_for(view: EventView) -> Decision | None:
    """The controller decision an event reports, or None for events that are not one."""
    found = _DECISIONS.get(view.reason)
    if found is None:
        return None
    controller, action = found
    return Decision(
        controller=controller,
        action=action,
        reason=view.reason,
        target=view.target,
        detail=view.message[:300],
    )
