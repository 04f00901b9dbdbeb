"""Rules on ServiceMonitors: do they reach the Service that exports the metric, and does
kube-prometheus-stack's Prometheus pick them up at all.

prometheus-operator semantics (``crd-servicemonitors.yaml``, chart
kube-prometheus-stack 88.5.3, see ``/work/shared/reference/platform.md`` §4.1):
``spec.namespaceSelector`` names where the target Services are (default: the
ServiceMonitor's own namespace; ``any: true``: all), ``spec.selector`` matches Service
labels, ``endpoints[].port`` names a Service port, and the chart's Prometheus selects only
ServiceMonitors labelled ``release: <Helm release name>``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpuscale.lint._access import as_map, as_str, dig, is_templated, iter_list
from gpuscale.lint._context import LintContext, ManifestObject
from gpuscale.lint._findings import Hit, KeyPath, Severity
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    ALL_NAMESPACES,
    covers,
    labels_of,
    name_of,
    selected_services,
    servicemonitor_namespaces,
    services_in,
)

__all__: list[str] = []


def _namespace_list(namespaces: frozenset[str]) -> str:
    return "all namespaces" if ALL_NAMESPACES in namespaces else ", ".join(sorted(namespaces))


@rule(
    "servicemonitor-namespace-mismatch",
    severity=Severity.ERROR,
    title="The ServiceMonitor looks for its Service in the wrong namespace",
    explanation=(
        "`spec.namespaceSelector` says in which namespaces Prometheus looks for the "
        "Services that `spec.selector` matches; without it, only the ServiceMonitor's own "
        "namespace. When the Service that matches the selector lives elsewhere, it is never "
        "scraped, the metric never exists, and KEDA reads the empty result as 0. Objects "
        "without a namespace are placed in the `--namespace` default (`default`), as "
        "`kubectl apply -n` would place them."
    ),
    example=snippet({"spec": {"namespaceSelector": {"matchNames": ["kube-system"]}}})
    + "\n# while the Service is applied to namespace default",
    fix=snippet({"spec": {"namespaceSelector": {"matchNames": ["default"]}}}),
)
def servicemonitor_namespace_mismatch(ctx: LintContext) -> Iterator[Hit]:
    if not ctx.of_kind("Service"):
        return
    for monitor in ctx.of_kind("ServiceMonitor"):
        namespaces = servicemonitor_namespaces(ctx, monitor)
        selected = selected_services(ctx, monitor)
        if namespaces is None or selected is None:
            continue
        services, _ = selected
        if not services or any(covers(namespaces, ctx.namespace_of(s)) for s in services):
            continue
        service = services[0]
        where = ctx.namespace_of(service)
        explicit = dig(monitor.body, ("spec", "namespaceSelector")) is not None
        path: KeyPath = ("spec", "namespaceSelector") if explicit else ("spec", "selector")
        scope = (
            f"its namespaceSelector covers {_namespace_list(namespaces)}"
            if explicit
            else "without a namespaceSelector it only looks in its own namespace "
            f"{next(iter(namespaces))}"
        )
        yield Hit(
            obj=monitor,
            key_path=path,
            message=(
                f"{scope}, but Service {name_of(service)}, which its selector matches, is in "
                f"{where}"
            ),
            why=(
                "Prometheus looks for the Services a ServiceMonitor selects only in the "
                f"namespaces of its namespaceSelector. Service {name_of(service)} is in {where}, "
                "so it is never scraped: its metrics never exist, and KEDA reads the empty "
                "query result as 0 (ignoreNullValues defaults to true)."
            ),
            fix=snippet({"spec": {"namespaceSelector": {"matchNames": [where]}}}),
        )


def _port_names(service: ManifestObject) -> tuple[list[str], list[Any]]:
    names: list[str] = []
    unnamed: list[Any] = []
    for _, raw in iter_list(dig(service.body, ("spec", "ports"))):
        port = as_map(raw) or {}
        name = as_str(port.get("name"))
        if name:
            names.append(name)
        else:
            unnamed.append(port.get("port"))
    return names, unnamed


@rule(
    "servicemonitor-selects-nothing",
    severity=Severity.ERROR,
    title="The ServiceMonitor matches no Service, or no port of it",
    explanation=(
        "A ServiceMonitor scrapes the Services its `spec.selector` matches, on the Service "
        "ports its `endpoints[].port` names (by name, not number). A selector that matches "
        "no Service, or a port name the Service does not have, means nothing is scraped. "
        "Only checked when the set holds Services in the namespaces the ServiceMonitor "
        "covers (otherwise its Service may simply be installed elsewhere)."
    ),
    example=snippet({"spec": {"endpoints": [{"port": "metrics"}]}})
    + "\n# while the Service's port is named http",
    fix=snippet({"spec": {"endpoints": [{"port": "http"}]}}),
)
def servicemonitor_selects_nothing(ctx: LintContext) -> Iterator[Hit]:
    all_services = ctx.of_kind("Service")
    if not all_services:
        return
    for monitor in ctx.of_kind("ServiceMonitor"):
        namespaces = servicemonitor_namespaces(ctx, monitor)
        selected = selected_services(ctx, monitor)
        if namespaces is None or selected is None:
            continue
        services, undecided = selected
        local = services_in(ctx, namespaces)
        if not services:
            if undecided or not local:
                continue
            selector = dig(monitor.body, ("spec", "selector"))
            names = ", ".join(sorted(name_of(s) for s in local))
            yield Hit(
                obj=monitor,
                key_path=("spec", "selector"),
                message=f"the selector matches no Service in the set (it has {names})",
                why=(
                    "A ServiceMonitor scrapes only the Services whose labels its selector "
                    "matches; none does, so nothing is scraped and the metric never exists."
                ),
                fix=snippet(
                    {"spec": {"selector": {"matchLabels": labels_of(local[0]) or {"app": "<app>"}}}}
                )
                if selector is not None
                else "# add spec.selector.matchLabels with the Service's labels",
            )
            continue
        reachable = [s for s in services if covers(namespaces, ctx.namespace_of(s))]
        if not reachable:
            continue
        yield from _check_ports(monitor, reachable)


def _check_ports(monitor: ManifestObject, services: list[ManifestObject]) -> Iterator[Hit]:
    for index, raw in iter_list(dig(monitor.body, ("spec", "endpoints"))):
        endpoint = as_map(raw) or {}
        port = endpoint.get("port")
        if not isinstance(port, str) or is_templated(port) or "targetPort" in endpoint:
            continue
        ports = {name_of(s): _port_names(s) for s in services}
        if any(port in names for names, _ in ports.values()):
            continue
        service, (names, unnamed) = next(iter(ports.items()))
        if names:
            have = f"its ports are named {', '.join(names)}"
            fix = snippet({"spec": {"endpoints": [{"port": names[0]}]}})
        else:
            shown = ", ".join(str(p) for p in unnamed) or "none"
            have = f"its ports ({shown}) have no name"
            fix = snippet({"ports": [{"name": port, "port": unnamed[0] if unnamed else 8080}]})
            fix = "# name the Service's port:\n" + fix
        yield Hit(
            obj=monitor,
            key_path=("spec", "endpoints", index, "port"),
            message=f"endpoint port {port} is not a port name of Service {service} ({have})",
            why=(
                "ServiceMonitor endpoints choose the Service port by name; with no port of "
                f"that name Prometheus creates no target for Service {service}, and its "
                "metrics never exist."
            ),
            fix=fix,
        )


@rule(
    "servicemonitor-not-selected",
    severity=Severity.WARNING,
    title="kube-prometheus-stack's Prometheus does not select this ServiceMonitor",
    explanation=(
        "kube-prometheus-stack renders `serviceMonitorSelector: {matchLabels: {release: "
        "<Helm release name>}}` while `serviceMonitorSelectorNilUsesHelmValues` is true, "
        "its default (`templates/prometheus/prometheus.yaml`), so Prometheus ignores "
        "ServiceMonitors without that label. The release name comes from the profile "
        "(error when it says), else `prometheus` is assumed (warning)."
    ),
    example=snippet({"metadata": {"name": "web", "labels": {"app": "web"}}}),
    fix=snippet({"metadata": {"name": "web", "labels": {"app": "web", "release": "prometheus"}}}),
)
def servicemonitor_not_selected(ctx: LintContext) -> Iterator[Hit]:
    release = ctx.profile.release_name if ctx.profile else None
    expected = release or "prometheus"
    for monitor in ctx.of_kind("ServiceMonitor"):
        labels = as_map(dig(monitor.body, ("metadata", "labels")))
        if labels is not None and any(is_templated(str(v)) for v in labels.values()):
            continue
        actual = labels.get("release") if labels is not None else None
        if actual is not None and str(actual) == expected:
            continue
        if actual is not None:
            path: KeyPath = ("metadata", "labels", "release")
            problem = f"release: {actual}, but the kube-prometheus-stack release is {expected}"
        else:
            path = ("metadata", "labels") if labels is not None else ("metadata",)
            problem = f"its labels lack release: {expected}"
        assumed = "" if release else " (assumed: no profile names the release)"
        merged: dict[str, Any] = {k: v for k, v in (labels or {}).items() if isinstance(k, str)}
        merged["release"] = expected
        yield Hit(
            obj=monitor,
            key_path=path,
            message=f"{problem}{assumed}, so Prometheus ignores this ServiceMonitor",
            why=(
                "kube-prometheus-stack's Prometheus selects ServiceMonitors labelled "
                f"release: {expected} (its serviceMonitorSelector, while "
                "serviceMonitorSelectorNilUsesHelmValues is true, the default). This one is "
                "never loaded, so nothing it describes is scraped and KEDA reads the empty "
                "result as 0."
            ),
            fix=snippet({"metadata": {"labels": merged}}),
            severity=Severity.ERROR if release else None,
        )


_GPU_EXPORTER_MARKERS = ("dcgm", "device-metrics-exporter", "amdgpu-metrics", "amd-gpu-metrics")


def _mentions_gpu_exporter(texts: list[str]) -> bool:
    lowered = [t.lower() for t in texts]
    return any(marker in text for text in lowered for marker in _GPU_EXPORTER_MARKERS)


def _identity_texts(obj: ManifestObject, extra: Mapping[str, Any] | None = None) -> list[str]:
    texts = [name_of(obj), *labels_of(obj).values()]
    if extra:
        texts.extend(str(v) for v in extra.values())
    return texts


@rule(
    "servicemonitor-honor-labels",
    severity=Severity.WARNING,
    title="A GPU exporter is scraped without honorLabels: true",
    explanation=(
        "NVIDIA's DCGM exporter and AMD's Device Metrics Exporter label each GPU's series "
        "with the `pod`, `namespace` and `container` that use the GPU. Prometheus' target "
        "labels of the same names (the exporter's own pod) win unless the endpoint sets "
        "`honorLabels: true`; the exporter's values are then renamed `exported_pod`, "
        "`exported_namespace` (ServiceMonitor CRD `honorLabels`; NVIDIA/dcgm-exporter#76). "
        'A trigger query filtering a GPU metric by `namespace="prod"` then matches the '
        "exporter's namespace, not the workload's."
    ),
    example=snippet({"spec": {"endpoints": [{"port": "metrics"}]}})
    + "\n# on a ServiceMonitor for dcgm-exporter",
    fix=snippet({"spec": {"endpoints": [{"port": "metrics", "honorLabels": True}]}}),
)
def servicemonitor_honor_labels(ctx: LintContext) -> Iterator[Hit]:
    for monitor in ctx.of_kind("ServiceMonitor"):
        match_labels = as_map(dig(monitor.body, ("spec", "selector", "matchLabels")))
        texts = _identity_texts(monitor, match_labels)
        selected = selected_services(ctx, monitor)
        if selected is not None:
            for service in selected[0]:
                texts.extend(_identity_texts(service))
        if not _mentions_gpu_exporter(texts):
            continue
        for index, raw in iter_list(dig(monitor.body, ("spec", "endpoints"))):
            endpoint = as_map(raw)
            if endpoint is None or endpoint.get("honorLabels") is True:
                continue
            if isinstance(endpoint.get("honorLabels"), str):
                continue
            port = endpoint.get("port")
            fixed: dict[str, Any] = {"port": port} if isinstance(port, str) else {}
            fixed["honorLabels"] = True
            yield Hit(
                obj=monitor,
                key_path=("spec", "endpoints", index),
                message="the GPU exporter's endpoint does not set honorLabels: true",
                why=(
                    "GPU exporters label each GPU's series with the pod and namespace that "
                    "use it. Without honorLabels the exporter's own target labels win and "
                    "those values become exported_pod/exported_namespace, so a query that "
                    "filters GPU metrics by the workload's namespace or pod matches nothing "
                    "(read as 0) or the wrong GPUs."
                ),
                fix=snippet({"spec": {"endpoints": [fixed]}}),
            )
