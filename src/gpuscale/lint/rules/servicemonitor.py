"""Rules on ServiceMonitors: do they reach the Service that exports the metric, and does
kube-prometheus-stack's Prometheus pick them up at all.

prometheus-operator semantics (``crd-servicemonitors.yaml``, and the selector the chart
renders: prometheus-community/helm-charts@cf408a2 ``charts/kube-prometheus-stack``
88.5.3, ``values.yaml`` ``serviceMonitorSelectorNilUsesHelmValues`` and
``templates/prometheus/prometheus.yaml``):
``spec.namespaceSelector`` names where the target Services are (default: the
ServiceMonitor's own namespace; ``any: true``: all), ``spec.selector`` matches Service
labels, ``endpoints[].port`` names a Service port, and the chart's Prometheus selects only
ServiceMonitors labelled ``release: <Helm release name>`` unless installed with
``serviceMonitorSelectorNilUsesHelmValues: false``, as ``gpuscale install`` does (the
profile's ``prometheus.selects_all_servicemonitors`` says which).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._k8s import servicemonitor_view
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    covers,
    monitor_namespaces,
    selected_services,
    services,
)
from gpuscale.manifests import KeyPath, Service, ServiceMonitor, is_templated

__all__: list[str] = []


def _monitors(ctx: LintContext) -> list[ServiceMonitor]:
    """The ServiceMonitors whose view reads them and that write a selector (the CRD
    requires one; an absent selector is validation's to report)."""

    def build() -> list[ServiceMonitor]:
        found = []
        for obj in ctx.of_kind("ServiceMonitor"):
            monitor = servicemonitor_view(ctx, obj)
            if monitor is not None and obj.get(("spec", "selector")) is not None:
                found.append(monitor)
        return found

    return ctx.cached("index", "servicemonitors", build)


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
def _servicemonitor_namespace_mismatch(ctx: LintContext) -> Iterator[Hit]:
    if not services(ctx):
        return
    for monitor in _monitors(ctx):
        names = monitor_namespaces(monitor)
        if names is None:
            continue
        matched, _ = selected_services(ctx, monitor)
        if not matched or any(covers(ctx, monitor, s) for s in matched):
            continue
        service = matched[0]
        where = ctx.namespace_of(service.manifest)
        explicit = monitor.manifest.get(("spec", "namespaceSelector")) is not None
        path: KeyPath = ("spec", "namespaceSelector") if explicit else ("spec", "selector")
        scope = (
            f"its namespaceSelector covers {', '.join(names)}"
            if explicit and names
            else "without namespaceSelector.matchNames it only looks in its own namespace "
            f"{ctx.namespace_of(monitor.manifest)}"
        )
        yield Hit(
            obj=monitor.manifest,
            key_path=path,
            message=(
                f"{scope}, but Service {service.name}, which its selector matches, is in {where}"
            ),
            why=(
                "Prometheus looks for the Services a ServiceMonitor selects only in the "
                f"namespaces of its namespaceSelector. Service {service.name} is in {where}, "
                "so it is never scraped: its metrics never exist, and KEDA reads the empty "
                "query result as 0 (ignoreNullValues defaults to true)."
            ),
            fix=snippet({"spec": {"namespaceSelector": {"matchNames": [where]}}}),
        )


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
def _servicemonitor_selects_nothing(ctx: LintContext) -> Iterator[Hit]:
    every = services(ctx)
    if not every:
        return
    for monitor in _monitors(ctx):
        if monitor_namespaces(monitor) is None:
            continue
        matched, undecided = selected_services(ctx, monitor)
        local = [s for s in every if covers(ctx, monitor, s)]
        if not matched:
            if undecided or not local:
                continue
            names = ", ".join(sorted(s.name or "<unnamed>" for s in local))
            labels = dict(local[0].labels) or {"app": "<app>"}
            yield Hit(
                obj=monitor.manifest,
                key_path=("spec", "selector"),
                message=f"the selector matches no Service in the set (it has {names})",
                why=(
                    "A ServiceMonitor scrapes only the Services whose labels its selector "
                    "matches; none does, so nothing is scraped and the metric never exists."
                ),
                fix=snippet({"spec": {"selector": {"matchLabels": labels}}}),
            )
            continue
        reachable = [s for s in matched if covers(ctx, monitor, s)]
        if reachable:
            yield from _check_ports(monitor, reachable)


def _check_ports(monitor: ServiceMonitor, reachable: list[Service]) -> Iterator[Hit]:
    for index, endpoint in enumerate(monitor.endpoints):
        port = endpoint.port
        if port is None or is_templated(port) or endpoint.target_port is not None:
            continue
        if any(service.port_named(port) for service in reachable):
            continue
        service = reachable[0]
        names = [p.name for p in service.ports if p.name]
        unnamed = [p.port for p in service.ports if not p.name]
        if names:
            have = f"its ports are named {', '.join(names)}"
            fix = snippet({"spec": {"endpoints": [{"port": names[0]}]}})
        else:
            shown = ", ".join(str(p) for p in unnamed) or "none"
            have = f"its ports ({shown}) have no name"
            number = unnamed[0] if unnamed and unnamed[0] is not None else 8080
            fix = "# name the Service's port:\n" + snippet(
                {"ports": [{"name": port, "port": number}]}
            )
        yield Hit(
            obj=monitor.manifest,
            key_path=("spec", "endpoints", index, "port"),
            message=f"endpoint port {port} is not a port name of Service {service.name} ({have})",
            why=(
                "ServiceMonitor endpoints choose the Service port by name; with no port of "
                f"that name Prometheus creates no target for Service {service.name}, and its "
                "metrics never exist."
            ),
            fix=fix,
        )


@rule(
    "servicemonitor-not-selected",
    severity=Severity.ERROR,
    title="kube-prometheus-stack's Prometheus does not select this ServiceMonitor",
    explanation=(
        "kube-prometheus-stack renders `serviceMonitorSelector: {matchLabels: {release: "
        "<Helm release name>}}` while `serviceMonitorSelectorNilUsesHelmValues` is true, "
        "its default (`templates/prometheus/prometheus.yaml`), so Prometheus ignores "
        "ServiceMonitors without that label: nothing they describe is scraped. `gpuscale "
        "install` sets that value to false, and its Prometheus selects every ServiceMonitor. "
        "Which of the two a cluster runs is the profile's "
        "`prometheus.selects_all_servicemonitors` (default true, `gpuscale install`'s "
        "stack): an **error** when the profile says false (the release name is "
        "`prometheus.release`); nothing when it says true; an **info** note without a "
        "profile, since lint cannot know (the release is then assumed to be `prometheus`)."
    ),
    example=snippet({"metadata": {"name": "web", "labels": {"app": "web"}}})
    + "\n# with prometheus.selects_all_servicemonitors: false in the profile",
    fix=snippet({"metadata": {"name": "web", "labels": {"app": "web", "release": "prometheus"}}}),
)
def _servicemonitor_not_selected(ctx: LintContext) -> Iterator[Hit]:
    profile = ctx.profile
    if profile is not None and profile.prometheus.selects_all_servicemonitors:
        return
    expected = profile.prometheus.release if profile is not None else "prometheus"
    for obj in ctx.of_kind("ServiceMonitor"):
        monitor = servicemonitor_view(ctx, obj)
        if monitor is None or any(is_templated(v) for v in monitor.labels.values()):
            continue
        labels = monitor.labels
        actual = labels.get("release")
        if actual == expected:
            continue
        if actual is not None:
            path: KeyPath = ("metadata", "labels", "release")
            problem = f"release: {actual}, but the kube-prometheus-stack release is {expected}"
        else:
            written = obj.get(("metadata", "labels")) is not None
            path = ("metadata", "labels") if written else ("metadata",)
            problem = f"its labels lack release: {expected}"
        merged: dict[str, Any] = {**labels, "release": expected}
        if profile is not None:
            message = f"{problem}, so Prometheus ignores this ServiceMonitor"
            why = (
                "The profile says this Prometheus selects ServiceMonitors by label "
                "(prometheus.selects_all_servicemonitors: false): kube-prometheus-stack's "
                f"serviceMonitorSelector is release: {expected} (prometheus.release) while "
                "serviceMonitorSelectorNilUsesHelmValues is true, the chart's default. This "
                "one is never loaded, so nothing it describes is scraped and KEDA reads the "
                "empty result as 0."
            )
        else:
            message = (
                f"{problem}: a Prometheus that selects ServiceMonitors by release label "
                "ignores it (no profile says which kind this cluster runs)"
            )
            why = (
                "kube-prometheus-stack installed with the chart's defaults selects only "
                f"ServiceMonitors labelled release: <release name> (assumed {expected}); "
                "one installed by gpuscale install selects every ServiceMonitor. Without a "
                "profile lint cannot tell which; with one, prometheus."
                "selects_all_servicemonitors says (false makes this an error, true silences "
                "it)."
            )
        yield Hit(
            obj=obj,
            key_path=path,
            message=message,
            why=why,
            fix=snippet({"metadata": {"labels": merged}}),
            severity=None if profile is not None else Severity.INFO,
        )


_GPU_EXPORTER_MARKERS = ("dcgm", "device-metrics-exporter", "amdgpu-metrics", "amd-gpu-metrics")


def _mentions_gpu_exporter(texts: list[str]) -> bool:
    lowered = [t.lower() for t in texts]
    return any(marker in text for text in lowered for marker in _GPU_EXPORTER_MARKERS)


def _identity_texts(name: str, labels: Mapping[str, str]) -> list[str]:
    return [name, *labels.values()]


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
def _servicemonitor_honor_labels(ctx: LintContext) -> Iterator[Hit]:
    for monitor in _monitors(ctx):
        texts = _identity_texts(monitor.name, monitor.labels)
        texts.extend(value for _, value in monitor.selector.match_labels)
        for service in selected_services(ctx, monitor)[0]:
            texts.extend(_identity_texts(service.name, service.labels))
        if not _mentions_gpu_exporter(texts):
            continue
        for index, endpoint in enumerate(monitor.endpoints):
            if endpoint.honor_labels:
                continue
            fixed: dict[str, Any] = {"port": endpoint.port} if endpoint.port else {}
            fixed["honorLabels"] = True
            yield Hit(
                obj=monitor.manifest,
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
