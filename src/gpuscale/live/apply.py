"""What ``gpuscale deploy`` sends and how it reads the answers: pure decisions.

Server-side apply (Kubernetes ``PATCH`` with ``Content-Type: application/apply-patch+yaml``,
``fieldManager=gpuscale``; ``force=true`` only when asked, ``dryRun=All`` for a server dry
run; https://kubernetes.io/docs/reference/using-api/server-side-apply/) sends each manifest
as written, with its namespace filled in, and the API server merges it. The I/O is in
:mod:`gpuscale.live.applier`; this module decides:

- **the order** (:func:`apply_order`): Helm's install order by kind
  (``helm/helm pkg/releaseutil/kind_sorter.go``, ``InstallOrder``) with two changes:
  CustomResourceDefinitions right after Namespaces, so that everything after may use
  them, and the custom kinds gpuscale knows (KEDA's TriggerAuthentications before
  ScaledObjects, prometheus-operator's ServiceMonitors) in a fixed order after every
  built-in kind. Other unknown kinds come last. Within a kind the file order is kept
  (Helm sorts by name; kubectl keeps the file order, which users read).
- **the namespace** (:func:`target_namespace`): the object's ``metadata.namespace``,
  else ``--namespace``, else the kubeconfig context's, as ``kubectl apply`` does; an
  object whose namespace differs from an explicit ``--namespace`` is refused, as kubectl
  refuses it.
- **the result** (:func:`apply_action`): ``created`` (201, or no object before),
  ``configured`` (the ``resourceVersion`` moved; a no-op apply leaves it alone) or
  ``unchanged``; in a server dry run, where nothing is stored and the version does not
  move, the returned object is compared with the stored one instead.
- **the errors** (:func:`apply_error`): one line per failed object with the fix: 401 and
  403 name the credentials and the verbs needed, 404 the missing namespace or CRD, 409
  the conflicting field managers and ``--force-conflicts``, 422 the API server's own
  message and the manifest's ``file:line``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpuscale._http_errors import answer_doc, answer_message
from gpuscale._redact import redact
from gpuscale.errors import GpuscaleError, InputError, ManifestError, UnavailableError
from gpuscale.live.kube import status_error
from gpuscale.manifests import Manifest

__all__ = [
    "APPLY_CONTENT_TYPE",
    "CLUSTER_SCOPED_KINDS",
    "CUSTOM_ORDER",
    "FIELD_MANAGER",
    "INSTALLED_BY_GPUSCALE",
    "INSTALL_ORDER",
    "Action",
    "ApplyResult",
    "apply_action",
    "apply_body",
    "apply_error",
    "apply_order",
    "apply_query",
    "client_objects",
    "crd_resources",
    "display_name",
    "missing_kind_error",
    "target_namespace",
]

FIELD_MANAGER = "gpuscale"
"""The field manager gpuscale applies as (``metadata.managedFields[].manager``)."""

APPLY_CONTENT_TYPE = "application/apply-patch+yaml"

INSTALL_ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "Ingress",
    "APIService",
)
"""Built-in kinds in apply order: Helm's ``InstallOrder``, CRDs moved up."""

CUSTOM_ORDER = (
    "ClusterTriggerAuthentication",
    "TriggerAuthentication",
    "ServiceMonitor",
    "PodMonitor",
    "PrometheusRule",
    "ScaledObject",
    "ScaledJob",
)
"""CRD-backed kinds gpuscale knows, applied after every built-in kind, in this order."""

INSTALLED_BY_GPUSCALE = {
    "keda.sh": "KEDA",
    "monitoring.coreos.com": "prometheus-operator (kube-prometheus-stack)",
}
"""API groups whose CRDs ``gpuscale install`` puts in the cluster."""

CLUSTER_SCOPED_KINDS = frozenset(
    {
        "APIService",
        "CSIDriver",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterTriggerAuthentication",
        "ClusterCloudEventSource",
        "CustomResourceDefinition",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PriorityClass",
        "RuntimeClass",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
    }
)
"""Kinds without a namespace, for a client dry run, which cannot ask the server."""

Action = Literal["created", "configured", "unchanged", "skipped", "failed"]

_VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation")


def _rank(kind: str) -> int:
    if kind in INSTALL_ORDER:
        return INSTALL_ORDER.index(kind)
    if kind in CUSTOM_ORDER:
        return len(INSTALL_ORDER) + CUSTOM_ORDER.index(kind)
    return len(INSTALL_ORDER) + len(CUSTOM_ORDER)


def apply_order(manifests: Iterable[Manifest]) -> list[Manifest]:
    """``manifests`` in the order they are applied (stable within a kind)."""
    return sorted(manifests, key=lambda m: _rank(m.kind))


def target_namespace(
    manifest: Manifest, *, namespaced: bool, flag: str | None, context: str | None
) -> str | None:
    """The namespace ``manifest`` is applied to: None for cluster-scoped kinds; else the
    object's own, ``flag`` (``--namespace``), the context's, in that order. Raises
    :class:`InputError` when the object names a namespace other than ``flag``."""
    if not namespaced:
        return None
    if manifest.namespace:
        if flag and flag != manifest.namespace:
            raise InputError(
                f"{manifest.ref} is in namespace {manifest.namespace!r} but --namespace is "
                f"{flag!r}",
                where=str(manifest.line_of(("metadata", "namespace"))),
                fix=f"drop --namespace, or pass --namespace {manifest.namespace}",
            )
        return manifest.namespace
    return flag or context


def apply_body(manifest: Manifest, namespace: str | None) -> dict[str, Any]:
    """The object to send: the manifest as written, ``metadata.namespace`` filled in for
    a namespaced kind that lacks it."""
    body = copy.deepcopy(manifest.body)
    if namespace is not None and not manifest.namespace:
        metadata = body.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata["namespace"] = namespace
    return body


def client_objects(
    manifests: Iterable[Manifest], *, flag: str | None, context: str | None
) -> list[dict[str, Any]]:
    """What a client dry run prints, in apply order: each object as it would be sent.

    With no server to ask, a kind counts as namespaced unless it is in
    :data:`CLUSTER_SCOPED_KINDS`; a namespaced object without a namespace, ``flag`` or
    ``context`` is printed without one (``kubectl apply -n`` then decides)."""
    return [
        apply_body(
            manifest,
            target_namespace(
                manifest,
                namespaced=manifest.kind not in CLUSTER_SCOPED_KINDS,
                flag=flag,
                context=context,
            ),
        )
        for manifest in apply_order(manifests)
    ]


def apply_query(*, dry_run: bool, force_conflicts: bool) -> dict[str, str]:
    """Query parameters of the apply ``PATCH``."""
    query = {"fieldManager": FIELD_MANAGER}
    if force_conflicts:
        query["force"] = "true"
    if dry_run:
        query["dryRun"] = "All"
    return query


def _comparable(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    doc = copy.deepcopy(dict(obj or {}))
    doc.pop("status", None)
    metadata = doc.get("metadata")
    if isinstance(metadata, dict):
        for key in _VOLATILE_METADATA:
            metadata.pop(key, None)
    return doc


def apply_action(
    status: int,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    *,
    dry_run: bool,
) -> Action:
    """``created``, ``configured`` or ``unchanged`` for a successful apply answer."""
    if status == 201 or before is None:
        return "created"
    if dry_run:
        return "unchanged" if _comparable(before) == _comparable(after) else "configured"
    old = (before.get("metadata") or {}).get("resourceVersion")
    new = ((after or {}).get("metadata") or {}).get("resourceVersion")
    return "unchanged" if old is not None and old == new else "configured"


def display_name(api_version: str, kind: str, name: str) -> str:
    """``deployment.apps/go-from-configmap``, ``service/go-from-configmap``: kubectl's way."""
    group = api_version.rpartition("/")[0]
    return f"{kind.lower()}.{group}/{name}" if group else f"{kind.lower()}/{name}"


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What happened to one object."""

    name: str
    """``deployment.apps/go-from-configmap``."""
    namespace: str | None
    action: Action
    dry_run: str | None = None
    """``server`` or ``client`` for a dry run, else None."""
    detail: str = ""
    """The error (``failed``) or the reason (``skipped``); the API server's words in it
    are masked (:func:`gpuscale._redact.redact`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", redact(self.detail))

    def line(self) -> str:
        """One line as kubectl prints it: ``service/app created (server dry run)``; the
        reason of a skip follows, the error of a failure goes to stderr."""
        text = f"{self.name} {self.action}"
        if self.dry_run:
            text += f" ({self.dry_run} dry run)"
        if self.detail and self.action == "skipped":
            text += f": {self.detail}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "action": self.action,
            "dry_run": self.dry_run,
            "detail": self.detail,
        }


def crd_resources(manifests: Iterable[Manifest]) -> dict[tuple[str, str], tuple[str, str, bool]]:
    """Kinds the CRDs among ``manifests`` define: ``(apiVersion, kind)`` →
    ``(crd name, plural, namespaced)``, one entry per served version."""
    defined: dict[tuple[str, str], tuple[str, str, bool]] = {}
    for manifest in manifests:
        if manifest.kind != "CustomResourceDefinition":
            continue
        spec = manifest.spec
        group = str(spec.get("group") or "")
        names = spec.get("names") or {}
        kind, plural = str(names.get("kind") or ""), str(names.get("plural") or "")
        if not (group and kind and plural):
            continue
        namespaced = spec.get("scope", "Namespaced") == "Namespaced"
        for version in spec.get("versions") or []:
            if isinstance(version, Mapping) and version.get("served", True):
                defined[(f"{group}/{version.get('name')}", kind)] = (
                    manifest.name,
                    plural,
                    namespaced,
                )
    return defined


def missing_kind_error(missing: Sequence[Manifest]) -> GpuscaleError:
    """The error for manifests whose kind the server does not serve (``missing`` non-empty)."""
    first = missing[0]
    group = first.api_version.rpartition("/")[0]
    more = len(missing) - 1
    extra = f" (and {more} more object{'s' if more > 1 else ''} of kinds it lacks)" if more else ""
    owner = INSTALLED_BY_GPUSCALE.get(group)
    if owner is not None:
        return UnavailableError(
            f"the cluster has no {first.kind} ({first.api_version}): {owner}'s CRDs are not "
            f"installed{extra}",
            where=str(first.source),
            fix="run gpuscale install (KEDA and kube-prometheus-stack with their CRDs), "
            "then deploy again",
        )
    return UnavailableError(
        f"the cluster does not serve {first.kind} in {first.api_version}{extra}",
        where=str(first.source),
        fix="install the CustomResourceDefinition that defines it (or add it to the "
        "manifests), or correct apiVersion/kind",
    )


def apply_error(
    status: int,
    body: Any,
    *,
    manifest: Manifest,
    name: str,
    namespace: str | None,
    resource: str,
) -> GpuscaleError:
    """The one-line error for a failed apply of ``manifest`` (``name`` as kubectl shows it,
    ``resource`` the plural) from the HTTP ``status`` and the API's ``Status`` body."""
    doc = answer_doc(body)
    message = answer_message(doc)
    said = f" ({message})" if message else ""
    where = f"{manifest.source}: {name}"
    scope = f" in namespace {namespace}" if namespace else ""
    if status == 404:
        if 'namespaces "' in message and "not found" in message:
            return InputError(
                f"the namespace does not exist{said}",
                where=where,
                fix=f"add a Namespace manifest (deploy applies it first) or create it: "
                f"kubectl create namespace {namespace}",
            )
        group = manifest.api_version.rpartition("/")[0]
        hint = (
            "run gpuscale install (it installs the CRDs)"
            if group in INSTALLED_BY_GPUSCALE
            else "install the CustomResourceDefinition of this kind"
        )
        return UnavailableError(f"not found{said}", where=where, fix=hint)
    if status == 409:
        owners: dict[str, list[str]] = {}
        for cause in (doc.get("details") or {}).get("causes") or []:
            if cause.get("field"):
                owners.setdefault(str(cause.get("message") or "conflict"), []).append(
                    str(cause["field"])
                )
        listed = "; ".join(f"{who} over {', '.join(fields)}" for who, fields in owners.items())
        return GpuscaleError(
            listed or f"conflict{said}",
            where=where,
            fix="take the fields over with --force-conflicts (the other manager, e.g. "
            "kubectl or helm, may set them back), or leave them out of the manifest",
        )
    if status in (400, 422):
        causes = [
            f"{cause.get('field')}: {cause.get('message')}"
            for cause in (doc.get("details") or {}).get("causes") or []
            if cause.get("field") and cause.get("message") and str(cause["field"]) not in message
        ]
        detail = message + (f"; {'; '.join(causes)}" if causes else "")
        return ManifestError(
            f"{name}: the API server refused it: {detail or f'HTTP {status}'}",
            where=str(manifest.source),
            fix="change the manifest as the API server says (gpuscale validates against a "
            "schema that may differ from this cluster's version)",
        )
    return status_error(
        status,
        doc,
        where,
        fixes={
            403: f"use a context whose user may get, create and patch {resource}{scope} "
            "(server-side apply is a patch)"
        },
        retry_fix="run gpuscale deploy again in a moment (applying is idempotent)",
    )
