"""Typed, read-only views of the objects lint, the simulator and deploy reason about.

Each view is built from a :class:`Manifest` by a ``from_manifest`` class method and is a
frozen dataclass of plain values: durations in seconds, resource quantities as floats in
base units (``"500m"`` → 0.5, ``"2Gi"`` → 2147483648.0, ``amd.com/gpu: "1"`` → 1.0).
Missing fields take the Kubernetes API defaults (named on each field). A field holding a
templated value (``${replicas}``, ``{{ .Values.x }}``, ``<name>``) reads as ``None`` so
that callers can stay silent instead of guessing. A field of the wrong type raises
:class:`ManifestError` naming ``file:line`` of the key.

KEDA's ScaledObject has its typed model in ``gpuscale.controllers.keda``; here it is
only the raw ``Manifest.body["spec"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuscale.errors import ManifestError
from gpuscale.kube import (
    LabelSelector,
    NodeSelectorTerm,
    Toleration,
    parse_duration,
    parse_quantity,
)
from gpuscale.manifests._model import KeyPath, Location, Manifest, format_path

__all__ = [
    "GPU_RESOURCES",
    "WORKLOAD_KINDS",
    "Container",
    "ContainerPort",
    "Endpoint",
    "NamespaceSelector",
    "Probe",
    "Service",
    "ServiceMonitor",
    "ServicePort",
    "Workload",
    "is_templated",
]

WORKLOAD_KINDS = ("Deployment", "StatefulSet")
"""Kinds :class:`Workload` reads."""

GPU_RESOURCES = ("amd.com/gpu", "nvidia.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")
"""Extended resource names of the GPU device plugins gpuscale knows."""

_TEMPLATE = re.compile(r"\$\{|\$[A-Za-z_]|\{\{|\}\}|\{%.*%\}|<\s*[A-Za-z][\w. -]*>")


def is_templated(value: Any) -> bool:
    """Whether ``value`` holds a placeholder that a person or a tool fills in before applying.

    Recognised anywhere in the text: ``${VAR}`` and ``$VAR`` (envsubst, Grafana's
    ``$__rate_interval``), ``{{ ... }}`` (Helm, Jinja; an unbalanced ``{{`` or ``}}`` too, as
    a template split over lines leaves), ``{% ... %}``, and ``<name>`` made of letters,
    digits, ``_``, ``-``, ``.`` and spaces (tutorials' ``<your-namespace>``,
    ``doks.<provider-domain>/gpu-brand``).
    """
    return isinstance(value, str) and bool(_TEMPLATE.search(value))


class _Reader:
    """Typed access to one manifest's body with errors naming the key's line."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest

    def fail(self, path: KeyPath, expected: str, got: Any) -> ManifestError:
        where = self.manifest.line_of(path)
        shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
        return ManifestError(
            f"{self.manifest.ref}: {format_path(path)} must be {expected}, got {shown}",
            where=str(where),
            fix=f"write {format_path(path)} as {expected}",
        )

    def raw(self, path: KeyPath) -> Any:
        return self.manifest.get(path)

    def mapping(self, path: KeyPath) -> dict[str, Any]:
        value = self.raw(path)
        if value is None or is_templated(value):
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, "a mapping", value)
        return value

    def items(self, path: KeyPath) -> list[Any]:
        value = self.raw(path)
        if value is None or is_templated(value):
            return []
        if not isinstance(value, list):
            raise self.fail(path, "a list", value)
        return value

    def text(self, path: KeyPath, default: str | None = None) -> str | None:
        value = self.raw(path)
        if value is None:
            return default
        if isinstance(value, bool | dict | list):
            raise self.fail(path, "a string", value)
        return str(value)

    def integer(self, path: KeyPath, default: int | None) -> int | None:
        value = self.raw(path)
        if value is None:
            return default
        if is_templated(value):
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, "an integer", value)
        return value

    def boolean(self, path: KeyPath, default: bool) -> bool:
        value = self.raw(path)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(path, "true or false", value)
        return value

    def labels(self, path: KeyPath) -> dict[str, str]:
        result: dict[str, str] = {}
        for key, value in self.mapping(path).items():
            if isinstance(value, dict | list):
                raise self.fail((*path, key), "a string", value)
            result[key] = "" if value is None else str(value)
        return result

    def quantities(self, path: KeyPath) -> dict[str, float]:
        result: dict[str, float] = {}
        for name, value in self.mapping(path).items():
            if is_templated(value):
                continue
            if not isinstance(value, str | int | float):
                raise self.fail((*path, name), "a quantity such as 1, 500m or 2Gi", value)
            try:
                result[name] = parse_quantity(value)
            except (ValueError, TypeError):
                raise self.fail((*path, name), "a quantity such as 1, 500m or 2Gi", value) from None
        return result

    def duration(self, path: KeyPath) -> float | None:
        value = self.raw(path)
        if value is None or is_templated(value):
            return None
        try:
            return parse_duration(value)
        except (ValueError, TypeError):
            raise self.fail(path, "a duration such as 30s or 1m", value) from None

    def selector(self, path: KeyPath) -> LabelSelector:
        return LabelSelector.from_spec(self.raw(path), where=str(self.manifest.line_of(path)))

    def port(self, path: KeyPath) -> int | str | None:
        value = self.raw(path)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, "a port number or a port name", value)
        return value


@dataclass(frozen=True)
class Probe:
    """A readiness/liveness probe, with the API's defaults."""

    handler: str
    """``httpGet``, ``tcpSocket``, ``grpc`` or ``exec``."""
    path: str | None = None
    port: int | str | None = None
    initial_delay_seconds: int = 0
    period_seconds: int = 10
    timeout_seconds: int = 1
    success_threshold: int = 1
    failure_threshold: int = 3


@dataclass(frozen=True)
class ContainerPort:
    """A container port; ``name`` is what Services and probes may refer to."""

    container_port: int | None
    name: str | None = None
    protocol: str = "TCP"


@dataclass(frozen=True)
class Container:
    """One container: what it runs and what it asks the scheduler for."""

    name: str
    image: str | None
    command: tuple[str, ...]
    args: tuple[str, ...]
    requests: Mapping[str, float]
    """As written; see :attr:`effective_requests` for what the scheduler uses."""
    limits: Mapping[str, float]
    ports: tuple[ContainerPort, ...]
    readiness_probe: Probe | None
    location: Location

    @property
    def effective_requests(self) -> dict[str, float]:
        """Requests after API defaulting: a resource with a limit and no request requests
        its limit (and extended resources such as GPUs are always requested = limit)."""
        merged = dict(self.limits)
        merged.update(self.requests)
        return merged

    @property
    def gpus(self) -> dict[str, float]:
        """GPU extended resources this container gets (from limits, where GPUs belong)."""
        return {
            name: amount
            for name, amount in self.effective_requests.items()
            if name in GPU_RESOURCES or name.endswith("/gpu")
        }


@dataclass(frozen=True)
class Workload:
    """A Deployment or StatefulSet and its pod template."""

    kind: str
    name: str
    namespace: str | None
    replicas: int | None
    """``spec.replicas``; 1 when absent (API default); ``None`` when templated."""
    selector: LabelSelector
    template_labels: Mapping[str, str]
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    node_selector: Mapping[str, str]
    required_node_affinity: tuple[NodeSelectorTerm, ...]
    """``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`` (ORed)."""
    tolerations: tuple[Toleration, ...]
    termination_grace_period_seconds: int | None
    """30 when absent (API default); ``None`` when templated."""
    source: Location
    manifest: Manifest = field(repr=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> Workload:
        """Read a Deployment or StatefulSet; raises :class:`ManifestError` for other kinds."""
        if manifest.kind not in WORKLOAD_KINDS:
            raise ManifestError(
                f"{manifest.ref} is not a workload",
                where=str(manifest.source),
                fix=f"pass one of {', '.join(WORKLOAD_KINDS)}",
            )
        read = _Reader(manifest)
        spec: KeyPath = ("spec", "template", "spec")
        affinity: KeyPath = (
            *spec,
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        )
        return cls(
            kind=manifest.kind,
            name=manifest.name,
            namespace=manifest.namespace,
            replicas=read.integer(("spec", "replicas"), 1),
            selector=read.selector(("spec", "selector")),
            template_labels=read.labels(("spec", "template", "metadata", "labels")),
            containers=_containers(read, (*spec, "containers")),
            init_containers=_containers(read, (*spec, "initContainers")),
            node_selector=read.labels((*spec, "nodeSelector")),
            required_node_affinity=tuple(
                NodeSelectorTerm.from_spec(term, where=str(manifest.line_of((*affinity, i))))
                for i, term in enumerate(read.items(affinity))
            ),
            tolerations=tuple(
                _toleration(read, (*spec, "tolerations", i))
                for i in range(len(read.items((*spec, "tolerations"))))
            ),
            termination_grace_period_seconds=read.integer(
                (*spec, "terminationGracePeriodSeconds"), 30
            ),
            source=manifest.source,
            manifest=manifest,
        )

    @property
    def pod_requests(self) -> dict[str, float]:
        """What one pod asks the scheduler for: the sum over containers, raised to any
        init container's larger request (``computePodResourceRequest`` in
        pkg/scheduler/framework/plugins/noderesources/fit.go; pod overhead not modelled)."""
        total: dict[str, float] = {}
        for container in self.containers:
            for name, amount in container.effective_requests.items():
                total[name] = total.get(name, 0.0) + amount
        for container in self.init_containers:
            for name, amount in container.effective_requests.items():
                total[name] = max(total.get(name, 0.0), amount)
        return total

    @property
    def gpus_per_pod(self) -> dict[str, float]:
        """GPU extended resources one pod needs, by resource name."""
        return {
            name: amount
            for name, amount in self.pod_requests.items()
            if name in GPU_RESOURCES or name.endswith("/gpu")
        }


@dataclass(frozen=True)
class ServicePort:
    """A Service port; ServiceMonitor endpoints refer to it by ``name``."""

    port: int | None
    name: str | None = None
    target_port: int | str | None = None
    protocol: str = "TCP"


@dataclass(frozen=True)
class Service:
    """A Service: which pods it selects and which ports it names."""

    name: str
    namespace: str | None
    labels: Mapping[str, str]
    selector: Mapping[str, str] | None
    """``spec.selector``; ``None`` when absent (a Service without a selector selects no pods)."""
    ports: tuple[ServicePort, ...]
    type: str
    source: Location
    manifest: Manifest = field(repr=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> Service:
        """Read a ``v1/Service``."""
        read = _Reader(manifest)
        raw_selector = read.raw(("spec", "selector"))
        ports = []
        for i in range(len(read.items(("spec", "ports")))):
            base: KeyPath = ("spec", "ports", i)
            ports.append(
                ServicePort(
                    port=read.integer((*base, "port"), None),
                    name=read.text((*base, "name")),
                    target_port=read.port((*base, "targetPort")),
                    protocol=read.text((*base, "protocol"), "TCP") or "TCP",
                )
            )
        return cls(
            name=manifest.name,
            namespace=manifest.namespace,
            labels=read.labels(("metadata", "labels")),
            selector=None if raw_selector is None else read.labels(("spec", "selector")),
            ports=tuple(ports),
            type=read.text(("spec", "type"), "ClusterIP") or "ClusterIP",
            source=manifest.source,
            manifest=manifest,
        )

    def selects(self, pod_labels: Mapping[str, str]) -> bool:
        """Whether the Service's endpoints include a pod with ``pod_labels``."""
        if not self.selector:
            return False
        return LabelSelector.from_map(self.selector).matches(pod_labels)

    def port_named(self, name: str) -> ServicePort | None:
        """The port called ``name``, if any."""
        return next((port for port in self.ports if port.name == name), None)


@dataclass(frozen=True)
class NamespaceSelector:
    """A ServiceMonitor's ``spec.namespaceSelector``: where its target Services may be."""

    any: bool = False
    match_names: tuple[str, ...] = ()

    def covers(self, namespace: str, own_namespace: str) -> bool:
        """Whether a Service in ``namespace`` is a candidate for a ServiceMonitor living in
        ``own_namespace``; an empty selector means the ServiceMonitor's own namespace
        (crd-servicemonitors.yaml, ``namespaceSelector``)."""
        if self.any:
            return True
        if self.match_names:
            return namespace in self.match_names
        return namespace == own_namespace


@dataclass(frozen=True)
class Endpoint:
    """One scrape endpoint of a ServiceMonitor."""

    port: str | None
    """Name of the Service port to scrape."""
    target_port: int | str | None = None
    path: str = "/metrics"
    interval: float | None = None
    """Seconds; ``None`` when unset (the Prometheus' scrape interval applies)."""
    honor_labels: bool = False
    scheme: str = "http"


@dataclass(frozen=True)
class ServiceMonitor:
    """A prometheus-operator ServiceMonitor."""

    name: str
    namespace: str | None
    labels: Mapping[str, str]
    """What the Prometheus' ``serviceMonitorSelector`` (``release: <release>``) must match."""
    selector: LabelSelector
    namespace_selector: NamespaceSelector
    endpoints: tuple[Endpoint, ...]
    source: Location
    manifest: Manifest = field(repr=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> ServiceMonitor:
        """Read a ``monitoring.coreos.com/v1`` ServiceMonitor."""
        read = _Reader(manifest)
        ns_path: KeyPath = ("spec", "namespaceSelector")
        names = read.items((*ns_path, "matchNames"))
        endpoints = []
        for i in range(len(read.items(("spec", "endpoints")))):
            base: KeyPath = ("spec", "endpoints", i)
            endpoints.append(
                Endpoint(
                    port=read.text((*base, "port")),
                    target_port=read.port((*base, "targetPort")),
                    path=read.text((*base, "path"), "/metrics") or "/metrics",
                    interval=read.duration((*base, "interval")),
                    honor_labels=read.boolean((*base, "honorLabels"), False),
                    scheme=read.text((*base, "scheme"), "http") or "http",
                )
            )
        return cls(
            name=manifest.name,
            namespace=manifest.namespace,
            labels=read.labels(("metadata", "labels")),
            selector=read.selector(("spec", "selector")),
            namespace_selector=NamespaceSelector(
                any=read.boolean((*ns_path, "any"), False),
                match_names=tuple(str(name) for name in names),
            ),
            endpoints=tuple(endpoints),
            source=manifest.source,
            manifest=manifest,
        )


def _containers(read: _Reader, path: KeyPath) -> tuple[Container, ...]:
    result = []
    for i, raw in enumerate(read.items(path)):
        base: KeyPath = (*path, i)
        if not isinstance(raw, dict):
            raise read.fail(base, "a container (a mapping)", raw)
        ports = tuple(
            ContainerPort(
                container_port=read.integer((*base, "ports", j, "containerPort"), None),
                name=read.text((*base, "ports", j, "name")),
                protocol=read.text((*base, "ports", j, "protocol"), "TCP") or "TCP",
            )
            for j in range(len(read.items((*base, "ports"))))
        )
        result.append(
            Container(
                name=read.text((*base, "name"), "") or "",
                image=read.text((*base, "image")),
                command=tuple(str(part) for part in read.items((*base, "command"))),
                args=tuple(str(part) for part in read.items((*base, "args"))),
                requests=read.quantities((*base, "resources", "requests")),
                limits=read.quantities((*base, "resources", "limits")),
                ports=ports,
                readiness_probe=_probe(read, (*base, "readinessProbe")),
                location=read.manifest.line_of(base),
            )
        )
    return tuple(result)


def _probe(read: _Reader, path: KeyPath) -> Probe | None:
    probe = read.mapping(path)
    if not probe:
        return None
    handler = next((h for h in ("httpGet", "tcpSocket", "grpc", "exec") if h in probe), "none")
    return Probe(
        handler=handler,
        path=read.text((*path, handler, "path")) if handler == "httpGet" else None,
        port=read.port((*path, handler, "port")),
        initial_delay_seconds=read.integer((*path, "initialDelaySeconds"), 0) or 0,
        period_seconds=read.integer((*path, "periodSeconds"), 10) or 10,
        timeout_seconds=read.integer((*path, "timeoutSeconds"), 1) or 1,
        success_threshold=read.integer((*path, "successThreshold"), 1) or 1,
        failure_threshold=read.integer((*path, "failureThreshold"), 3) or 3,
    )


def _toleration(read: _Reader, path: KeyPath) -> Toleration:
    if not isinstance(read.raw(path), dict):
        raise read.fail(path, "a toleration (a mapping)", read.raw(path))
    return Toleration(
        key=read.text((*path, "key"), "") or "",
        operator=read.text((*path, "operator"), "Equal") or "Equal",
        value=read.text((*path, "value"), "") or "",
        effect=read.text((*path, "effect"), "") or "",
        toleration_seconds=read.integer((*path, "tolerationSeconds"), None),
    )
