"""The KEDA links: its CRDs, its two Deployments, the external metrics APIService, the
ScaledObject's conditions and the HPA KEDA made (``kedacore/keda``
``apis/keda/v1alpha1/condition_types.go``, ``controllers/keda/hpa.go``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscale.kube import quantity_or_none
from gpuscale.live._verify.facts import (
    _INSTALL,
    KEDA_CRDS,
    METRICS_APISERVICE,
    Check,
    _conditions,
    _number,
    _said,
)


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
