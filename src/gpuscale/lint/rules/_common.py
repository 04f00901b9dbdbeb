"""Helpers the rule modules share: cached views, indexes, trigger iteration, formatting."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from gpuscale.lint._context import LintContext
from gpuscale.lint._k8s import selects, service_view, servicemonitor_view, workload_view
from gpuscale.lint._keda import ScaledObjectView, TriggerView, scaled_object_view
from gpuscale.lint._yaml import snippet
from gpuscale.lint.query import QueryAnalysis, analyse_query
from gpuscale.manifests import KeyPath, Manifest, Service, ServiceMonitor, Workload, is_templated
from gpuscale.promql import check_query_text

__all__ = [
    "PER_REPLICA_QUERY_EXAMPLE",
    "TOTAL_QUERY_FIX",
    "PromTrigger",
    "covers",
    "decided_scaled_objects",
    "fmt",
    "monitor_namespaces",
    "monitors_of_service",
    "name_of",
    "objects_in",
    "prometheus_triggers",
    "repeats",
    "same_identity",
    "scaled_objects",
    "scrape_interval_for",
    "selected_services",
    "services",
    "services_of_workload",
    "target_workload",
    "trigger_path",
]

PER_REPLICA_QUERY_EXAMPLE = snippet(
    {
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {
                    "query": 'sum(my_gauge{app="web"}) / count(my_gauge{app="web"})',
                    "threshold": "80",
                },
            }
        ]
    }
)
"""A per-replica query under KEDA's default AverageValue: the mistake that divides twice
and flaps (the example of ``query-divides-by-replicas`` and ``flaps-under-steady-load``)."""

TOTAL_QUERY_FIX = snippet(
    {
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {"query": 'sum(my_gauge{app="web"})', "threshold": "80"},
            }
        ]
    }
)
"""Its fix: the total, which AverageValue divides by the replica count once."""

_K = TypeVar("_K", bound=Hashable)


def scaled_objects(ctx: LintContext) -> list[ScaledObjectView]:
    """Every ScaledObject of the set as KEDA reads it (computed once per run)."""

    def build() -> list[ScaledObjectView]:
        return [scaled_object_view(obj) for obj in ctx.of_kind("ScaledObject")]

    return ctx.cached("index", "scaled-objects", build)


@dataclass(frozen=True)
class PromTrigger:
    """A ``prometheus`` trigger of a ScaledObject, with its query analysed."""

    so: ScaledObjectView
    trigger: TriggerView
    query: QueryAnalysis | None
    """``None`` when the query is missing or not a string."""

    @property
    def obj(self) -> Manifest:
        """The ScaledObject manifest."""
        return self.so.obj

    def path(self, key: str) -> KeyPath:
        """The key path of a metadata key of this trigger."""
        return trigger_path(self.trigger.index, key)


def trigger_path(index: int, key: str | None = None) -> KeyPath:
    """``spec.triggers[index].metadata.key`` (or the trigger itself with no key)."""
    if key is None:
        return ("spec", "triggers", index)
    return ("spec", "triggers", index, "metadata", key)


def prometheus_triggers(ctx: LintContext) -> list[PromTrigger]:
    """Every ``prometheus`` trigger of every ScaledObject (computed once per run).

    A query over gpuscale's PromQL text limits is refused here, naming its manifest line,
    before anything parses it (``gpuscale.promql.check_query_text``)."""

    def build() -> list[PromTrigger]:
        found = []
        for so in scaled_objects(ctx):
            for trigger in so.triggers:
                if trigger.is_prometheus:
                    if trigger.query:
                        where = so.obj.line_of(trigger_path(trigger.index, "query"))
                        check_query_text(trigger.query, where=str(where))
                    query = analyse_query(trigger.query) if trigger.query else None
                    found.append(PromTrigger(so, trigger, query))
        return found

    return ctx.cached("index", "prometheus-triggers", build)


def _by_identity(ctx: LintContext) -> dict[tuple[str, str, str], Manifest]:
    def build() -> dict[tuple[str, str, str], Manifest]:
        index: dict[tuple[str, str, str], Manifest] = {}
        for obj in ctx.objects:
            if obj.name:
                index.setdefault((obj.kind, ctx.namespace_of(obj), obj.name), obj)
        return index

    return ctx.cached("index", "identity", build)


def objects_in(ctx: LintContext, kind: str, namespace: str) -> list[Manifest]:
    """The objects of ``kind`` in ``namespace``."""

    def build() -> dict[tuple[str, str], list[Manifest]]:
        index: dict[tuple[str, str], list[Manifest]] = {}
        for obj in ctx.objects:
            index.setdefault((obj.kind, ctx.namespace_of(obj)), []).append(obj)
        return index

    return ctx.cached("index", "kind-namespace", build).get((kind, namespace), [])


def same_identity(ctx: LintContext, kind: str, namespace: str, name: str) -> Manifest | None:
    """The object of ``kind`` named ``name`` in ``namespace``, if the set holds one."""
    return _by_identity(ctx).get((kind, namespace, name))


def target_workload(ctx: LintContext, so: ScaledObjectView) -> Workload | None:
    """The Deployment/StatefulSet the ScaledObject scales, when the set holds it (same
    namespace) and its view reads it."""
    if so.target is None:
        return None
    kind, name = so.target
    found = same_identity(ctx, kind, ctx.namespace_of(so.obj), name)
    return workload_view(ctx, found) if found is not None else None


def name_of(obj: Manifest) -> str:
    """The object's name for messages."""
    return obj.name or "<unnamed>"


def fmt(value: float) -> str:
    """A number as people write it: ``80``, ``0.5``, ``106.7``."""
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return f"{value:.4g}"


@dataclass(frozen=True)
class _ServiceIndex:
    services: list[Service]
    by_label: dict[tuple[str, str], list[Service]]
    templated: list[Service]
    """Services with a templated label value: every selector must consider them."""
    position: dict[int, int]
    by_selector: dict[tuple[str, str, str], list[Service]]
    """By (namespace, label, value) of one pair of their pod selector."""


def _service_index(ctx: LintContext) -> _ServiceIndex:
    def build() -> _ServiceIndex:
        index = _ServiceIndex([], {}, [], {}, {})
        for obj in ctx.of_kind("Service"):
            service = service_view(ctx, obj)
            if service is None:
                continue
            index.position[id(service)] = len(index.services)
            index.services.append(service)
            if any(is_templated(value) for value in service.labels.values()):
                index.templated.append(service)
            for pair in service.labels.items():
                index.by_label.setdefault(pair, []).append(service)
            if service.selector:
                key, value = min(service.selector.items())
                slot = (ctx.namespace_of(obj), key, value)
                index.by_selector.setdefault(slot, []).append(service)
        return index

    return ctx.cached("index", "services", build)


def services(ctx: LintContext) -> list[Service]:
    """Every Service of the set that its view reads."""
    return _service_index(ctx).services


def selected_services(ctx: LintContext, monitor: ServiceMonitor) -> tuple[list[Service], bool]:
    """Services (any namespace) whose labels the ServiceMonitor's selector matches, and
    whether any match was undecidable."""

    def compute() -> tuple[list[Service], bool]:
        index = _service_index(ctx)
        candidates = index.services
        pairs = [(k, v) for k, v in monitor.selector.match_labels if not is_templated(v)]
        if pairs:
            narrowest = min((index.by_label.get(pair, []) for pair in pairs), key=len)
            chosen = {id(s): s for s in [*narrowest, *index.templated]}
            candidates = sorted(chosen.values(), key=lambda s: index.position[id(s)])
        matched: list[Service] = []
        undecided = False
        for service in candidates:
            result = selects(monitor.selector, service.labels)
            if result is None:
                undecided = True
            elif result:
                matched.append(service)
        return matched, undecided

    return ctx.cached("selected-services", id(monitor), compute)


def monitor_namespaces(monitor: ServiceMonitor) -> tuple[str, ...] | None:
    """The namespaces named by ``namespaceSelector.matchNames``; ``None`` when one is a
    placeholder (the selector is then undecidable)."""
    names = monitor.namespace_selector.match_names
    return None if any(is_templated(name) for name in names) else names


def covers(ctx: LintContext, monitor: ServiceMonitor, service: Service) -> bool:
    """Whether the ServiceMonitor's namespaceSelector reaches the Service's namespace."""
    return monitor.namespace_selector.covers(
        ctx.namespace_of(service.manifest), ctx.namespace_of(monitor.manifest)
    )


def services_of_workload(ctx: LintContext, workload: Workload) -> list[Service]:
    """The Services in the set whose ``spec.selector`` selects the workload's pods."""
    labels = workload.template_labels
    namespace = ctx.namespace_of(workload.manifest)
    index = _service_index(ctx).by_selector
    found: list[Service] = []
    for key, value in labels.items():
        found.extend(s for s in index.get((namespace, key, value), []) if s.selects(labels))
    return found


def monitors_of_service(ctx: LintContext, service: Service) -> list[ServiceMonitor]:
    """The ServiceMonitors in the set that scrape ``service``."""

    def build() -> dict[int, list[ServiceMonitor]]:
        scraped: dict[int, list[ServiceMonitor]] = {}
        for obj in ctx.of_kind("ServiceMonitor"):
            monitor = servicemonitor_view(ctx, obj)
            if monitor is None or monitor_namespaces(monitor) is None:
                continue
            for matched in selected_services(ctx, monitor)[0]:
                if covers(ctx, monitor, matched):
                    scraped.setdefault(id(matched), []).append(monitor)
        return scraped

    return ctx.cached("index", "monitors", build).get(id(service), [])


def scrape_interval_for(ctx: LintContext, so: ScaledObjectView) -> tuple[float, str] | None:
    """How often the target's metrics are scraped, and where that number comes from.

    The ``interval`` of the ServiceMonitor endpoints that scrape the target's Service,
    when the set holds them; else the profile's Prometheus scrape interval; else ``None``.
    """
    target = target_workload(ctx, so)
    if target is not None:
        for service in services_of_workload(ctx, target):
            for monitor in monitors_of_service(ctx, service):
                intervals = [e.interval for e in monitor.endpoints if e.interval is not None]
                if intervals:
                    where = f"ServiceMonitor {monitor.name or '<unnamed>'} endpoints[].interval"
                    return max(intervals), where
    if ctx.profile is not None:
        return ctx.profile.prometheus.scrape_interval, "the profile's Prometheus scrape interval"
    return None


def decided_scaled_objects(ctx: LintContext) -> Iterator[ScaledObjectView]:
    """The ScaledObjects whose spec KEDA's model reads (the others are undecidable)."""
    return (so for so in scaled_objects(ctx) if so.spec is not None)


def repeats(keyed: Iterable[tuple[_K, Manifest]]) -> Iterator[tuple[_K, Manifest, Manifest]]:
    """``(key, later, first)`` for each manifest whose key an earlier one already had, in
    input order (the second, third... definition of one thing)."""
    first: dict[_K, Manifest] = {}
    for key, obj in keyed:
        earlier = first.setdefault(key, obj)
        if earlier is not obj:
            yield key, obj, earlier
