"""The I/O half of ``gpuscale deploy``: plan against the cluster, then apply object by object.

:meth:`Applier.plan` sends only reads: the discovery documents (which resource serves
each kind; a kind whose CRD is missing fails here, before anything is written, with
the fix) and one ``GET`` per namespace the objects go to (a namespace that neither
exists nor is created by the same deploy fails here too). :meth:`Applier.apply` then
sends, in :func:`~gpuscale.live.apply.apply_order`, for each object a ``GET`` (to tell
``created``/``configured``/``unchanged`` apart) and the server-side-apply ``PATCH``.

Objects of a kind defined by a CRD in the same deploy are applied once the server
serves that kind (discovery is read again until it does, up to ``crd_timeout``); a
server dry run cannot try them (the CRD is not stored), nor objects in a namespace the
same deploy creates, and reports them ``skipped`` with the reason. A failed object does
not stop the others (as with ``kubectl apply``), except rejected credentials, which
would fail every request alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gpuscale.errors import InputError
from gpuscale.live.apply import (
    APPLY_CONTENT_TYPE,
    ApplyResult,
    apply_action,
    apply_body,
    apply_error,
    apply_order,
    apply_query,
    crd_resources,
    display_name,
    missing_kind_error,
    target_namespace,
)
from gpuscale.live.discovery import Discovery, Resource
from gpuscale.live.kube import Kube
from gpuscale.manifests import Manifest

__all__ = ["Applier", "DeployPlan", "PlannedObject"]


@dataclass(frozen=True, slots=True)
class PlannedObject:
    """One object, ready to send."""

    manifest: Manifest
    resource: Resource
    namespace: str | None
    body: dict[str, Any]
    crd: str | None = None
    """The CRD of this deploy that defines the kind, when the server does not serve it yet."""

    @property
    def name(self) -> str:
        return display_name(self.manifest.api_version, self.manifest.kind, self.manifest.name)

    @property
    def path(self) -> str:
        return self.resource.object_path(self.manifest.name, self.namespace)


@dataclass(frozen=True, slots=True)
class DeployPlan:
    """The objects in apply order, and the namespaces the deploy itself creates."""

    objects: tuple[PlannedObject, ...]
    new_namespaces: frozenset[str] = frozenset()


class Applier:
    """Plans and applies manifests through one :class:`~gpuscale.live.kube.Kube`."""

    def __init__(
        self,
        kube: Kube,
        discovery: Discovery | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        crd_timeout: float = 60.0,
        poll_interval: float = 1.0,
    ) -> None:
        self.kube = kube
        self.discovery = discovery or Discovery(kube)
        self.clock = clock
        self.sleep = sleep
        self.crd_timeout = crd_timeout
        self.poll_interval = poll_interval

    def plan(self, manifests: Iterable[Manifest], *, namespace: str | None) -> DeployPlan:
        """Resolve every object's resource and namespace; raise before anything is sent
        when a kind is not served or a namespace is missing."""
        ordered = apply_order(manifests)
        defined = crd_resources(ordered)
        context = self.kube.target.namespace
        planned: list[PlannedObject] = []
        missing: list[Manifest] = []
        for manifest in ordered:
            resource = self.discovery.resource(manifest.api_version, manifest.kind)
            crd = None
            if resource is None and (manifest.api_version, manifest.kind) in defined:
                crd, plural, namespaced = defined[(manifest.api_version, manifest.kind)]
                resource = Resource(manifest.api_version, manifest.kind, plural, namespaced)
            if resource is None:
                missing.append(manifest)
                continue
            ns = target_namespace(
                manifest, namespaced=resource.namespaced, flag=namespace, context=context
            )
            planned.append(PlannedObject(manifest, resource, ns, apply_body(manifest, ns), crd=crd))
        if missing:
            raise missing_kind_error(missing)
        created = [m.name for m in ordered if m.kind == "Namespace" and m.api_version == "v1"]
        new: set[str] = set()
        for ns in dict.fromkeys([*(p.namespace for p in planned if p.namespace), *created]):
            assert ns is not None
            found = self.kube.get_json(
                f"/api/v1/namespaces/{ns}", what=f"namespace/{ns}", missing_ok=True
            )
            if found is not None:
                continue
            if ns in created:
                new.add(ns)
                continue
            first = next(p.manifest for p in planned if p.namespace == ns)
            raise InputError(
                f"namespace {ns!r} does not exist ({first.ref} and any others in it would fail)",
                where=str(first.source),
                fix=f"add a Namespace manifest (deploy applies it first) or create it: "
                f"kubectl create namespace {ns}",
            )
        return DeployPlan(tuple(planned), frozenset(new))

    def apply(
        self,
        plan: DeployPlan,
        *,
        dry_run: bool = False,
        force_conflicts: bool = False,
        on_result: Callable[[ApplyResult], None] | None = None,
    ) -> list[ApplyResult]:
        """Apply every object of ``plan`` in order; one :class:`ApplyResult` each."""
        results: list[ApplyResult] = []
        failed_crds: set[str] = set()
        mode = "server" if dry_run else None
        query = apply_query(dry_run=dry_run, force_conflicts=force_conflicts)
        for obj in plan.objects:
            result = self._one(obj, plan, query, mode, failed_crds)
            if result.action == "failed" and obj.manifest.kind == "CustomResourceDefinition":
                failed_crds.add(obj.manifest.name)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results

    def _one(
        self,
        obj: PlannedObject,
        plan: DeployPlan,
        query: dict[str, str],
        mode: str | None,
        failed_crds: set[str],
    ) -> ApplyResult:
        def result(action: Any, detail: str = "") -> ApplyResult:
            return ApplyResult(obj.name, obj.namespace, action, mode, detail)

        if mode and obj.namespace in plan.new_namespaces:
            return result(
                "skipped",
                f"namespace {obj.namespace} is created by this deploy; a server dry run "
                "cannot try objects in it",
            )
        if obj.crd is not None:
            if obj.crd in failed_crds:
                return result("skipped", f"its CustomResourceDefinition {obj.crd} failed")
            if mode:
                self.discovery.forget(obj.resource.api_version)
                if self.discovery.resource(obj.resource.api_version, obj.resource.kind) is None:
                    return result(
                        "skipped",
                        f"its CustomResourceDefinition {obj.crd} is created by this deploy; "
                        "a server dry run cannot try it",
                    )
            elif not self._wait_served(obj.resource):
                return result(
                    "failed",
                    f"the API server did not serve {obj.resource.kind} within "
                    f"{self.crd_timeout:g}s of applying CustomResourceDefinition {obj.crd}",
                )
        what = f"{obj.name}" + (f" in {obj.namespace}" if obj.namespace else "")
        status, before = self.kube.send("GET", obj.path, what=what)
        if status == 404:
            before = None
        elif status >= 300:
            return self._failed(obj, status, before, result)
        status, after = self.kube.send(
            "PATCH", obj.path, query, body=obj.body, content_type=APPLY_CONTENT_TYPE, what=what
        )
        if status >= 300:
            return self._failed(obj, status, after, result)
        return result(apply_action(status, before, after, dry_run=mode is not None))

    def _failed(
        self,
        obj: PlannedObject,
        status: int,
        body: Any,
        result: Callable[..., ApplyResult],
    ) -> ApplyResult:
        error = apply_error(
            status,
            body,
            manifest=obj.manifest,
            name=obj.name,
            namespace=obj.namespace,
            resource=obj.resource.plural,
        )
        if status == 401:
            raise error
        return result("failed", error.one_line())

    def _wait_served(self, resource: Resource) -> bool:
        start = self.clock()
        while True:
            self.discovery.forget(resource.api_version)
            if self.discovery.resource(resource.api_version, resource.kind) is not None:
                return True
            if self.clock() - start >= self.crd_timeout:
                return False
            self.sleep(self.poll_interval)
