"""Helpers the rule modules share: cached views, trigger iteration, number formatting."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from gpuscale.lint._access import as_map, as_str, dig, is_templated, iter_list, iter_map
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
    "objects_in",
    "prometheus_triggers",
    "same_identity",
    "scaled_objects",
    "scrape_interval_for",
    "selected_services",
    "servicemonitor_namespaces",
    "services_in",
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


def prometheus_triggers(ctx: LintContext) -> list[PromTrigger]:
    """Every ``prometheus`` trigger of every ScaledObject (computed once per run)."""

    def build() -> list[PromTrigger]:
        found = []
        for obj, so in scaled_objects(ctx):
            for trigger in so.triggers:
                if trigger.prometheus is None:
                    continue
                text = trigger.prometheus.query
                query = analyse_query(text) if text else None
                found.append(PromTrigger(obj, so, trigger, trigger.prometheus, query))
        return found

    return ctx.cached("index", "prometheus-triggers", build)


def _objects_by_identity(ctx: LintContext) -> dict[tuple[str, str, str], ManifestObject]:
    def build() -> dict[tuple[str, str, str], ManifestObject]:
        index: dict[tuple[str, str, str], ManifestObject] = {}
        for obj in ctx.objects:
            name = obj.name
            if isinstance(name, str):
                index.setdefault((obj.kind, ctx.namespace_of(obj), name), obj)
        return index

    return ctx.cached("index", "identity", build)


def objects_in(ctx: LintContext, kind: str, namespace: str) -> list[ManifestObject]:
    """The objects of ``kind`` in ``namespace``."""

    def build() -> dict[tuple[str, str], list[ManifestObject]]:
        index: dict[tuple[str, str], list[ManifestObject]] = {}
        for obj in ctx.objects:
            index.setdefault((obj.kind, ctx.namespace_of(obj)), []).append(obj)
        return index

    return ctx.cached("index", "kind-namespace", build).get((kind, namespace), [])


def services_in(ctx: LintContext, namespaces: frozenset[str]) -> list[ManifestObject]:
    """The Services in ``namespaces`` (``{"*"}``: all)."""
    if ALL_NAMESPACES in namespaces:
        return ctx.of_kind("Service")
    return [s for namespace in sorted(namespaces) for s in objects_in(ctx, "Service", namespace)]


def same_identity(ctx: LintContext, kind: str, namespace: str, name: str) -> ManifestObject | None:
    """The object of ``kind`` named ``name`` in ``namespace``, if the set holds one."""
    return _objects_by_identity(ctx).get((kind, namespace, name))


def target_workload(
    ctx: LintContext, obj: ManifestObject, so: ScaledObjectView
) -> ManifestObject | None:
    """The workload the ScaledObject scales, when the set holds it (same namespace)."""
    if so.target_name is None or so.target_kind is None:
        return None
    key = (so.target_kind, ctx.namespace_of(obj), so.target_name)
    return _objects_by_identity(ctx).get(key)


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


@dataclass(frozen=True)
class _ServiceIndex:
    services: list[ManifestObject]
    labels: dict[int, dict[str, str]]
    by_label: dict[tuple[str, str], list[ManifestObject]]
    templated: list[ManifestObject]
    """Services with a templated label value: every selector must consider them."""
    by_namespace: dict[str, list[ManifestObject]]
    position: dict[int, int]


def _service_index(ctx: LintContext) -> _ServiceIndex:
    def build() -> _ServiceIndex:
        services = ctx.of_kind("Service")
        index = _ServiceIndex(services, {}, {}, [], {}, {})
        for number, service in enumerate(services):
            index.position[id(service)] = number
            labels = labels_of(service)
            index.labels[id(service)] = labels
            index.by_namespace.setdefault(ctx.namespace_of(service), []).append(service)
            if any(is_templated(value) for value in labels.values()):
                index.templated.append(service)
            for pair in labels.items():
                index.by_label.setdefault(pair, []).append(service)
        return index

    return ctx.cached("index", "services", build)


def selected_services(
    ctx: LintContext, monitor: ManifestObject
) -> tuple[list[ManifestObject], bool] | None:
    """Services (any namespace) whose labels the ServiceMonitor's selector matches, and
    whether any match was undecidable; ``None`` when the selector itself is unusable."""

    def compute() -> tuple[list[ManifestObject], bool] | None:
        selector = as_map(dig(monitor.body, ("spec", "selector")))
        if selector is None:
            return None
        index = _service_index(ctx)
        candidates = index.services
        pairs = [
            (key, str(value))
            for key, value in iter_map(selector.get("matchLabels"))
            if isinstance(value, str | int | float) and not is_templated(str(value))
        ]
        if pairs:
            narrowest = min((index.by_label.get(pair, []) for pair in pairs), key=len)
            chosen = {id(s): s for s in [*narrowest, *index.templated]}
            candidates = sorted(chosen.values(), key=lambda s: index.position[id(s)])
        matched: list[ManifestObject] = []
        undecided = False
        for service in candidates:
            result = selector_matches(selector, index.labels[id(service)])
            if result is None:
                undecided = True
            elif result:
                matched.append(service)
        return matched, undecided

    return ctx.cached("selected-services", id(monitor), compute)


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


def _services_by_selector(
    ctx: LintContext,
) -> dict[tuple[str, str, str], list[tuple[ManifestObject, dict[str, str]]]]:
    """Services keyed by (namespace, label, value) of one pair of their pod selector."""

    def build() -> dict[tuple[str, str, str], list[tuple[ManifestObject, dict[str, str]]]]:
        index: dict[tuple[str, str, str], list[tuple[ManifestObject, dict[str, str]]]] = {}
        for service in ctx.of_kind("Service"):
            selector = {k: str(v) for k, v in iter_map(dig(service.body, ("spec", "selector")))}
            if selector:
                key, value = min(selector.items())
                entry = (service, selector)
                index.setdefault((ctx.namespace_of(service), key, value), []).append(entry)
        return index

    return ctx.cached("index", "service-selectors", build)


def services_of_workload(ctx: LintContext, workload: ManifestObject) -> list[ManifestObject]:
    """The Services in the set whose ``spec.selector`` selects the workload's pods."""
    pod_labels = workload_pod_labels(workload)
    namespace = ctx.namespace_of(workload)
    index = _services_by_selector(ctx)
    found = []
    for key, value in pod_labels.items():
        for service, selector in index.get((namespace, key, value), []):
            if all(pod_labels.get(k) == v for k, v in selector.items()):
                found.append(service)
    return found


def monitors_of_service(ctx: LintContext, service: ManifestObject) -> list[ManifestObject]:
    """The ServiceMonitors in the set that scrape ``service``."""

    def build() -> dict[int, list[ManifestObject]]:
        scraped: dict[int, list[ManifestObject]] = {}
        for monitor in ctx.of_kind("ServiceMonitor"):
            namespaces = servicemonitor_namespaces(ctx, monitor)
            selected = selected_services(ctx, monitor)
            if namespaces is None or selected is None:
                continue
            for matched in selected[0]:
                if covers(namespaces, ctx.namespace_of(matched)):
                    scraped.setdefault(id(matched), []).append(monitor)
        return scraped

    return ctx.cached("index", "monitors", build).get(id(service), [])


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
