"""What verify read and what it found: the :class:`Facts` the reader fills, the
:class:`Ref` each read is named by, the :class:`Check` each link returns, and the small
readers of API documents the checks share."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuscale._redact import redact
from gpuscale.controllers.keda import (
    hpa_name,
)
from gpuscale.kube import Taint
from gpuscale.manifests import (
    Location,
    Manifest,
)

Status = Literal["pass", "fail", "warn", "skip", "error"]

KEDA_CRDS = (
    "scaledobjects.keda.sh",
    "triggerauthentications.keda.sh",
    "clustertriggerauthentications.keda.sh",
)
"""The CRDs a ScaledObject with authentication needs."""

METRICS_APISERVICE = "v1beta1.external.metrics.k8s.io"

_INSTALL = "run gpuscale install (KEDA and kube-prometheus-stack; idempotent)"


@dataclass(frozen=True, slots=True)
class Check:
    """One link of the chain and what was found.

    Every piece of evidence verify shows is created through this constructor (the checks
    build nothing else that is printed), so it is the one place to filter evidence text.
    """

    name: str
    """The link: ``KEDA CRDs``, ``trigger query``, ``GPU capacity``..."""
    subject: str
    """What it is about: ``scaledobject/gpu-demo/app``; empty for the cluster's own parts."""
    status: Status
    evidence: str
    """What was read; the servers' words in it are masked (:func:`gpuscale._redact.redact`)
    as the check is made, so the table and ``-o json`` show the same safe text."""
    fix: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", redact(self.evidence))
        object.__setattr__(self, "fix", redact(self.fix))

    def as_dict(self) -> dict[str, str]:
        return {
            "check": self.name,
            "subject": self.subject,
            "status": self.status,
            "evidence": self.evidence,
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    """One answer from Prometheus' HTTP API, kept raw so KEDA's parser reads it as KEDA does."""

    status: int | None
    """HTTP status; None when no answer came."""
    body: str = ""
    error: str = ""
    """Why no answer came (connection refused, a failed port-forward)."""

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class PromFacts:
    """What one Prometheus answered."""

    source: str
    """How it was reached: a URL, or ``service/<ns>/<name>:<port> via port-forward``."""
    buildinfo: HttpAnswer
    """``GET /api/v1/status/buildinfo``."""
    queries: Mapping[str, HttpAnswer] = field(default_factory=dict)
    """Instant query answers by query text."""
    targets: HttpAnswer | None = None
    """``GET /api/v1/targets?state=active``."""
    unread: str = ""
    """The Kubernetes read that failed before Prometheus could be asked (the Service or
    its endpoints: a permission, a 5xx, no answer), if one did; a missing Service is not
    one (that is a wrong ``serverAddress``, judged)."""


@dataclass(frozen=True, slots=True)
class PoolCapacity:
    """A node pool, for the GPU capacity check."""

    name: str
    gpu_resource: str | None
    """``amd.com/gpu``, ``nvidia.com/gpu``, or None for a CPU pool."""
    gpus_per_node: int
    labels: Mapping[str, str]
    """The labels its nodes get (the provider's included)."""
    taints: tuple[Taint, ...]
    nodes: int
    """Nodes it has now (any state)."""
    max_nodes: int
    """The most it may have (its ``max_nodes``, or ``count`` for a fixed pool)."""
    autoscaled: bool


_OBJECT_PATHS = {
    "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
    "APIService": "/apis/apiregistration.k8s.io/v1/apiservices/{name}",
    "Namespace": "/api/v1/namespaces/{name}",
    "Deployment": "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
    "ScaledObject": "/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects/{name}",
    "HorizontalPodAutoscaler": (
        "/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}"
    ),
    "ServiceMonitor": (
        "/apis/monitoring.coreos.com/v1/namespaces/{namespace}/servicemonitors/{name}"
    ),
}
_LIST_PATHS = {
    "nodes": "/api/v1/nodes",
    "prometheuses": "/apis/monitoring.coreos.com/v1/prometheuses",
    "pods": "/api/v1/namespaces/{namespace}/pods",
    "events": "/api/v1/namespaces/{namespace}/events",
}


@dataclass(frozen=True, slots=True)
class Ref:
    """One read verify makes: the key :class:`Facts` keeps its answer (or its error) under,
    the API path it is read from, and how. The links
    (:data:`gpuscale.live._verify.links.LINKS`) declare their reads as these and look the
    answers up by them; the reader (:mod:`gpuscale.live.verifier`) performs them."""

    key: str
    path: str
    many: bool = False
    """A list (its ``items`` are kept), not one object."""
    query: tuple[tuple[str, str], ...] = ()
    """Query parameters of the read (a pod list's ``labelSelector``)."""
    missing_ok: bool = True
    """A 404 is an answer (an absent object, a list the server does not serve) rather than
    a failed read."""

    @classmethod
    def object(cls, kind: str, namespace: str | None, name: str) -> Ref:
        """An object: key ``Kind/namespace/name`` (``Kind//name`` when cluster-scoped)."""
        ns = namespace or ""
        return cls(f"{kind}/{ns}/{name}", _OBJECT_PATHS[kind].format(namespace=ns, name=name))

    @classmethod
    def list(
        cls,
        what: str,
        namespace: str = "",
        owner: str = "",
        *,
        query: Mapping[str, str] | None = None,
    ) -> Ref:
        """A list: ``nodes``, ``prometheuses``, ``pods/<ns>/<deployment>``, ``events/<ns>``.
        Only ``prometheuses`` may be absent (no prometheus-operator)."""
        key = "/".join(part for part in (what, namespace, owner) if part)
        return cls(
            key,
            _LIST_PATHS[what].format(namespace=namespace),
            many=True,
            query=tuple((query or {}).items()),
            missing_ok=what == "prometheuses",
        )


def keda_deployments(apiservice: Mapping[str, Any] | None) -> tuple[str, str, str | None]:
    """KEDA's operator and metrics-server Deployment names, and their namespace when the
    APIService says it: the APIService points at ``<operator>-metrics-apiserver`` in the
    release namespace (``kedacore/charts keda/templates/metrics-server/apiservice.yaml``)."""
    backend = ((apiservice or {}).get("spec") or {}).get("service") or {}
    server = str(backend.get("name") or "keda-operator-metrics-apiserver")
    operator = server.removesuffix("-metrics-apiserver") or "keda-operator"
    namespace = backend.get("namespace")
    return operator, server, str(namespace) if namespace else None


def hpa_of(manifest: Manifest, live: Mapping[str, Any] | None) -> str:
    """The HPA a ScaledObject owns: the name its status reports, else KEDA's ``getHPAName``."""
    reported = str(((live or {}).get("status") or {}).get("hpaName") or "")
    return reported or hpa_name(manifest.spec, manifest.name)


@dataclass(frozen=True)
class Facts:
    """Everything verify read, as the API and Prometheus returned it.

    Keys are :class:`Ref` keys: ``objects`` is keyed ``Kind/namespace/name``
    (``Kind//name`` for cluster-scoped objects; None for an object that does not exist);
    ``lists`` holds the lists (``nodes``, ``prometheuses``, ``pods/<ns>/<deployment>``,
    ``events/<ns>``; a list the server does not serve, such as Prometheus objects without
    prometheus-operator, is absent); ``errors`` holds, by the same keys, the reads that
    failed.
    """

    context_namespace: str = "default"
    keda_namespace: str = "keda"
    objects: Mapping[str, Mapping[str, Any] | None] = field(default_factory=dict)
    lists: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    prometheus: Mapping[str, PromFacts] = field(default_factory=dict)
    """By the trigger's ``serverAddress`` (or the ``--prometheus`` URL)."""
    pools: tuple[PoolCapacity, ...] | None = None
    pools_source: str = ""
    """Where the pools came from (``DigitalOcean``, ``the profile``), or why none are known."""

    def read(self, ref: Ref) -> Mapping[str, Any] | None:
        """The object ``ref`` read (None: absent, or its read failed)."""
        return self.objects.get(ref.key)

    def items(self, ref: Ref) -> Sequence[Mapping[str, Any]]:
        """The list ``ref`` read (empty when absent or unread)."""
        return self.lists.get(ref.key) or ()


# --- small readers --------------------------------------------------------------------


def _conditions(doc: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    return {
        str(c.get("type")): c
        for c in ((doc or {}).get("status") or {}).get("conditions") or []
        if isinstance(c, Mapping)
    }


def _said(condition: Mapping[str, Any]) -> str:
    reason = str(condition.get("reason") or "")
    message = " ".join(str(condition.get("message") or "").split())
    return ": ".join(part for part in (reason, message) if part)


def _labels(doc: Mapping[str, Any] | None) -> dict[str, str]:
    return {
        str(k): str(v) for k, v in (((doc or {}).get("metadata") or {}).get("labels") or {}).items()
    }


def _meta(doc: Mapping[str, Any], key: str) -> str:
    return str((doc.get("metadata") or {}).get(key) or "")


def _show_labels(labels: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    pairs = labels.items() if isinstance(labels, Mapping) else labels
    return ",".join(f"{k}={v}" for k, v in pairs) or "(none)"


def _number(value: float) -> str:
    return f"{value:g}"


def _as_manifest(doc: Mapping[str, Any], source: str) -> Manifest:
    meta = doc.get("metadata") or {}
    return Manifest(
        kind=str(doc.get("kind") or ""),
        api_version=str(doc.get("apiVersion") or ""),
        name=str(meta.get("name") or ""),
        namespace=meta.get("namespace"),
        body=dict(doc),
        source=Location(source, 1),
        positions={},
        comments={},
    )


def _read_failed(name: str, subject: str, error: str) -> Check:
    return Check(
        name,
        subject,
        "error",
        f"could not read: {error}",
        "see the error; use a context that may read it",
    )


def _unread(facts: Facts, *refs: Ref) -> str | None:
    """The error of the first of ``refs`` whose read failed: a check that needs it cannot
    judge (a failed read is not an absent object)."""
    return next((facts.errors[ref.key] for ref in refs if ref.key in facts.errors), None)
