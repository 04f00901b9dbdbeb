"""The ServiceMonitor links: a Prometheus selects it (prometheus-operator
``monitoring/v1`` PrometheusSpec selectors) and Prometheus scrapes its targets
(``pkg/prometheus/promcfg.go`` scrape pools)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuscale.kube import LabelSelector
from gpuscale.live._verify.facts import (
    _INSTALL,
    Check,
    HttpAnswer,
    _as_manifest,
    _labels,
    _meta,
    _show_labels,
)
from gpuscale.manifests import (
    ServiceMonitor,
)


def _selects_monitor(
    prometheus: Mapping[str, Any],
    labels: Mapping[str, str],
    namespace: str,
    namespace_labels: Mapping[str, str] | None,
) -> tuple[bool, str]:
    spec = prometheus.get("spec") or {}
    where = f"prometheus {_meta(prometheus, 'namespace')}/{_meta(prometheus, 'name')}"
    raw = spec.get("serviceMonitorSelector")
    if raw is None:
        return False, f"{where} selects no ServiceMonitors (serviceMonitorSelector is null)"
    selector = LabelSelector.from_spec(raw, where=where)
    if not selector.matches(labels):
        return False, (
            f"{where} wants labels {_show_labels(selector.match_labels)}"
            + (" and expressions" if selector.match_expressions else "")
            + f"; the ServiceMonitor has {_show_labels(labels)}"
        )
    raw_ns = spec.get("serviceMonitorNamespaceSelector")
    own = _meta(prometheus, "namespace")
    if raw_ns is None:
        if namespace != own:
            return False, f"{where} looks for ServiceMonitors in {own} only"
    else:
        ns_selector = LabelSelector.from_spec(raw_ns, where=where)
        labels_of_ns = dict(namespace_labels or {"kubernetes.io/metadata.name": namespace})
        if not ns_selector.matches(labels_of_ns):
            return False, f"{where}'s serviceMonitorNamespaceSelector does not match {namespace}"
    return True, where


def check_service_monitor_selected(
    subject: str,
    monitor: Mapping[str, Any] | None,
    prometheuses: Sequence[Mapping[str, Any]] | None,
    namespace_labels: Mapping[str, str] | None,
) -> Check:
    """Some Prometheus selects the ServiceMonitor (labels and namespace)."""
    if monitor is None:
        return Check(
            "ServiceMonitor selected",
            subject,
            "fail",
            "not found in the cluster",
            "apply the manifests: gpuscale deploy",
        )
    if prometheuses is None:
        return Check(
            "ServiceMonitor selected",
            subject,
            "fail",
            "no Prometheus objects: prometheus-operator is not installed",
            _INSTALL,
        )
    if not prometheuses:
        return Check(
            "ServiceMonitor selected",
            subject,
            "fail",
            "no Prometheus object in any namespace",
            _INSTALL,
        )
    namespace = _meta(monitor, "namespace")
    reasons = []
    for prometheus in prometheuses:
        selected, why = _selects_monitor(prometheus, _labels(monitor), namespace, namespace_labels)
        if selected:
            raw = (prometheus.get("spec") or {}).get("serviceMonitorSelector") or {}
            wanted = _show_labels((raw.get("matchLabels") or {}).items()) if raw else "everything"
            return Check(
                "ServiceMonitor selected",
                subject,
                "pass",
                f"selected by {why.split(' ', 1)[1]} (serviceMonitorSelector: {wanted})",
            )
        reasons.append(why)
    return Check(
        "ServiceMonitor selected",
        subject,
        "fail",
        "; ".join(reasons),
        "give the ServiceMonitor the labels the Prometheus selects (kube-prometheus-stack: "
        "release: <helm release>), or install with gpuscale install, which selects every "
        "ServiceMonitor",
    )


def _active_targets(answer: HttpAnswer) -> list[Mapping[str, Any]] | None:
    doc = answer.json()
    if not isinstance(doc, Mapping) or doc.get("status") != "success":
        return None
    return [t for t in (doc.get("data") or {}).get("activeTargets") or [] if isinstance(t, Mapping)]


def _why_no_targets(
    monitor: Mapping[str, Any], services: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    view = ServiceMonitor.from_manifest(_as_manifest(monitor, "cluster"))
    own = _meta(monitor, "namespace")
    wanted = _show_labels(view.selector.match_labels)
    matching = [s for s in services if view.selector.matches(_labels(s))]
    if not matching:
        return (
            f"no Service has the labels it selects ({wanted})",
            "label the Service, or change the ServiceMonitor's spec.selector",
        )
    covered = [s for s in matching if view.namespace_selector.covers(_meta(s, "namespace"), own)]
    if not covered:
        looks = (
            ", ".join(view.namespace_selector.match_names)
            if view.namespace_selector.match_names
            else own
        )
        found = ", ".join(f"service/{_meta(s, 'namespace')}/{_meta(s, 'name')}" for s in matching)
        spots = sorted({_meta(s, "namespace") for s in matching})
        return (
            f"it selects Services labelled {wanted} in namespace {looks}; {found} has the "
            f"labels but is in {', '.join(spots)}, so nothing is scraped",
            f"set spec.namespaceSelector.matchNames to [{', '.join(spots)}] (or remove "
            "namespaceSelector: the ServiceMonitor's own namespace)",
        )
    ports = {str(p.get("name")) for s in covered for p in (s.get("spec") or {}).get("ports") or []}
    unnamed = [e.port for e in view.endpoints if e.port and e.port not in ports]
    if unnamed:
        return (
            f"endpoint port {unnamed[0]!r} is not a port name of "
            + ", ".join(f"service/{_meta(s, 'namespace')}/{_meta(s, 'name')}" for s in covered),
            "name the Service port (ports[].name) as the ServiceMonitor's endpoints[].port",
        )
    return (
        "the Service matches, but Prometheus has no target for it: the Service has no ready "
        "endpoints, or Prometheus has not loaded the configuration yet",
        "check that the workload's pods are Ready (kubectl get endpointslices), then wait "
        "for the next configuration reload",
    )


def check_service_monitor_targets(
    subject: str,
    monitor: Mapping[str, Any] | None,
    targets: HttpAnswer | None,
    services: Sequence[Mapping[str, Any]],
) -> Check:
    """Prometheus scrapes the ServiceMonitor's targets and they are ``up``; when it has
    none, the reason read from the ServiceMonitor and the Services."""
    if monitor is None:
        return Check("ServiceMonitor target", subject, "skip", "the ServiceMonitor is not there")
    if targets is None:
        return Check("ServiceMonitor target", subject, "skip", "Prometheus was not reached")
    active = _active_targets(targets)
    if active is None:
        return Check(
            "ServiceMonitor target",
            subject,
            "fail",
            f"/api/v1/targets did not answer ({targets.error or f'HTTP {targets.status}'})",
            "see Prometheus above",
        )
    pool = f"serviceMonitor/{_meta(monitor, 'namespace')}/{_meta(monitor, 'name')}/"
    mine = [t for t in active if str(t.get("scrapePool") or "").startswith(pool)]
    if not mine:
        why, fix = _why_no_targets(monitor, services)
        return Check("ServiceMonitor target", subject, "fail", f"no target: {why}", fix)
    down = [t for t in mine if t.get("health") != "up"]
    if down:
        first = down[0]
        return Check(
            "ServiceMonitor target",
            subject,
            "fail",
            f"{len(mine) - len(down)}/{len(mine)} up; {first.get('scrapeUrl')}: "
            f"{first.get('health')} ({first.get('lastError') or 'no error text'})",
            "the pod's metrics endpoint does not answer: check the port, the path and that "
            "the pod is Ready",
        )
    urls = ", ".join(str(t.get("scrapeUrl")) for t in mine[:3])
    return Check("ServiceMonitor target", subject, "pass", f"{len(mine)}/{len(mine)} up: {urls}")
