"""Helpers the rule modules share: cached views, trigger iteration, number formatting."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from gpuscale.lint._access import as_map, as_str, dig, is_templated, iter_list
from gpuscale.lint._context import LintContext, ManifestObject
from gpuscale.lint._findings import KeyPath
from gpuscale.lint._k8s import POD_TEMPLATE_PATHS, selector_matches
from gpuscale.lint._keda import (
    PrometheusTriggerView,
    ScaledObjectView,
    TriggerView,
    scaled_object_view,
)
from gpuscale.lint.query import QueryAnalysis, analyse_query
from gpuscale.units import parse_duration

__all__ = [
    "ALL_NAMESPACES",
    "PromTrigger",
    "covers",
    "fmt",
    "labels_of",
    "monitors_of_service",
    "name_of",
    "prometheus_triggers",
    "scaled_objects",
    "scrape_interval_for",
    "servicemonitor_namespaces",
    "services_of_workload",
    "target_workload",
    "trigger_path",
    "view",
    "workload_pod_labels",
]


def view(ctx: LintContext, obj: ManifestObject) -> ScaledObjectView:
    """The ScaledObject's settings, parsed once per run."""
    return ctx.cached("scaledobject", id(obj), lambda: scaled_object_view(obj.body))


def scaled_objects(ctx: LintContext) -> Iterator[tuple[ManifestObject, ScaledObjectView]]:
    """Every ScaledObject of the set with its view."""
    for obj in ctx.of_kind("ScaledObject"):
        yield obj, view(ctx, obj)


@dataclass(frozen=True)
class PromTrigger:
    """A ``prometheus`` trigger of a ScaledObject, with its query analysed."""

    obj: ManifestObject
    so: ScaledObjectView
    trigger: TriggerView
    metadata: PrometheusTriggerView
    query: QueryAnalysis | None
    """``None`` when the query is missing or not a string."""

    def path(self, key: str) -> KeyPath:
        """The key path of a metadata key of this trigger."""
        return trigger_path(self.trigger.index, key)


def trigger_path(index: int, key: str | None = None) -> KeyPath:
    """``spec.triggers[index].metadata.key`` (or the trigger itself with no key)."""
    if key is None:
        return ("spec", "triggers", index)
    return ("spec", "triggers", index, "metadata", key)


def prometheus_triggers(ctx: LintContext) -> Iterator[PromTrigger]:
    """Every ``prometheus`` trigger of every ScaledObject."""
    for obj, so in scaled_objects(ctx):
        for trigger in so.triggers:
            if trigger.prometheus is None:
                continue
            text = trigger.prometheus.query
            query = analyse_query(text) if text else None
            yield PromTrigger(obj, so, trigger, trigger.prometheus, query)


def target_workload(
    ctx: LintContext, obj: ManifestObject, so: ScaledObjectView
) -> ManifestObject | None:
    """The workload the ScaledObject scales, when the set holds it (same namespace)."""
    if so.target_name is None or so.target_kind is None:
        return None
    namespace = ctx.namespace_of(obj)
    for candidate in ctx.of_kind(so.target_kind):
        if candidate.name == so.target_name and ctx.namespace_of(candidate) == namespace:
            return candidate
    return None


def workload_pod_labels(obj: ManifestObject) -> dict[str, str]:
    """The labels of the workload's pods, as strings."""
    path = POD_TEMPLATE_PATHS.get(obj.kind)
    if path is None:
        return {}
    labels = as_map(dig(obj.body, (*path[:-1], "metadata", "labels"))) or {}
    return {k: str(v) for k, v in labels.items() if isinstance(k, str)}


def labels_of(obj: ManifestObject) -> dict[str, str]:
    """The object's own ``metadata.labels``, as strings."""
    labels = as_map(dig(obj.body, ("metadata", "labels"))) or {}
    return {k: str(v) for k, v in labels.items() if isinstance(k, str) and v is not None}


def name_of(obj: ManifestObject) -> str:
    """The object's name for messages."""
    return as_str(obj.name) or "<unnamed>"


def fmt(value: float) -> str:
    """A number as people write it: ``80``, ``0.5``, ``106.7``."""
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return f"{value:.4g}"


ALL_NAMESPACES = "*"


def servicemonitor_namespaces(ctx: LintContext, monitor: ManifestObject) -> frozenset[str] | None:
    """The namespaces whose Services the ServiceMonitor scrapes; ``{"*"}`` for all of them.

    ``spec.namespaceSelector`` absent means the ServiceMonitor's own namespace
    (prometheus-operator ``NamespaceSelector``: "the same namespace as the ServiceMonitor
    object"); ``any: true`` means every namespace. ``None``: undecidable (templated).
    """
    selector = dig(monitor.body, ("spec", "namespaceSelector"))
    if selector is None:
        return frozenset({ctx.namespace_of(monitor)})
    selector = as_map(selector)
    if selector is None:
        return None
    if selector.get("any") is True:
        return frozenset({ALL_NAMESPACES})
    names = selector.get("matchNames")
    if names is None:
        return frozenset({ctx.namespace_of(monitor)})
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    if any(is_templated(n) for n in names):
        return None
    return frozenset(names)


def covers(namespaces: frozenset[str], namespace: str) -> bool:
    """Whether a ServiceMonitor scraping ``namespaces`` reaches ``namespace``."""
    return ALL_NAMESPACES in namespaces or namespace in namespaces


def services_of_workload(ctx: LintContext, workload: ManifestObject) -> list[ManifestObject]:
    """The Services in the set whose ``spec.selector`` selects the workload's pods."""
    pod_labels = workload_pod_labels(workload)
    namespace = ctx.namespace_of(workload)
    found = []
    for service in ctx.of_kind("Service"):
        if ctx.namespace_of(service) != namespace:
            continue
        selector = as_map(dig(service.body, ("spec", "selector")))
        if selector and all(pod_labels.get(k) == str(v) for k, v in selector.items()):
            found.append(service)
    return found


def monitors_of_service(ctx: LintContext, service: ManifestObject) -> list[ManifestObject]:
    """The ServiceMonitors in the set that scrape ``service``."""
    labels = labels_of(service)
    namespace = ctx.namespace_of(service)
    found = []
    for monitor in ctx.of_kind("ServiceMonitor"):
        namespaces = servicemonitor_namespaces(ctx, monitor)
        selector = as_map(dig(monitor.body, ("spec", "selector")))
        if namespaces is None or selector is None or not covers(namespaces, namespace):
            continue
        if selector_matches(selector, labels) is True:
            found.append(monitor)
    return found


def scrape_interval_for(
    ctx: LintContext, obj: ManifestObject, so: ScaledObjectView
) -> tuple[float, str] | None:
    """How often the target's metrics are scraped, and where that number comes from.

    The ``interval`` of the ServiceMonitor endpoints that scrape the target's Service,
    when the set holds them; else the profile's scrape interval; else ``None``.
    """
    target = target_workload(ctx, obj, so)
    if target is not None:
        for service in services_of_workload(ctx, target):
            for monitor in monitors_of_service(ctx, service):
                intervals = []
                for _, endpoint in iter_list(dig(monitor.body, ("spec", "endpoints"))):
                    raw = as_str(dig(endpoint, ("interval",)))
                    if raw and not is_templated(raw):
                        try:
                            intervals.append(parse_duration(raw))
                        except ValueError:
                            continue
                if intervals:
                    where = f"ServiceMonitor {name_of(monitor)} endpoints[].interval"
                    return max(intervals), where
    if ctx.profile is not None and ctx.profile.scrape_interval:
        return ctx.profile.scrape_interval, "the profile's Prometheus scrape interval"
    return None
