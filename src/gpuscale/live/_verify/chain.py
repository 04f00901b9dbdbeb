"""The whole chain for a manifest set: what verify checks (the targets), and every check
in chain order."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuscale.controllers.keda import (
    PrometheusTrigger,
    ScaledObjectError,
    TriggerError,
    parse_prometheus_trigger,
)
from gpuscale.live._verify.capacity import (
    check_gpu_capacity,
    check_pending_pods,
)
from gpuscale.live._verify.facts import (
    KEDA_CRDS,
    METRICS_APISERVICE,
    Check,
    Facts,
    PromFacts,
    Ref,
    Status,
    _labels,
    _read_failed,
    _unread,
    hpa_of,
    keda_deployments,
)
from gpuscale.live._verify.keda import (
    check_deployment_ready,
    check_external_metrics_api,
    check_hpa,
    check_keda_crds,
    check_scaled_object_active,
    check_scaled_object_ready,
)
from gpuscale.live._verify.monitors import (
    check_service_monitor_selected,
    check_service_monitor_targets,
)
from gpuscale.live._verify.prometheus import (
    check_kube_state_metrics,
    check_prometheus,
    check_query,
    ksm_query,
)
from gpuscale.live.apply import CLUSTER_SCOPED_KINDS, target_namespace
from gpuscale.manifests import (
    Manifest,
    ManifestSet,
)


def prometheus_trigger_of(
    manifest: Manifest,
) -> tuple[PrometheusTrigger | None, str]:
    """The first prometheus trigger of a ScaledObject, parsed as KEDA parses it, or None
    with the reason."""
    triggers = manifest.spec.get("triggers") or []
    for index, trigger in enumerate(triggers):
        if not isinstance(trigger, Mapping) or trigger.get("type") != "prometheus":
            continue
        metadata = {str(k): str(v) for k, v in (trigger.get("metadata") or {}).items()}
        try:
            return (
                parse_prometheus_trigger(
                    metadata, trigger_index=index, where=f"spec.triggers[{index}].metadata"
                ),
                "",
            )
        except (TriggerError, ScaledObjectError) as exc:
            return None, exc.one_line()
    return None, "no prometheus trigger"


def _namespace(manifest: Manifest, flag: str | None, context: str) -> str:
    found = target_namespace(
        manifest,
        namespaced=manifest.kind not in CLUSTER_SCOPED_KINDS,
        flag=flag,
        context=context,
    )
    return found or context


@dataclass(frozen=True, slots=True)
class _Targets:
    scaled_objects: tuple[tuple[Manifest, str], ...]
    monitors: tuple[tuple[Manifest, str], ...]
    services: tuple[Mapping[str, Any], ...]
    deployments: tuple[tuple[str, str, Manifest | None], ...]


def verify_targets(manifests: ManifestSet, flag: str | None, context: str) -> _Targets:
    """What verify checks for ``manifests``: the ScaledObjects, ServiceMonitors, Services
    and Deployments, each with the namespace it is in."""
    scaled = tuple((m, _namespace(m, flag, context)) for m in manifests.by_kind("ScaledObject"))
    monitors = tuple((m, _namespace(m, flag, context)) for m in manifests.by_kind("ServiceMonitor"))
    services = []
    for manifest in manifests.by_kind("Service"):
        body = json.loads(json.dumps(manifest.body))
        body.setdefault("metadata", {})["namespace"] = _namespace(manifest, flag, context)
        services.append(body)
    deployments: dict[tuple[str, str], Manifest | None] = {}
    for manifest in manifests.by_kind("Deployment"):
        deployments[(_namespace(manifest, flag, context), manifest.name)] = manifest
    for manifest, namespace in scaled:
        ref = manifest.spec.get("scaleTargetRef") or {}
        if ref.get("name") and ref.get("kind", "Deployment") == "Deployment":
            deployments.setdefault((namespace, str(ref["name"])), None)
    return _Targets(
        scaled,
        monitors,
        tuple(services),
        tuple((ns, name, m) for (ns, name), m in deployments.items()),
    )


def verify_checks(
    manifests: ManifestSet,
    facts: Facts,
    *,
    namespace: str | None = None,
    prometheus_url: str | None = None,
) -> list[Check]:
    """Every check for ``manifests``, in chain order, from ``facts``."""
    targets = verify_targets(manifests, namespace, facts.context_namespace)
    checks: list[Check] = []
    crd_refs = {name: Ref.object("CustomResourceDefinition", None, name) for name in KEDA_CRDS}
    crds = {name: facts.read(ref) for name, ref in crd_refs.items()}
    error = _unread(facts, *crd_refs.values())
    checks.append(_read_failed("KEDA CRDs", "", error) if error else check_keda_crds(crds))
    apiservice_ref = Ref.object("APIService", None, METRICS_APISERVICE)
    apiservice = facts.read(apiservice_ref)
    operator, server_name, _ = keda_deployments(apiservice)
    for role, name in (("KEDA operator", operator), ("KEDA metrics server", server_name)):
        keda_ref = Ref.object("Deployment", facts.keda_namespace, name)
        error = _unread(facts, keda_ref)
        if error:
            checks.append(_read_failed(role, f"deployment/{facts.keda_namespace}/{name}", error))
        else:
            checks.append(
                check_deployment_ready(role, facts.keda_namespace, name, facts.read(keda_ref))
            )
    error = _unread(facts, apiservice_ref)
    checks.append(
        _read_failed("external metrics API", f"apiservice/{METRICS_APISERVICE}", error)
        if error
        else check_external_metrics_api(apiservice)
    )

    first_prometheus: PromFacts | None = None
    trigger_queries: dict[tuple[str, str], str] = {}
    for manifest, ns in targets.scaled_objects:
        subject = f"scaledobject/{ns}/{manifest.name}"
        so_ref = Ref.object("ScaledObject", ns, manifest.name)
        live = facts.read(so_ref)
        error = _unread(facts, so_ref)
        min_replicas = manifest.spec.get("minReplicaCount")
        if error:
            checks.append(_read_failed("ScaledObject Ready", subject, error))
            checks.append(_read_failed("ScaledObject Active", subject, error))
        else:
            checks.append(check_scaled_object_ready(subject, live))
            checks.append(
                check_scaled_object_active(
                    subject, live, int(min_replicas) if isinstance(min_replicas, int) else 0
                )
            )
        name = hpa_of(manifest, live)
        hpa_ref = Ref.object("HorizontalPodAutoscaler", ns, name)
        error = _unread(facts, hpa_ref)
        checks.append(
            _read_failed("HPA", f"hpa/{ns}/{name}", error)
            if error
            else check_hpa(ns, name, facts.read(hpa_ref))
        )
        trigger, why = prometheus_trigger_of(manifest)
        if trigger is None:
            checks.append(Check("trigger query", subject, "skip", why))
            continue
        ref = (manifest.spec.get("scaleTargetRef") or {}).get("name")
        if ref:
            trigger_queries[(ns, str(ref))] = trigger.query
        key = prometheus_url or trigger.server_address
        prom = facts.prometheus.get(key)
        checks.append(check_prometheus(subject, prom, key))
        if prom is not None and prom.buildinfo.status == 200:
            first_prometheus = first_prometheus or prom
            checks.append(check_query(subject, trigger, prom.queries.get(trigger.query)))
        else:
            checks.append(Check("trigger query", subject, "skip", "Prometheus was not reached"))
    if first_prometheus is None:
        # No trigger reached one: --prometheus, or the profile's prometheus.address.
        first_prometheus = next(
            (p for p in facts.prometheus.values() if p.buildinfo.status == 200), None
        )

    prometheuses_ref = Ref.list("prometheuses")
    prometheuses = facts.lists.get(prometheuses_ref.key)
    for manifest, ns in targets.monitors:
        subject = f"servicemonitor/{ns}/{manifest.name}"
        monitor_ref = Ref.object("ServiceMonitor", ns, manifest.name)
        namespace_ref = Ref.object("Namespace", None, ns)
        live = facts.read(monitor_ref)
        namespace_doc = facts.read(namespace_ref)
        ns_labels = _labels(namespace_doc) if namespace_doc is not None else None
        monitor_error = _unread(facts, monitor_ref)
        error = monitor_error or _unread(facts, prometheuses_ref, namespace_ref)
        if error:
            checks.append(_read_failed("ServiceMonitor selected", subject, error))
        else:
            checks.append(check_service_monitor_selected(subject, live, prometheuses, ns_labels))
        if monitor_error:
            checks.append(_read_failed("ServiceMonitor target", subject, monitor_error))
        else:
            checks.append(
                check_service_monitor_targets(
                    subject,
                    live,
                    first_prometheus.targets if first_prometheus else None,
                    targets.services,
                )
            )

    nodes_ref = Ref.list("nodes")
    nodes = facts.items(nodes_ref)
    for ns, name, written in targets.deployments:
        subject = f"deployment/{ns}/{name}"
        query = ksm_query(ns, name)
        uses = "kube_deployment_" in trigger_queries.get((ns, name), "")
        checks.append(
            check_kube_state_metrics(
                subject,
                first_prometheus.queries.get(query) if first_prometheus else None,
                query=query,
                needed=uses,
            )
        )
        deployment_ref = Ref.object("Deployment", ns, name)
        live = facts.read(deployment_ref)
        deployment_error = _unread(facts, deployment_ref)
        body = live if live is not None else (written.body if written else None)
        if body is None and deployment_error:
            checks.append(_read_failed("GPU capacity", subject, deployment_error))
        elif body is None:
            checks.append(
                Check(
                    "GPU capacity",
                    subject,
                    "fail",
                    "the Deployment is not in the cluster",
                    "apply the manifests: gpuscale deploy",
                )
            )
        elif (error := _unread(facts, nodes_ref)) is not None:
            checks.append(_read_failed("GPU capacity", subject, error))
        else:
            checks.append(check_gpu_capacity(subject, body, nodes, facts.pools, facts.pools_source))
        pods_ref = Ref.list("pods", ns, name)
        error = _unread(facts, deployment_ref, pods_ref)
        if error:
            checks.append(_read_failed("Pending pods", subject, error))
        elif live is None:
            checks.append(
                Check("Pending pods", subject, "skip", "the Deployment is not in the cluster")
            )
        else:
            checks.append(
                check_pending_pods(
                    subject, facts.items(pods_ref), facts.items(Ref.list("events", ns))
                )
            )
    return checks


_STATUSES: tuple[Status, ...] = ("pass", "fail", "warn", "skip", "error")


def summary(checks: Sequence[Check]) -> str:
    """``12 checks: 10 pass, 1 fail, 1 warn, 0 skip`` (``, 2 error`` when checks could not
    be made)."""
    counts = {status: sum(1 for c in checks if c.status == status) for status in _STATUSES}
    if not counts["error"]:
        del counts["error"]
    return f"{len(checks)} checks: " + ", ".join(f"{n} {status}" for status, n in counts.items())
