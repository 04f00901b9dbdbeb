"""The series kube-state-metrics exposes about Deployments, pods and nodes: real names,
real labels, real meaning. Pure.

Models kubernetes/kube-state-metrics (v2.17, ``c92fe0c``) ``internal/store``:

- ``deployment.go``: ``kube_deployment_spec_replicas`` (``spec.replicas``),
  ``kube_deployment_status_replicas`` (``status.replicas``: every non-terminated pod of
  the Deployment, **Pending ones included** — the trap in the tutorial's query),
  ``..._status_replicas_ready``, ``..._status_replicas_available`` (Ready for
  ``minReadySeconds``), ``..._status_replicas_unavailable``, ``..._status_replicas_updated``
  and ``kube_deployment_status_observed_generation``, labelled ``namespace``,
  ``deployment``;
- ``pod.go``: ``kube_pod_info``, ``kube_pod_status_phase`` (one series per phase, 1 for
  the current one), ``kube_pod_status_ready`` and ``kube_pod_status_scheduled`` (one
  series per condition status ``true``/``false``/``unknown``), labelled ``namespace``,
  ``pod``, ``uid``;
- ``node.go``: ``kube_node_info`` and ``kube_node_labels`` (only the labels the
  ``--metric-labels-allowlist`` lets through, as ``label_<sanitised key>``; with an empty
  allow list, the default, no series at all), labelled ``node``.

A series is ``(name, labels, value)`` with ``labels`` a tuple of ``(name, value)`` pairs
in exposition order. Prometheus drops labels with empty values when it ingests them;
that is the scraper's job, not this module's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "FAMILIES",
    "DeploymentStatus",
    "NodeInfo",
    "PodInfo",
    "Series",
    "deployment_series",
    "node_series",
    "pod_series",
    "sanitize_label_name",
]

Series = tuple[str, tuple[tuple[str, str], ...], float]
"""One sample of a family: metric name, labels, value."""

FAMILIES = frozenset(
    {
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas",
        "kube_deployment_status_replicas_ready",
        "kube_deployment_status_replicas_available",
        "kube_deployment_status_replicas_unavailable",
        "kube_deployment_status_replicas_updated",
        "kube_deployment_status_observed_generation",
        "kube_pod_info",
        "kube_pod_status_phase",
        "kube_pod_status_ready",
        "kube_pod_status_scheduled",
        "kube_node_info",
        "kube_node_labels",
    }
)
"""Every metric name the series functions below can return (a scraper that stores only
the names its queries select decides from this)."""

_PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
_INVALID_LABEL_CHARS = re.compile(r"[^a-zA-Z0-9_]")


@dataclass(frozen=True, slots=True)
class DeploymentStatus:
    """A Deployment's spec and status fields that kube-state-metrics reports."""

    namespace: str
    name: str
    spec_replicas: int
    """``spec.replicas``."""
    replicas: int
    """``status.replicas``: non-terminated pods, Pending included."""
    ready_replicas: int
    """``status.readyReplicas``."""
    available_replicas: int
    """``status.availableReplicas``."""
    updated_replicas: int
    """``status.updatedReplicas`` (all pods: rollouts are not modelled)."""
    observed_generation: int = 1
    """``status.observedGeneration``."""

    @property
    def unavailable_replicas(self) -> int:
        """``status.unavailableReplicas``: pods still needed to be available."""
        return max(self.spec_replicas - self.available_replicas, 0)


@dataclass(frozen=True, slots=True)
class PodInfo:
    """A pod's fields that kube-state-metrics reports."""

    namespace: str
    name: str
    uid: str
    phase: str
    """``status.phase``: Pending, Running, Succeeded, Failed or Unknown."""
    ready: bool
    """The Ready condition (false while not Ready)."""
    scheduled: bool
    """The PodScheduled condition."""
    node: str = ""
    host_ip: str = ""
    pod_ip: str = ""
    created_by_kind: str = "ReplicaSet"
    created_by_name: str = ""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A node's fields that kube-state-metrics reports."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    internal_ip: str = ""
    provider_id: str = ""
    kubelet_version: str = "v1.34.1"
    container_runtime_version: str = "containerd://1.7.27"
    kernel_version: str = "6.1.0"
    os_image: str = "Debian GNU/Linux 12 (bookworm)"
    pod_cidr: str = ""
    system_uuid: str = ""


def deployment_series(d: DeploymentStatus) -> list[Series]:
    """The deployment families for ``d`` (``deployment.go``)."""
    labels = (("namespace", d.namespace), ("deployment", d.name))
    return [
        ("kube_deployment_spec_replicas", labels, float(d.spec_replicas)),
        ("kube_deployment_status_replicas", labels, float(d.replicas)),
        ("kube_deployment_status_replicas_ready", labels, float(d.ready_replicas)),
        ("kube_deployment_status_replicas_available", labels, float(d.available_replicas)),
        ("kube_deployment_status_replicas_unavailable", labels, float(d.unavailable_replicas)),
        ("kube_deployment_status_replicas_updated", labels, float(d.updated_replicas)),
        ("kube_deployment_status_observed_generation", labels, float(d.observed_generation)),
    ]


def _condition(name: str, base: tuple[tuple[str, str], ...], status: bool) -> list[Series]:
    return [
        (name, (*base, ("condition", "true")), 1.0 if status else 0.0),
        (name, (*base, ("condition", "false")), 0.0 if status else 1.0),
        (name, (*base, ("condition", "unknown")), 0.0),
    ]


def pod_series(p: PodInfo) -> list[Series]:
    """The pod families for ``p`` (``pod.go``)."""
    base = (("namespace", p.namespace), ("pod", p.name), ("uid", p.uid))
    info = (
        *base,
        ("host_ip", p.host_ip),
        ("pod_ip", p.pod_ip),
        ("node", p.node),
        ("created_by_kind", p.created_by_kind),
        ("created_by_name", p.created_by_name),
        ("priority_class", ""),
        ("host_network", "false"),
    )
    series: list[Series] = [("kube_pod_info", info, 1.0)]
    series.extend(
        ("kube_pod_status_phase", (*base, ("phase", phase)), 1.0 if phase == p.phase else 0.0)
        for phase in _PHASES
    )
    series.extend(_condition("kube_pod_status_ready", base, p.ready))
    series.extend(_condition("kube_pod_status_scheduled", base, p.scheduled))
    return series


def sanitize_label_name(key: str) -> str:
    """A Kubernetes label key as a Prometheus label name (``SanitizeLabelName``)."""
    return _INVALID_LABEL_CHARS.sub("_", key)


def node_series(n: NodeInfo, label_allowlist: Sequence[str] = ()) -> list[Series]:
    """The node families for ``n`` (``node.go``).

    ``label_allowlist`` is ``--metric-labels-allowlist=nodes=[...]``; ``*`` as the first
    entry lets every label through.
    """
    base = (("node", n.name),)
    info = (
        *base,
        ("kernel_version", n.kernel_version),
        ("os_image", n.os_image),
        ("container_runtime_version", n.container_runtime_version),
        ("kubelet_version", n.kubelet_version),
        ("kubeproxy_version", "deprecated"),
        ("provider_id", n.provider_id),
        ("pod_cidr", n.pod_cidr),
        ("system_uuid", n.system_uuid),
        ("internal_ip", n.internal_ip),
    )
    series: list[Series] = [("kube_node_info", info, 1.0)]
    if label_allowlist:
        if label_allowlist[0] == "*":
            allowed = dict(n.labels)
        else:
            allowed = {k: v for k, v in n.labels.items() if k in label_allowlist}
        pairs = sorted((f"label_{sanitize_label_name(k)}", v) for k, v in allowed.items())
        series.append(("kube_node_labels", (*base, *pairs), 1.0))
    return series
