"""What ``gpuscale watch`` sees, and the timeline records it writes: pure functions.

One tick of the watch reads the Deployment, its pods, the nodes, its ScaledObject and
HPA, the events and the trigger query's value (:mod:`gpuscale.live.watcher` does the
reading), and :func:`build_snapshot` turns those API documents into a
:class:`Snapshot`. :func:`advance` compares it with the last one and returns the
:class:`~gpuscale.timeline.Record` to write when anything changed, so a live timeline
has exactly the shape the simulator writes and ``gpuscale report`` can lay prediction
and reality side by side. :func:`render` draws the terminal view.

How the API's states map onto the timeline's:

- pods (``WorkloadState.pods``): ``Terminating`` when ``deletionTimestamp`` is set;
  ``Pending`` until bound (no ``spec.nodeName``); ``Ready`` with the ``Ready``
  condition; ``Starting`` in between (pulling, starting, not yet passing readiness).
- nodes (``Record.nodes``): ``deleting`` when ``deletionTimestamp`` is set or the cluster
  autoscaler tainted it ``ToBeDeletedByClusterAutoscaler``; ``ready`` with the ``Ready``
  condition; ``provisioning`` otherwise. Nodes are grouped by their pool label
  (DOKS ``doks.digitalocean.com/node-pool``; GKE, EKS, AKS and Karpenter labels too).
  A Droplet that has not registered as a Node yet is invisible here; the cluster
  autoscaler's ``TriggeredScaleUp`` event marks when it was asked for.
- cost: each pool's node count (every state is billed) times its price per hour from
  the profile, summed between ticks; an approximation at the tick's resolution.
- decisions: the controllers' events (:func:`gpuscale.live.events.decision_for`), each
  written once.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpuscale.kube import format_duration, quantity_or_none
from gpuscale.live.events import EventView, decision_for, event_views, related_to
from gpuscale.profile import Profile
from gpuscale.timeline import Decision, Record, WorkloadState

__all__ = [
    "POOL_LABELS",
    "ConditionView",
    "HpaView",
    "QueryAnswer",
    "Snapshot",
    "WatchState",
    "advance",
    "build_snapshot",
    "find_hpa",
    "find_scaled_object",
    "node_pool",
    "node_state",
    "pod_phase",
    "pools_from_profile",
    "prometheus_trigger",
    "render",
]

POOL_LABELS = (
    "doks.digitalocean.com/node-pool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
)
"""Node labels naming the node pool, the DOKS one first."""


@dataclass(frozen=True, slots=True)
class ConditionView:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class HpaView:
    """The HPA driving the Deployment, as its status reports it."""

    name: str
    current: int | None
    desired: int | None
    metric: str
    """The first metric's name (``s0-prometheus`` for a KEDA trigger)."""
    value: float | None
    """What the HPA last read for that metric (``status.currentMetrics``)."""
    target: float | None
    target_type: str
    conditions: tuple[ConditionView, ...] = ()


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    """The trigger query's result as Prometheus returned it."""

    value: float | None
    """The single series' value; None when empty, several series, NaN or an error."""
    series: int
    error: str | None = None
    source: str = ""
    """The Prometheus it was asked (a URL, or ``service/ns/name`` through a port-forward)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one tick observed."""

    t: float
    """Seconds since the watch started."""
    namespace: str
    deployment: str
    spec: int
    status: int
    ready: int
    pods: tuple[tuple[str, str], ...]
    """``(name, phase)`` for each pod of the Deployment, by name."""
    nodes: tuple[tuple[str, str, str], ...]
    """``(name, pool, state)`` for each node, by name."""
    scaled_object: str | None = None
    so_conditions: tuple[ConditionView, ...] = ()
    hpa: HpaView | None = None
    query: str | None = None
    answer: QueryAnswer | None = None
    events: tuple[EventView, ...] = ()
    """Events about the workload (its ReplicaSets, pods, HPA, ScaledObject) and nodes."""
    errors: tuple[str, ...] = ()
    """Reads that failed this tick (shown, not fatal)."""

    @property
    def workload(self) -> str:
        return f"{self.namespace}/{self.deployment}"

    def pod_counts(self) -> dict[str, int]:
        counts = Counter(phase for _, phase in self.pods)
        return {p: counts[p] for p in ("Pending", "Starting", "Ready", "Terminating") if counts[p]}

    def node_counts(self) -> dict[str, dict[str, int]]:
        pools: dict[str, Counter[str]] = {}
        for _, pool, state in self.nodes:
            pools.setdefault(pool, Counter())[state] += 1
        return {pool: dict(sorted(c.items())) for pool, c in sorted(pools.items())}


def pod_phase(pod: Mapping[str, Any]) -> str:
    """The timeline phase of a pod (see the module docstring)."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    if not (pod.get("spec") or {}).get("nodeName"):
        return "Pending"
    status = pod.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return "Ready"
    return "Starting"


def node_pool(node: Mapping[str, Any]) -> str:
    """The node's pool from the first of :data:`POOL_LABELS` it carries, else ``default``."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for label in POOL_LABELS:
        if labels.get(label):
            return str(labels[label])
    return "default"


def node_state(node: Mapping[str, Any]) -> str:
    """``provisioning``, ``ready`` or ``deleting`` (see the module docstring)."""
    if (node.get("metadata") or {}).get("deletionTimestamp"):
        return "deleting"
    taints = (node.get("spec") or {}).get("taints") or []
    if any(t.get("key") == "ToBeDeletedByClusterAutoscaler" for t in taints):
        return "deleting"
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return "ready" if condition.get("status") == "True" else "provisioning"
    return "provisioning"


def find_scaled_object(
    scaled_objects: Iterable[Mapping[str, Any]], deployment: str
) -> Mapping[str, Any] | None:
    """The ScaledObject whose ``scaleTargetRef`` is the Deployment (kind defaults to it)."""
    for so in scaled_objects:
        ref = (so.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("name") == deployment and ref.get("kind", "Deployment") == "Deployment":
            return so
    return None


def find_hpa(
    hpas: Iterable[Mapping[str, Any]], deployment: str, name: str | None = None
) -> Mapping[str, Any] | None:
    """The HPA named ``name`` (KEDA's ``status.hpaName``), else one targeting the Deployment."""
    listed = list(hpas)
    if name:
        for hpa in listed:
            if (hpa.get("metadata") or {}).get("name") == name:
                return hpa
    for hpa in listed:
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("kind") == "Deployment" and ref.get("name") == deployment:
            return hpa
    return None


def prometheus_trigger(so: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """``(serverAddress, query)`` of the ScaledObject's first prometheus trigger."""
    for trigger in ((so or {}).get("spec") or {}).get("triggers") or []:
        if trigger.get("type") == "prometheus":
            meta = trigger.get("metadata") or {}
            if meta.get("query"):
                return str(meta.get("serverAddress") or ""), str(meta["query"])
    return None


def _metric_of(entry: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    kind = str(entry.get("type") or "")
    body = entry.get(kind[:1].lower() + kind[1:]) or {}
    if kind in {"Resource", "ContainerResource"}:
        return str(body.get("name") or kind), body
    return str((body.get("metric") or {}).get("name") or kind), body


def _hpa_view(hpa: Mapping[str, Any]) -> HpaView:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    metrics = spec.get("metrics") or []
    name, target_type, target = "", "", None
    if metrics:
        name, body = _metric_of(metrics[0])
        goal = body.get("target") or {}
        target_type = str(goal.get("type") or "")
        target = quantity_or_none(goal.get("averageValue") or goal.get("value"))
        if target is None and goal.get("averageUtilization") is not None:
            target = float(goal["averageUtilization"])
    value = None
    for entry in status.get("currentMetrics") or []:
        metric, body = _metric_of(entry)
        if metric == name:
            current = body.get("current") or {}
            value = quantity_or_none(current.get("averageValue") or current.get("value"))
            if value is None and current.get("averageUtilization") is not None:
                value = float(current["averageUtilization"])
            break
    return HpaView(
        name=str((hpa.get("metadata") or {}).get("name") or ""),
        current=status.get("currentReplicas"),
        desired=status.get("desiredReplicas"),
        metric=name,
        value=value,
        target=target,
        target_type=target_type,
        conditions=_conditions(status.get("conditions")),
    )


def _conditions(raw: Any) -> tuple[ConditionView, ...]:
    return tuple(
        ConditionView(
            type=str(c.get("type") or ""),
            status=str(c.get("status") or "Unknown"),
            reason=str(c.get("reason") or ""),
            message=" ".join(str(c.get("message") or "").split()),
        )
        for c in raw or []
    )


def build_snapshot(
    *,
    t: float,
    namespace: str,
    deployment: Mapping[str, Any],
    pods: Iterable[Mapping[str, Any]],
    nodes: Iterable[Mapping[str, Any]],
    scaled_objects: Iterable[Mapping[str, Any]] = (),
    hpas: Iterable[Mapping[str, Any]] = (),
    events: Iterable[Mapping[str, Any]] = (),
    answer: QueryAnswer | None = None,
    errors: Sequence[str] = (),
) -> Snapshot:
    """A :class:`Snapshot` from the API's documents (``pods`` already selected)."""
    meta = deployment.get("metadata") or {}
    name = str(meta.get("name") or "")
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    so = find_scaled_object(scaled_objects, name)
    so_name = str((so.get("metadata") or {}).get("name")) if so else None
    hpa_doc = find_hpa(hpas, name, str(((so or {}).get("status") or {}).get("hpaName") or ""))
    hpa = _hpa_view(hpa_doc) if hpa_doc else None
    trigger = prometheus_trigger(so)
    related = related_to(
        event_views(events), name, [n for n in (so_name, hpa.name if hpa else None) if n]
    )
    return Snapshot(
        t=t,
        namespace=namespace,
        deployment=name,
        spec=int(spec["replicas"]) if spec.get("replicas") is not None else 1,
        status=int(status.get("replicas") or 0),
        ready=int(status.get("readyReplicas") or 0),
        pods=tuple(
            sorted((str((p.get("metadata") or {}).get("name")), pod_phase(p)) for p in pods)
        ),
        nodes=tuple(
            sorted(
                (str((n.get("metadata") or {}).get("name")), node_pool(n), node_state(n))
                for n in nodes
            )
        ),
        scaled_object=so_name,
        so_conditions=_conditions(((so or {}).get("status") or {}).get("conditions")),
        hpa=hpa,
        query=trigger[1] if trigger else None,
        answer=answer,
        events=tuple(related),
        errors=tuple(errors),
    )


@dataclass(frozen=True, slots=True)
class WatchState:
    """What :func:`advance` remembers between ticks."""

    prices: Mapping[str, float] = field(default_factory=dict)
    """Price per node-hour by pool name (from the profile); pools not listed cost 0."""
    last: Record | None = None
    last_t: float | None = None
    cost: float = 0.0
    node_counts: Mapping[str, int] = field(default_factory=dict)
    seen_events: frozenset[str] = frozenset()
    unpriced: frozenset[str] = frozenset()
    """Pools seen without a price (the cost leaves them out)."""


def _workload_state(snap: Snapshot) -> WorkloadState:
    metrics: dict[str, float | None] = {}
    metric = snap.hpa.metric if snap.hpa and snap.hpa.metric else "metric"
    if snap.query is not None:
        metrics[f"query:{metric}"] = snap.answer.value if snap.answer else None
    if snap.hpa is not None:
        metrics[f"hpa:{metric}"] = snap.hpa.value
    return WorkloadState(
        name=snap.workload,
        spec=snap.spec,
        status=snap.status,
        ready=snap.ready,
        desired=snap.hpa.desired if snap.hpa else None,
        pods=snap.pod_counts(),
        metrics=metrics,
    )


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def _changed(last: Record | None, record: Record) -> bool:
    if last is None:
        return True
    if last.nodes != record.nodes or len(last.workloads) != len(record.workloads):
        return True
    for old, new in zip(last.workloads, record.workloads, strict=True):
        if (old.spec, old.status, old.ready, old.desired, dict(old.pods)) != (
            new.spec, new.status, new.ready, new.desired, dict(new.pods)
        ):  # fmt: skip
            return True
        if set(old.metrics) != set(new.metrics):
            return True
        if not all(_same(old.metrics[k], new.metrics[k]) for k in old.metrics):
            return True
    return False


def advance(state: WatchState, snap: Snapshot) -> tuple[WatchState, Record | None]:
    """Fold one snapshot in; the record to write, or None when nothing changed.

    Cost accrues for the interval since the previous snapshot at the node counts seen
    then. New events that report a decision are attached to the record (and force one);
    the events already there at the first tick are history, not decisions of this run.
    """
    cost = state.cost
    if state.last_t is not None and snap.t > state.last_t:
        hours = (snap.t - state.last_t) / 3600.0
        cost += sum(
            state.prices.get(pool, 0.0) * n * hours for pool, n in state.node_counts.items()
        )
    counts = {pool: sum(states.values()) for pool, states in snap.node_counts().items()}
    decisions: list[Decision] = []
    seen = set(state.seen_events)
    for view in snap.events:
        if view.key in seen:
            continue
        seen.add(view.key)
        decision = decision_for(view)
        if decision is not None and state.last is not None:
            decisions.append(decision)
    record = Record(
        t=round(snap.t, 3),
        workloads=(_workload_state(snap),),
        nodes=snap.node_counts(),
        cost_usd=round(cost, 6),
        decisions=tuple(decisions),
    )
    emit = decisions or _changed(state.last, record)
    new_state = replace(
        state,
        last=record if emit else state.last,
        last_t=snap.t,
        cost=cost,
        node_counts=counts,
        seen_events=frozenset(seen),
        unpriced=state.unpriced | {p for p in counts if p not in state.prices},
    )
    return new_state, record if emit else None


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"


def render(
    snap: Snapshot, state: WatchState | None = None, *, recent_events: int = 8
) -> RenderableType:
    """The terminal view of one snapshot."""
    desired = snap.hpa.desired if snap.hpa is not None else None
    head = Text.assemble(
        (f"deployment/{snap.workload}", "bold"),
        f"  spec {snap.spec}  status {snap.status}  ready {snap.ready}",
        f"  HPA desired {_fmt(desired)}",
        f"  t+{format_duration(round(snap.t))}",
    )
    if state is not None:
        head.append(f"  ${state.cost:.2f} so far")
    counts = snap.pod_counts()
    pods = Text("pods: " + ("  ".join(f"{phase} {n}" for phase, n in counts.items()) or "none"))
    nodes = Text(
        "nodes: "
        + (
            " | ".join(
                f"{pool}: " + ", ".join(f"{state_} {n}" for state_, n in states.items())
                for pool, states in snap.node_counts().items()
            )
            or "none"
        )
    )
    parts: list[RenderableType] = [head, pods, nodes]
    if snap.scaled_object:
        conditions = ", ".join(
            f"{c.type}={c.status}" + (f" ({c.reason})" if c.reason else "")
            for c in snap.so_conditions
        )
        parts.append(
            Text(f"scaledobject/{snap.scaled_object}: {conditions or 'no conditions yet'}")
        )
    else:
        parts.append(Text("scaledobject: none targets this Deployment"))
    if snap.hpa is not None:
        h = snap.hpa
        parts.append(
            Text(
                f"hpa/{h.name}: current {_fmt(h.current)} desired {_fmt(h.desired)}; "
                f"{h.metric or 'metric'} {_fmt(h.value)} / target {_fmt(h.target)}"
                + (f" ({h.target_type})" if h.target_type else "")
            )
        )
    if snap.query is not None:
        answer = snap.answer
        if answer is None:
            said = "not read (pass --prometheus URL)"
        elif answer.error:
            said = f"error: {answer.error}"
        elif answer.series == 0:
            said = "empty result (KEDA reads 0 with ignoreNullValues)"
        elif answer.series > 1:
            said = f"{answer.series} series (KEDA needs exactly one)"
        elif answer.value is None:
            said = "NaN or ±Inf (KEDA reads 0 with ignoreNullValues)"
        else:
            said = _fmt(answer.value)
        parts.append(
            Text(f"query = {said}" + (f"  [{answer.source}]" if answer and answer.source else ""))
        )
    shown = snap.events[-recent_events:] if recent_events else ()
    if shown:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("time", "type", "reason", "object", "message"):
            table.add_column(column, overflow="fold")
        for view in shown:
            table.add_row(
                *(
                    Text(cell)
                    for cell in (
                        view.time[11:19] or "-",
                        view.type,
                        view.reason,
                        view.target,
                        view.message,
                    )
                )
            )
        parts.append(table)
    for error in snap.errors:
        parts.append(Text(f"read failed: {error}", style="red"))
    return Group(*parts)


def pools_from_profile(profile: Profile) -> dict[str, dict[str, float]]:
    """``{pool: {"price_per_hour": p, "gpus_per_node": g}}`` for the timeline header and the
    cost column, from the profile's node pools (prices from the size catalogue unless
    the profile writes them)."""
    return {
        pool.name: {
            "price_per_hour": float(pool.price_per_hour),
            "gpus_per_node": float(pool.gpus_per_node),
        }
        for pool in profile.node_pools
    }
