"""What ``gpuscale verify`` concludes about each link of the scaling chain: pure checks.

The chain, in the order a signal travels it::

    workload /metrics ─► ServiceMonitor ─► Prometheus ─► trigger query ─► KEDA
        ─► external metrics API ─► HPA ─► Deployment replicas ─► scheduler
        ─► cluster autoscaler ─► GPU node

:mod:`gpuscale.live.verifier` fetches the documents (API objects, Prometheus answers,
DigitalOcean node pools) into a :class:`Facts`, each read named by a :class:`Ref` that
both halves build the same way; every function here is a pure function
of those documents and returns a :class:`Check`: the link, ``pass``/``fail``/``warn``/
``skip``, the evidence read, and the fix. :func:`verify_checks` runs them all for a
manifest set. Sources of the rules:

- KEDA: the chart's names (``kedacore/charts keda/templates/metrics-server/apiservice.yaml``:
  the ``v1beta1.external.metrics.k8s.io`` APIService points at
  ``<operator name>-metrics-apiserver`` in the release namespace), the ScaledObject's
  ``Ready``/``Active`` conditions (``apis/keda/v1alpha1/condition_types.go``) and the HPA
  name (``controllers/keda/hpa.go`` getHPAName, via
  :func:`gpuscale.controllers.keda.hpa_name`).
- The trigger query's verdict is KEDA's own: the answer is read with
  :func:`gpuscale.controllers.keda.parse_prometheus_response` (``prometheus_scaler.go``
  ExecutePromQuery), once as the trigger is configured (what KEDA hands the HPA) and once
  with ``ignoreNullValues: false`` (whether the answer is really one finite series).
- prometheus-operator: a ServiceMonitor is selected by a Prometheus whose
  ``serviceMonitorSelector`` matches its labels (null selects nothing, ``{}`` everything)
  and whose ``serviceMonitorNamespaceSelector`` matches its namespace's labels (null: the
  Prometheus' own namespace only; ``{}``: all) (``monitoring/v1`` ``PrometheusSpec``);
  its targets are the scrape pool ``serviceMonitor/<namespace>/<name>/<endpoint index>``
  (``pkg/prometheus/promcfg.go``), read from Prometheus' ``/api/v1/targets``.
- GPU capacity: the pod fits a node when the node is Ready and schedulable, the
  scheduler model's node-only filters pass
  (:func:`gpuscale.controllers.scheduler.static_failure`: the pod tolerates its
  ``NoSchedule``/``NoExecute`` taints, its labels satisfy the nodeSelector and required
  node affinity; the first that fails is the one reported), and it has the GPUs
  allocatable. Allocatable, not
  free: GPUs other pods hold are not subtracted (say so; verify lists no pods cluster-wide).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from gpuscale._redact import redact
from gpuscale.controllers import scheduler
from gpuscale.controllers.keda import (
    PrometheusQueryError,
    PrometheusTrigger,
    ScaledObjectError,
    TriggerError,
    hpa_name,
    parse_prometheus_response,
    parse_prometheus_trigger,
)
from gpuscale.controllers.scheduler import NodeView, PodRequirements
from gpuscale.kube import LabelSelector, Taint, quantity_or_none
from gpuscale.live.apply import CLUSTER_SCOPED_KINDS, target_namespace
from gpuscale.live.events import EventView, event_views
from gpuscale.manifests import (
    Location,
    Manifest,
    ManifestSet,
    ServiceMonitor,
    Workload,
)
from gpuscale.profile import DOKS_LABEL_DOMAIN, CatalogueEntry, NodePool, Profile

__all__ = [
    "KEDA_CRDS",
    "METRICS_APISERVICE",
    "Check",
    "Facts",
    "HttpAnswer",
    "PoolCapacity",
    "PromFacts",
    "Ref",
    "Status",
    "check_deployment_ready",
    "check_external_metrics_api",
    "check_gpu_capacity",
    "check_hpa",
    "check_keda_crds",
    "check_kube_state_metrics",
    "check_pending_pods",
    "check_prometheus",
    "check_query",
    "check_scaled_object_active",
    "check_scaled_object_ready",
    "check_service_monitor_selected",
    "check_service_monitor_targets",
    "doks_pool",
    "hpa_of",
    "keda_deployments",
    "ksm_query",
    "pool_capacity",
    "prometheus_trigger_of",
    "query_params",
    "summary",
    "verify_checks",
    "verify_targets",
]

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
    and the API path it is read from. The reader (:mod:`gpuscale.live.verifier`) and the
    checks (:func:`verify_checks`) both name reads by these, never by hand-built keys."""

    key: str
    path: str

    @classmethod
    def object(cls, kind: str, namespace: str | None, name: str) -> Ref:
        """An object: key ``Kind/namespace/name`` (``Kind//name`` when cluster-scoped)."""
        ns = namespace or ""
        return cls(f"{kind}/{ns}/{name}", _OBJECT_PATHS[kind].format(namespace=ns, name=name))

    @classmethod
    def list(cls, what: str, namespace: str = "", owner: str = "") -> Ref:
        """A list: ``nodes``, ``prometheuses``, ``pods/<ns>/<deployment>``, ``events/<ns>``."""
        key = "/".join(part for part in (what, namespace, owner) if part)
        return cls(key, _LIST_PATHS[what].format(namespace=namespace))


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


# --- KEDA -------------------------------------------------------------------------------


def check_keda_crds(crds: Mapping[str, Mapping[str, Any] | None]) -> Check:
    """KEDA's CRDs exist and are ``Established``."""
    missing = [name for name in KEDA_CRDS if crds.get(name) is None]
    if missing:
        return Check(
            "KEDA CRDs",
            "",
            "fail",
            f"missing: {', '.join(missing)}",
            _INSTALL,
        )
    pending = [
        name
        for name in KEDA_CRDS
        if _conditions(crds[name]).get("Established", {}).get("status") != "True"
    ]
    if pending:
        return Check(
            "KEDA CRDs",
            "",
            "fail",
            f"not Established: {', '.join(pending)}",
            "wait a moment; if it stays, read the CRD's status conditions",
        )
    return Check("KEDA CRDs", "", "pass", f"{', '.join(KEDA_CRDS)} Established")


def check_deployment_ready(
    role: str, namespace: str, name: str, doc: Mapping[str, Any] | None
) -> Check:
    """A Deployment of the stack has every desired replica ready and is ``Available``."""
    subject = f"deployment/{namespace}/{name}"
    if doc is None:
        return Check(role, subject, "fail", "not found", _INSTALL)
    want = int((doc.get("spec") or {}).get("replicas", 1) or 0)
    status = doc.get("status") or {}
    ready = int(status.get("readyReplicas") or 0)
    available = _conditions(doc).get("Available", {})
    evidence = f"{ready}/{want} ready"
    if available:
        evidence += f", Available {available.get('status')}"
        if available.get("status") != "True":
            evidence += f" ({_said(available)})"
    if want >= 1 and ready >= want and available.get("status", "True") == "True":
        return Check(role, subject, "pass", evidence)
    return Check(
        role,
        subject,
        "fail",
        evidence,
        f"look at its pods: kubectl -n {namespace} get pods, then describe the one not "
        "ready (image pull, crash loop, no node)",
    )


def check_external_metrics_api(apiservice: Mapping[str, Any] | None) -> Check:
    """The ``v1beta1.external.metrics.k8s.io`` APIService exists, points at KEDA's metrics
    server and is ``Available``."""
    subject = f"apiservice/{METRICS_APISERVICE}"
    if apiservice is None:
        return Check(
            "external metrics API",
            subject,
            "fail",
            "not registered: nothing serves external metrics, so the HPA cannot read KEDA's",
            _INSTALL,
        )
    service = (apiservice.get("spec") or {}).get("service") or {}
    backend = f"service/{service.get('namespace')}/{service.get('name')}"
    available = _conditions(apiservice).get("Available")
    if available is None or available.get("status") != "True":
        said = _said(available) if available else "no Available condition"
        return Check(
            "external metrics API",
            subject,
            "fail",
            f"served by {backend}, not Available ({said})",
            "the API server cannot reach KEDA's metrics server: check its pods and Service "
            f"in {service.get('namespace')} (and NetworkPolicies or firewalls between the "
            "control plane and the nodes)",
        )
    if not str(service.get("name") or "").endswith("-metrics-apiserver"):
        return Check(
            "external metrics API",
            subject,
            "warn",
            f"Available, but served by {backend}, not KEDA's metrics server",
            "only one server may serve external.metrics.k8s.io; remove the other "
            "(e.g. prometheus-adapter's external metrics) so KEDA's answers reach the HPA",
        )
    return Check("external metrics API", subject, "pass", f"Available, served by {backend}")


def check_scaled_object_ready(subject: str, so: Mapping[str, Any] | None) -> Check:
    """The live ScaledObject's ``Ready`` condition."""
    if so is None:
        return Check(
            "ScaledObject Ready",
            subject,
            "fail",
            "not found in the cluster",
            "apply the manifests: gpuscale deploy",
        )
    ready = _conditions(so).get("Ready")
    if ready is None:
        return Check(
            "ScaledObject Ready",
            subject,
            "fail",
            "no Ready condition: KEDA has not reconciled it",
            "check that the KEDA operator runs (above) and read its logs",
        )
    if ready.get("status") == "True":
        return Check("ScaledObject Ready", subject, "pass", _said(ready) or "Ready True")
    return Check(
        "ScaledObject Ready",
        subject,
        "fail",
        f"Ready {ready.get('status')}: {_said(ready)}",
        "fix what the message names (scaleTargetRef, trigger metadata, authentication); "
        "KEDA's events on the ScaledObject have the detail",
    )


def check_scaled_object_active(
    subject: str, so: Mapping[str, Any] | None, min_replicas: int | None
) -> Check:
    """The live ScaledObject's ``Active`` condition: whether KEDA sees a trigger above its
    activation threshold. Not active is expected at low load; it matters most when
    ``minReplicaCount`` is 0 (KEDA then keeps the target at zero)."""
    if so is None:
        return Check("ScaledObject Active", subject, "skip", "the ScaledObject is not there")
    active = _conditions(so).get("Active")
    if active is None:
        return Check("ScaledObject Active", subject, "warn", "no Active condition yet")
    if active.get("status") == "True":
        return Check("ScaledObject Active", subject, "pass", _said(active) or "Active True")
    floor = (
        "KEDA holds the target at 0 replicas until a trigger is above its activationThreshold"
        if (min_replicas or 0) == 0
        else f"the HPA still scales between minReplicaCount ({min_replicas}) and the maximum"
    )
    return Check(
        "ScaledObject Active",
        subject,
        "warn",
        f"Active {active.get('status')}: {_said(active)}; {floor}",
        "expected while the metric is at or below activationThreshold; if load is there, "
        "check the trigger query below",
    )


def _metric_name(entry: Mapping[str, Any]) -> str:
    body = entry.get("external") or {}
    return str((body.get("metric") or {}).get("name") or "")


def check_hpa(namespace: str, name: str, hpa: Mapping[str, Any] | None) -> Check:
    """The HPA KEDA made for the ScaledObject (``name``) exists, has its external metric,
    and reads a value (``status.currentMetrics``); ``ScalingActive`` False carries the
    HPA's reason."""
    ref = f"hpa/{namespace}/{name}"
    if hpa is None:
        return Check(
            "HPA",
            ref,
            "fail",
            f"KEDA has not created {name}",
            "the ScaledObject is not Ready (above), or the KEDA operator is not running",
        )
    metrics = [
        m for m in (hpa.get("spec") or {}).get("metrics") or [] if m.get("type") == "External"
    ]
    if not metrics:
        return Check(
            "HPA",
            ref,
            "fail",
            "no External metric: it does not scale on the trigger",
            "let KEDA own the HPA (do not apply an HPA of your own for the same Deployment)",
        )
    status = hpa.get("status") or {}
    conditions = _conditions(hpa)
    current = {
        _metric_name(m): (m.get("external") or {}).get("current") or {}
        for m in status.get("currentMetrics") or []
        if m.get("type") == "External"
    }
    parts = []
    for metric in metrics:
        metric_name = _metric_name(metric)
        target = (metric.get("external") or {}).get("target") or {}
        goal = target.get("averageValue") or target.get("value")
        now = current.get(metric_name) or {}
        value = quantity_or_none(now.get("averageValue") or now.get("value"))
        shown = "no value" if value is None else _number(value)
        parts.append(f"{metric_name} = {shown} (target {target.get('type')} {goal})")
    replicas = f"current {status.get('currentReplicas')}, desired {status.get('desiredReplicas')}"
    evidence = f"{name}: {'; '.join(parts)}; {replicas}"
    scaling = conditions.get("ScalingActive")
    if scaling is not None and scaling.get("status") == "False":
        return Check(
            "HPA",
            ref,
            "fail",
            f"{evidence}; ScalingActive False: {_said(scaling)}",
            "the HPA cannot read the metric from KEDA: check the external metrics API and "
            "the trigger query (above and below)",
        )
    if any(not current.get(_metric_name(m)) for m in metrics):
        return Check(
            "HPA",
            ref,
            "warn",
            evidence,
            "no value read yet: wait one HPA sync (15 s); if it stays, check the external "
            "metrics API",
        )
    return Check("HPA", ref, "pass", evidence)


# --- Prometheus ---------------------------------------------------------------------------


def check_prometheus(subject: str, facts: PromFacts | None, address: str) -> Check:
    """Prometheus answers at the trigger's address (through a port-forward for an
    in-cluster Service) or at ``--prometheus``."""
    if facts is None:
        return Check(
            "Prometheus",
            subject,
            "skip",
            f"{address} is not an in-cluster Service address gpuscale can forward to",
            "pass --prometheus URL to check it from here",
        )
    if facts.unread:
        return _read_failed("Prometheus", subject, facts.unread)
    answer = facts.buildinfo
    if answer.status is None:
        return Check(
            "Prometheus",
            subject,
            "fail",
            f"no answer from {facts.source}: {answer.error}",
            "check the trigger's serverAddress (http://<service>.<namespace>.svc.cluster.local"
            ":9090) against where kube-prometheus-stack runs (gpuscale install prints it)",
        )
    if answer.status != 200:
        return Check(
            "Prometheus",
            subject,
            "fail",
            f"{facts.source} answered HTTP {answer.status}",
            "is it Prometheus? the address must be its HTTP API (port 9090)",
        )
    version = ((answer.json() or {}).get("data") or {}).get("version") or "unknown version"
    return Check("Prometheus", subject, "pass", f"{facts.source}: Prometheus {version}")


def query_params(trigger: PrometheusTrigger) -> dict[str, str]:
    """The query parameters KEDA sends (ExecutePromQuery: ``query``, ``namespace`` when
    set, then ``queryParameters``); the ``time`` parameter is left to Prometheus (now)."""
    params = {"query": trigger.query}
    if trigger.namespace:
        params["namespace"] = trigger.namespace
    params.update(trigger.query_parameters)
    return params


def _series(answer: HttpAnswer) -> int | None:
    doc = answer.json()
    if not isinstance(doc, Mapping):
        return None
    result = (doc.get("data") or {}).get("result")
    return len(result) if isinstance(result, list) else None


def check_query(subject: str, trigger: PrometheusTrigger, answer: HttpAnswer | None) -> Check:
    """The trigger's query returns exactly one series with a finite value, read by KEDA's
    own parser; the evidence says what KEDA hands the HPA."""
    if answer is None:
        return Check("trigger query", subject, "skip", "Prometheus was not reached")
    if answer.status is None:
        return Check(
            "trigger query", subject, "fail", f"no answer: {answer.error}", "see Prometheus above"
        )
    null_mode = "true" if trigger.ignore_null_values else "false"
    try:
        read = parse_prometheus_response(
            answer.body,
            answer.status,
            ignore_null_values=trigger.ignore_null_values,
            query=trigger.query,
        )
        keda = f"KEDA reads {_number(read)}"
    except PrometheusQueryError as exc:
        keda = f"KEDA fails: {exc}"
    series = _series(answer)
    try:
        value = parse_prometheus_response(
            answer.body, answer.status, ignore_null_values=False, query=trigger.query
        )
    except PrometheusQueryError as exc:
        if series == 0:
            return Check(
                "trigger query",
                subject,
                "fail",
                f"no series (ignoreNullValues: {null_mode}): {keda}",
                "nothing matches the query: check that the metric is scraped (ServiceMonitor "
                'checks) and its labels, in Prometheus\' UI; set ignoreNullValues: "false" so '
                "KEDA reports an empty answer instead of reading 0",
            )
        if series is not None and series > 1:
            return Check(
                "trigger query",
                subject,
                "fail",
                f"{series} series: {keda}",
                "aggregate to one series, e.g. sum(...), and scope it by namespace and service",
            )
        return Check(
            "trigger query",
            subject,
            "fail",
            f"{exc} (ignoreNullValues: {null_mode}): {keda}",
            "make the query return one finite number (no division by zero)",
        )
    if not math.isfinite(value):  # pragma: no cover - parse_prometheus_response refuses these
        return Check("trigger query", subject, "fail", f"value {value}", "")
    return Check(
        "trigger query",
        subject,
        "pass",
        f"1 series, value {_number(value)}; {keda} (threshold {_number(trigger.threshold)})",
    )


def check_kube_state_metrics(
    subject: str, answer: HttpAnswer | None, *, query: str, needed: bool
) -> Check:
    """kube-state-metrics reports the Deployment (``kube_deployment_status_replicas``); a
    failure when the trigger query uses kube-state-metrics series, else a warning."""
    if answer is None:
        return Check("kube-state-metrics", subject, "skip", "Prometheus was not reached")
    series = _series(answer) if answer.status == 200 else None
    if series:
        doc = answer.json() or {}
        value = doc["data"]["result"][0].get("value", [None, "?"])[1]
        return Check("kube-state-metrics", subject, "pass", f"{query} = {value}")
    why = answer.error or (f"HTTP {answer.status}" if answer.status != 200 else "no series")
    return Check(
        "kube-state-metrics",
        subject,
        "fail" if needed else "warn",
        f"{query}: {why}"
        + ("; the trigger query reads it" if needed else "; the trigger query does not use it"),
        "kube-prometheus-stack installs kube-state-metrics and its ServiceMonitor; check that "
        "its pod runs and its target is up",
    )


def ksm_query(namespace: str, deployment: str) -> str:
    """The kube-state-metrics series of a Deployment's replica count."""
    return f'kube_deployment_status_replicas{{deployment="{deployment}", namespace="{namespace}"}}'


# --- ServiceMonitors ---------------------------------------------------------------------------


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


# --- GPU capacity and pending pods ----------------------------------------------------------


def _node_ready(node: Mapping[str, Any]) -> bool:
    return _conditions(node).get("Ready", {}).get("status") == "True" and not (
        node.get("spec") or {}
    ).get("unschedulable")


def _taints(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    return tuple(
        Taint(
            key=str(t.get("key") or ""),
            effect=str(t.get("effect") or ""),
            value=str(t.get("value") or ""),
        )
        for t in (node.get("spec") or {}).get("taints") or []
    )


def _fits(workload: Workload, labels: Mapping[str, str], taints: Sequence[Taint]) -> str | None:
    """Why a pod of ``workload`` cannot go on a node with ``labels`` and ``taints``, or None:
    the scheduler model's node-only filters (:func:`scheduler.static_failure`), in words.

    Cordons and resources are checked by the caller (a cordoned node is not Ready here;
    GPUs are compared as allocatable).
    """
    pod = PodRequirements(
        node_selector=workload.node_selector,
        required_terms=workload.required_node_affinity or None,
        tolerations=workload.tolerations,
    )
    failure = scheduler.static_failure(pod, NodeView("node", labels, taints, {}))
    if failure is None:
        return None
    if failure.taint is not None:
        return f"taint {failure.taint} is not tolerated"
    if failure.node_selector is not None:
        key, value = failure.node_selector
        return f"nodeSelector {key}={value} does not match"
    return "required node affinity does not match"


def check_gpu_capacity(
    subject: str,
    deployment: Mapping[str, Any],
    nodes: Sequence[Mapping[str, Any]],
    pools: Sequence[PoolCapacity] | None,
    pools_source: str,
) -> Check:
    """Some Ready node can take a pod of the Deployment (GPUs allocatable, selectors and
    taints), or a node pool can grow to one that can."""
    workload = Workload.from_manifest(_as_manifest(deployment, subject))
    gpus = workload.gpus_per_pod
    if not gpus:
        return Check("GPU capacity", subject, "skip", "the pods request no GPU")
    resource, need = next(iter(sorted(gpus.items())))
    want = f"{_number(need)} {resource}"
    reasons: list[str] = []
    for node in nodes:
        name = _meta(node, "name")
        have = (
            quantity_or_none(((node.get("status") or {}).get("allocatable") or {}).get(resource))
            or 0
        )
        if have < need:
            continue
        if not _node_ready(node):
            reasons.append(f"node {name} is not Ready")
            continue
        why = _fits(workload, _labels(node), _taints(node))
        if why is not None:
            reasons.append(f"node {name}: {why}")
            continue
        return Check(
            "GPU capacity",
            subject,
            "pass",
            f"node {name} has {_number(have)} {resource} allocatable (pods already using it "
            f"not counted); a pod needs {want}",
        )
    now = "; ".join(reasons) if reasons else f"no Ready node has {want} allocatable"
    if pools is None:
        return Check(
            "GPU capacity",
            subject,
            "warn",
            f"{now}; node pools unknown ({pools_source})",
            "give the profile's node pools (--profile), and a DigitalOcean token for DOKS, to "
            "check whether a pool can grow to one",
        )
    for pool in pools:
        if pool.gpu_resource != resource or pool.gpus_per_node < need:
            continue
        why = _fits(workload, pool.labels, pool.taints)
        if why is not None:
            reasons.append(f"pool {pool.name}: {why}")
            continue
        if pool.autoscaled and pool.nodes < pool.max_nodes:
            verified = pools_source == "DigitalOcean"
            return Check(
                "GPU capacity",
                subject,
                "pass" if verified else "warn",
                f"{now}; pool {pool.name} can grow {pool.nodes} -> {pool.max_nodes} nodes of "
                f"{pool.gpus_per_node} {resource} ({pools_source})",
                ""
                if verified
                else "per the profile only: check the pool on the provider (a DigitalOcean "
                "token lets verify ask DOKS)",
            )
        reasons.append(f"pool {pool.name} is at its maximum ({pool.max_nodes} nodes)")
    return Check(
        "GPU capacity",
        subject,
        "fail",
        f"{'; '.join(reasons) if reasons else now}; no pool offers {want} ({pools_source})",
        "add or grow a GPU pool of the right vendor (raise max_nodes), or correct the pod's "
        "nodeSelector/tolerations to the labels and taints the GPU nodes carry",
    )


def check_pending_pods(
    subject: str, pods: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
) -> Check:
    """Pods of the Deployment not bound to a node, with what the scheduler
    (``FailedScheduling``) and the cluster autoscaler (``NotTriggerScaleUp``,
    ``TriggeredScaleUp``) said about each."""
    pending = [
        p
        for p in pods
        if not (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase", "Pending") == "Pending"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    if not pending:
        return Check("Pending pods", subject, "pass", f"none ({len(pods)} pods, all bound)")
    views = event_views(events)
    notes = []
    status: Status = "warn"
    fix = "wait for the new node (GPU nodes take minutes); gpuscale watch shows it arrive"
    for pod in pending:
        name = _meta(pod, "name")
        about = [v for v in views if v.kind == "Pod" and v.name == name]
        last: dict[str, EventView] = {v.reason: v for v in about}
        if "NotTriggerScaleUp" in last:
            status = "fail"
            notes.append(f"{name}: NotTriggerScaleUp: {last['NotTriggerScaleUp'].message}")
            fix = (
                "no node pool can run the pod: check nodeSelector, tolerations and requests "
                "against the GPU pool's labels, taints and size, and its max_nodes"
            )
        elif "TriggeredScaleUp" in last:
            notes.append(f"{name}: TriggeredScaleUp: {last['TriggeredScaleUp'].message}")
        elif "FailedScheduling" in last:
            notes.append(
                f"{name}: FailedScheduling: {last['FailedScheduling'].message}; no cluster "
                "autoscaler event yet"
            )
        else:
            notes.append(f"{name}: Pending, no scheduler event yet")
    return Check(
        "Pending pods", subject, status, f"{len(pending)} Pending: " + " | ".join(notes), fix
    )


# --- pools ------------------------------------------------------------------------------------


def pool_capacity(pool: NodePool, nodes: int) -> PoolCapacity:
    """A profile node pool (labels and taints as its provider sets them) with ``nodes``
    nodes now."""
    return PoolCapacity(
        name=pool.name,
        gpu_resource=pool.gpu_resource,
        gpus_per_node=pool.gpus_per_node,
        labels=dict(pool.labels),
        taints=pool.node_taints,
        nodes=nodes,
        max_nodes=pool.highest,
        autoscaled=pool.autoscaling,
    )


def doks_pool(
    name: str,
    size: str,
    *,
    auto_scale: bool,
    min_nodes: int,
    max_nodes: int,
    count: int,
    nodes: int,
    catalogue: Sequence[CatalogueEntry] = (),
) -> PoolCapacity:
    """A DOKS node pool as the DigitalOcean API reports it, with the GPUs of its size
    (from the size catalogue) and the labels and taints DOKS puts on its nodes (as the
    profile fills them for ``provider: doks``). A size the catalogue does not know counts
    as a pool without GPUs."""
    raw: dict[str, Any] = {"name": name, "size": size}
    if auto_scale:
        raw.update(min_nodes=min_nodes, max_nodes=max(max_nodes, min_nodes))
    else:
        raw["count"] = count
    try:
        pool = Profile.model_validate(
            {"cluster": {"provider": "doks"}, "node_pools": [raw], "catalogue": list(catalogue)}
        ).node_pools[0]
    except ValidationError:
        return PoolCapacity(
            name=name,
            gpu_resource=None,
            gpus_per_node=0,
            labels={f"{DOKS_LABEL_DOMAIN}/node-pool": name},
            taints=(),
            nodes=nodes,
            max_nodes=max_nodes if auto_scale else count,
            autoscaled=auto_scale,
        )
    return pool_capacity(pool, nodes)


# --- the whole chain ----------------------------------------------------------------------------


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
                    metadata,
                    trigger_index=index,
                    key_path=("spec", "triggers", index, "metadata"),
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
