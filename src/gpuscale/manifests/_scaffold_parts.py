"""The objects every scaffold writes the same way, whatever serves: the Deployment
around a pod spec, the Service on a named ``http`` port, the ServiceMonitor that
kube-prometheus-stack's Prometheus selects, and the in-cluster address of that
Prometheus. Both presets (:mod:`.scaffold`'s gauge app and :mod:`._scaffold_vllm`'s vLLM
server) take them from here, with the comments that say why each is so. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscale.manifests._model import KeyPath

if TYPE_CHECKING:
    from gpuscale.manifests.scaffold import ScaffoldOptions

__all__ = ["Placed", "deployment", "prometheus_server", "service", "service_monitor"]

Placed = tuple[str, dict[str, Any], dict[KeyPath, str]]
"""One scaffolded file: its path, its object, and the comments on its keys."""


def deployment(
    options: ScaffoldOptions,
    labels: dict[str, str],
    pod_spec: dict[str, Any],
    comments: dict[KeyPath, str],
) -> Placed:
    """The Deployment of ``pod_spec``, without a replica count (the HPA owns it)."""
    comments[("spec", "selector")] = (
        "No replicas: the HPA KEDA creates owns the count (from minReplicaCount up);\n"
        "a count here would be re-applied on every apply and fight it."
    )
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": options.name, "namespace": options.namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }
    return ("manifests/deployment.yaml", body, comments)


def service(options: ScaffoldOptions, labels: dict[str, str], port: int, why: str) -> Placed:
    """The Service in front of the pods, its port named ``http``; ``why`` comments it."""
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": options.name, "namespace": options.namespace, "labels": labels},
        "spec": {
            "selector": labels,
            "ports": [{"name": "http", "port": port, "targetPort": "http"}],
        },
    }
    return ("manifests/service.yaml", body, {("spec", "ports"): why})


def service_monitor(options: ScaffoldOptions, labels: dict[str, str]) -> Placed:
    """The ServiceMonitor on the Service's ``http`` port, in the app's namespace and
    labelled for the Prometheus release (the tutorial put its own in kube-system, where
    it selects nothing)."""
    scrape = options.scrape_text()
    body = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": options.name,
            "namespace": options.namespace,
            "labels": {**labels, "release": options.prometheus_release},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "namespaceSelector": {"matchNames": [options.namespace]},
            "endpoints": [{"port": "http", "path": "/metrics", "interval": scrape}],
        },
    }
    comments: dict[KeyPath, str] = {
        ("metadata", "namespace"): (
            "In the app's namespace, with a namespaceSelector naming it: a\n"
            "ServiceMonitor elsewhere (the tutorial's kube-system) selects nothing."
        ),
        ("metadata", "labels"): (
            "kube-prometheus-stack's Prometheus selects ServiceMonitors labelled\n"
            f"release: <its Helm release name> ({options.prometheus_release} here)."
        ),
        ("spec", "endpoints"): (
            f"Scraped every {scrape}: the profile's prometheus.scrape_interval says the same."
        ),
    }
    return ("manifests/servicemonitor.yaml", body, comments)


def prometheus_server(options: ScaffoldOptions) -> str:
    """The in-cluster address of kube-prometheus-stack's Prometheus (its operated Service)."""
    return f"http://prometheus-operated.{options.prometheus_namespace}.svc.cluster.local:9090"
