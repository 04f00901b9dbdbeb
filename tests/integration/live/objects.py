"""Kubernetes and KEDA objects as the API server returns them, for the fake API server.

Field names and nesting follow the Kubernetes API reference (apps/v1 Deployment,
core/v1 Pod, Node, Service, Event; discovery.k8s.io/v1 EndpointSlice; autoscaling/v2
HorizontalPodAutoscaler) and KEDA's ScaledObject CRD (keda.sh/v1alpha1), with the
condition types and reasons the controllers set (KEDA ``ScaledObjectReady``,
``ScalerActive``; HPA ``ValidMetricFound``, ``SucceededRescale``).
"""

from __future__ import annotations

import json
from typing import Any

NS = "demo"
APP = "go-from-configmap"


def deployment(
    name: str = APP, *, ns: str = NS, spec: int = 1, status: int = 1, ready: int = 1,
    port: int = 8080,
) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "generation": 3, "labels": {"app": name}},
        "spec": {
            "replicas": spec,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{
                        "name": "go-runner",
                        "image": "ghcr.io/example/gpuscale-app:0.1.0",
                        "ports": [{"containerPort": port, "protocol": "TCP"}],
                        "resources": {"requests": {"amd.com/gpu": "1"},
                                      "limits": {"amd.com/gpu": "1"}},
                    }],
                    "nodeSelector": {"doks.digitalocean.com/gpu-brand": "amd"},
                    "tolerations": [{"key": "amd.com/gpu", "operator": "Exists"}],
                },
            },
        },
        "status": {"observedGeneration": 3, "replicas": status, "readyReplicas": ready,
                   "availableReplicas": ready, "updatedReplicas": status,
                   "conditions": [
                       {"type": "Available", "status": "True" if ready >= spec else "False",
                        "reason": "MinimumReplicasAvailable" if ready >= spec
                        else "MinimumReplicasUnavailable",
                        "message": "Deployment has minimum availability." if ready >= spec
                        else "Deployment does not have minimum availability."},
                       {"type": "Progressing", "status": "True",
                        "reason": "NewReplicaSetAvailable",
                        "message": f'ReplicaSet "{name}-7d9f8" has successfully progressed.'},
                   ]},
    }  # fmt: skip


def pod(
    name: str, *, app: str = APP, ns: str = NS, phase: str = "Running", ready: bool = True,
    node: str | None = "gpu-node-1", created: str = "2026-11-30T10:00:00Z",
    deleting: bool = False, unschedulable: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    conditions: list[dict[str, Any]] = []
    if node is not None:
        conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": created})
        conditions.append(
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": created}
        )
    elif unschedulable:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
                "lastTransitionTime": created,
            }
        )
    meta: dict[str, Any] = {
        "name": name, "namespace": ns, "labels": {"app": app, "pod-template-hash": "7d9f8"},
        "creationTimestamp": created,
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                             "name": f"{app}-7d9f8", "controller": True}],
    }  # fmt: skip
    if deleting:
        meta["deletionTimestamp"] = "2026-11-30T12:00:00Z"
    spec: dict[str, Any] = {
        "containers": [{"name": "go-runner", "ports": [{"containerPort": 8080}]}]
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase, "conditions": conditions},
    }


def node(
    name: str, *, pool: str = "gpu", ready: bool = True, gpus: int = 1, deleting: bool = False,
    to_be_deleted: bool = False,
) -> dict[str, Any]:  # fmt: skip
    taints = [{"key": "amd.com/gpu", "effect": "NoSchedule"}] if gpus else []
    if to_be_deleted:
        taints.append(
            {"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000000", "effect": "NoSchedule"}
        )
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"doks.digitalocean.com/node-pool": pool, "kubernetes.io/hostname": name,
                   **({"doks.digitalocean.com/gpu-brand": "amd"} if gpus else {})},
    }  # fmt: skip
    if deleting:
        meta["deletionTimestamp"] = "2026-11-30T12:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": {"taints": taints},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                            "reason": "KubeletReady" if ready else "KubeletNotReady"}],
            "allocatable": {"cpu": "20", "memory": "235Gi",
                            **({"amd.com/gpu": str(gpus)} if gpus else {})},
        },
    }  # fmt: skip


def service(name: str = APP, *, ns: str = NS, target: str | int = 8080) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"selector": {"app": name}, "type": "ClusterIP",
                 "ports": [{"name": "metrics", "port": 8080, "targetPort": target,
                            "protocol": "TCP"}]},
    }  # fmt: skip


def endpoint_slice(
    pods: list[tuple[str, bool]], *, name: str = APP, ns: str = NS, port: int = 8080
) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": f"{name}-x7k2p", "namespace": ns,
                     "labels": {"kubernetes.io/service-name": name}},
        "addressType": "IPv4",
        "ports": [{"name": "metrics", "port": port, "protocol": "TCP"}],
        "endpoints": [
            {"addresses": [f"10.244.0.{i + 10}"], "conditions": {"ready": ready},
             "targetRef": {"kind": "Pod", "name": pod_name, "namespace": ns}}
            for i, (pod_name, ready) in enumerate(pods)
        ],
    }  # fmt: skip


QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)


def scaled_object(
    name: str = APP, *, ns: str = NS, ready: bool = True, active: bool = True,
    server: str = "http://prometheus-operated.monitoring.svc.cluster.local:9090",
) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "scaleTargetRef": {"name": name},
            "pollingInterval": 30, "cooldownPeriod": 30,
            "minReplicaCount": 1, "maxReplicaCount": 8,
            "triggers": [{"type": "prometheus", "metadata": {
                "serverAddress": server, "metricName": "my_custom_gauge",
                "threshold": "80", "query": QUERY}}],
        },
        "status": {
            "hpaName": f"keda-hpa-{name}",
            "externalMetricNames": ["s0-prometheus"],
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False",
                 "reason": "ScaledObjectReady" if ready else "ScaledObjectCheckFailed",
                 "message": "ScaledObject is defined correctly and is ready for scaling"
                 if ready else "ScaledObject doesn't have correct scaleTargetRef specification"},
                {"type": "Active", "status": "True" if active else "False",
                 "reason": "ScalerActive" if active else "ScalerNotActive",
                 "message": "Scaling is performed because triggers are active"
                 if active else "Scaling is not performed because triggers are not active"},
                {"type": "Fallback", "status": "False", "reason": "NoFallbackFound",
                 "message": "No fallbacks are active on this scaled object"},
            ],
        },
    }  # fmt: skip


def hpa(
    so: str = APP, *, ns: str = NS, current: int = 1, desired: int = 1,
    value: str | None = "80", target: str = "80",
) -> dict[str, Any]:  # fmt: skip
    metric = {
        "name": "s0-prometheus",
        "selector": {"matchLabels": {"scaledobject.keda.sh/name": so}},
    }
    status: dict[str, Any] = {
        "currentReplicas": current, "desiredReplicas": desired,
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
             "message": "recommended size matches current size"},
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
             "message": "the HPA was able to successfully calculate a replica count from "
                        "external metric s0-prometheus"},
        ],
    }  # fmt: skip
    if value is not None:
        status["currentMetrics"] = [
            {"type": "External", "external": {"metric": metric, "current": {"averageValue": value}}}
        ]
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{so}", "namespace": ns,
                     "labels": {"scaledobject.keda.sh/name": so}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": so},
            "minReplicas": 1, "maxReplicas": 8,
            "metrics": [{"type": "External", "external": {
                "metric": metric, "target": {"type": "AverageValue", "averageValue": target}}}],
        },
        "status": status,
    }  # fmt: skip


def event(
    name: str, *, reason: str, message: str, kind: str, obj: str, ns: str = NS,
    type_: str = "Normal", component: str = "", at: str = "2026-11-30T10:00:00Z", count: int = 1,
) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": kind, "name": obj, "namespace": ns},
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": at,
        "lastTimestamp": at,
        "source": {"component": component},
        "reportingComponent": component,
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name,
                     "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }  # fmt: skip


def crd(
    group: str, kind: str, plural: str, version: str, *, scope: str = "Namespaced"
) -> dict[str, Any]:
    """A CustomResourceDefinition as stored (schema left out), Established."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                      "singular": kind.lower()},
            "scope": scope,
            "versions": [{"name": version, "served": True, "storage": True}],
        },
        "status": {"conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ]},
    }  # fmt: skip


KEDA_CRDS = [
    crd("keda.sh", "ScaledObject", "scaledobjects", "v1alpha1"),
    crd("keda.sh", "ScaledJob", "scaledjobs", "v1alpha1"),
    crd("keda.sh", "TriggerAuthentication", "triggerauthentications", "v1alpha1"),
    crd("keda.sh", "ClusterTriggerAuthentication", "clustertriggerauthentications", "v1alpha1",
        scope="Cluster"),
]  # fmt: skip
PROMETHEUS_OPERATOR_CRDS = [
    crd("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "v1"),
    crd("monitoring.coreos.com", "PodMonitor", "podmonitors", "v1"),
    crd("monitoring.coreos.com", "Prometheus", "prometheuses", "v1"),
    crd("monitoring.coreos.com", "PrometheusRule", "prometheusrules", "v1"),
]


def apiservice(*, ns: str = "keda", available: bool = True,
               service: str = "keda-operator-metrics-apiserver") -> dict[str, Any]:  # fmt: skip
    """KEDA's registration of the external metrics API (kedacore/charts
    keda/templates/metrics-server/apiservice.yaml), with the aggregator's condition."""
    condition = (
        {"type": "Available", "status": "True", "reason": "Passed",
         "message": "all checks passed"}
        if available
        else {"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck",
              "message": "failing or missing response from https://10.245.12.7:6443/apis/"
              "external.metrics.k8s.io/v1beta1: Get \"https://10.245.12.7:6443/apis/external."
              "metrics.k8s.io/v1beta1\": dial tcp 10.245.12.7:6443: i/o timeout"}
    )  # fmt: skip
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.external.metrics.k8s.io",
                     "labels": {"app.kubernetes.io/name": "v1beta1.external.metrics.k8s.io"}},
        "spec": {"service": {"name": service, "namespace": ns, "port": 443},
                 "group": "external.metrics.k8s.io", "version": "v1beta1",
                 "groupPriorityMinimum": 100, "versionPriority": 100},
        "status": {"conditions": [condition]},
    }  # fmt: skip


def prometheus_cr(
    *, ns: str = "monitoring", name: str = "prometheus-kube-prometheus-prometheus",
    selector: dict[str, Any] | None = None, namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A ``monitoring.coreos.com/v1`` Prometheus as kube-prometheus-stack renders it
    (``templates/prometheus/prometheus.yaml``); ``selector`` None renders null."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"app": "kube-prometheus-stack-prometheus",
                                "release": "prometheus"}},
        "spec": {"replicas": 1, "serviceAccountName": "prometheus-kube-prometheus-prometheus",
                 "serviceMonitorSelector": selector,
                 "serviceMonitorNamespaceSelector": namespace_selector,
                 "podMonitorSelector": {"matchLabels": {"release": "prometheus"}},
                 "scrapeInterval": "30s"},
        "status": {"availableReplicas": 1, "replicas": 1},
    }  # fmt: skip


def from_manifest(body: dict[str, Any], ns: str, **status: Any) -> dict[str, Any]:
    """A manifest as the API server returns it once applied in ``ns``, with ``status``."""
    doc = json.loads(json.dumps(body))
    meta = doc.setdefault("metadata", {})
    meta["namespace"] = ns
    meta.setdefault("uid", f"uid-{meta['name']}")
    meta.setdefault("resourceVersion", "4711")
    meta.setdefault("generation", 1)
    if status:
        doc["status"] = status
    return doc


def vector(*samples: tuple[dict[str, str], str], at: float = 1764496800.0) -> str:
    """A ``/api/v1/query`` answer with these ``(labels, value)`` samples."""
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": labels, "value": [at, value]} for labels, value in samples]}})  # fmt: skip


def targets(*active: dict[str, Any]) -> str:
    """A ``/api/v1/targets?state=active`` answer."""
    return json.dumps({"status": "success",
                       "data": {"activeTargets": list(active), "droppedTargets": []}})  # fmt: skip


def target(pool: str, url: str, *, up: bool = True, error: str = "") -> dict[str, Any]:
    """One active target (Prometheus ``/api/v1/targets``)."""
    return {
        "discoveredLabels": {"__address__": url.split("/")[2]},
        "labels": {"instance": url.split("/")[2], "job": pool.split("/")[2]},
        "scrapePool": pool,
        "scrapeUrl": url,
        "globalUrl": url,
        "lastError": error,
        "lastScrape": "2026-11-30T10:00:00.123Z",
        "lastScrapeDuration": 0.0021,
        "health": "up" if up else "down",
        "scrapeInterval": "15s",
        "scrapeTimeout": "10s",
    }
