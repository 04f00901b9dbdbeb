"""ScaledObject manifests as the simulator's KEDA sources: the typed spec after KEDA's
admission checks, the HPA KEDA generates for it, its TriggerAuthentications' parameters
(placeholders: no secret is read), and each trigger's query checked by the PromQL engine
— every error on the manifest's ``file:line``. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from gpuscale.controllers.hpa import HPAControllerOptions
from gpuscale.controllers.keda import ScaledObjectSpec, generated_hpa, validate_scaled_object
from gpuscale.errors import GpuscaleError, InputError
from gpuscale.manifests import Manifest, ManifestSet
from gpuscale.promql import PromQLError
from gpuscale.sim.keda import ScaledObjectSource
from gpuscale.sim.located import relocate, where
from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.specs import SimWorkload

__all__ = ["scaled_object"]


def _auth_params(
    manifests: ManifestSet, namespace: str, default_namespace: str, name: str | None
) -> dict[str, str] | None:
    """The parameters a TriggerAuthentication supplies, with placeholder values (secrets
    are not read: the simulation needs only to know they are given)."""
    if not name:
        return None
    for manifest in manifests.by_kind("TriggerAuthentication", "ClusterTriggerAuthentication"):
        if manifest.name != name:
            continue
        if (
            manifest.kind == "TriggerAuthentication"
            and manifest.effective_namespace(default_namespace) != namespace
        ):
            continue
        params: dict[str, str] = {}
        for key in ("secretTargetRef", "env", "configMapTargetRef"):
            for entry in manifest.get(("spec", key)) or []:
                if isinstance(entry, dict) and isinstance(entry.get("parameter"), str):
                    params[entry["parameter"]] = f"<{key}:{entry.get('name', '')}>"
        return params
    return None


def scaled_object(
    manifest: Manifest,
    *,
    manifests: ManifestSet,
    prometheus_address: str,
    hpa: HPAControllerOptions,
    default_namespace: str,
    workloads: Mapping[tuple[str, str, str], SimWorkload],
    backend: PromQLBackend,
) -> tuple[ScaledObjectSource, list[str]]:
    """The KEDA source of ``manifest``, and the warnings it gives. ``prometheus_address``
    is the profile's Prometheus (a trigger reading another is warned about); ``hpa`` the
    HPA controller's flags its generated HPA runs with."""
    body = manifest.spec
    namespace = manifest.effective_namespace(default_namespace)
    warnings: list[str] = []
    try:
        typed = ScaledObjectSpec.from_k8s(body)
        warnings += [
            f"ScaledObject {manifest.name}: {w}"
            for w in validate_scaled_object(body, name=manifest.name)
        ]
    except GpuscaleError as error:
        raise relocate(error, manifest) from None
    if typed.scaling_modifiers is not None:
        raise InputError(
            f"ScaledObject {manifest.name}: advanced.scalingModifiers is not simulated",
            where=where(manifest, ("spec", "advanced", "scalingModifiers")),
            fix="simulate the triggers without scalingModifiers, or leave this ScaledObject out",
        )
    for index, trigger in enumerate(typed.triggers):
        if trigger.type != "prometheus":
            raise InputError(
                f"ScaledObject {manifest.name}: trigger type {trigger.type!r} is not simulated "
                "(gpuscale simulates prometheus triggers)",
                where=where(manifest, ("spec", "triggers", index, "type")),
                fix="use a prometheus trigger, or leave this ScaledObject out of the simulation",
            )
    kind = typed.scale_target_kind
    key = (kind, namespace, typed.scale_target_name)
    if key not in workloads:
        raise InputError(
            f"ScaledObject {manifest.name} scales {kind} {namespace}/{typed.scale_target_name}, "
            "which is not among the manifests given",
            where=where(manifest, ("spec", "scaleTargetRef", "name")),
            fix=f"pass the {kind}'s manifest too (and check its name and namespace)",
        )
    annotations = manifest.get(("metadata", "annotations")) or {}
    auth = [
        _auth_params(manifests, namespace, default_namespace, t.authentication_ref)
        for t in typed.triggers
    ]
    try:
        generated = generated_hpa(
            body,
            name=manifest.name,
            annotations={str(k): str(v) for k, v in annotations.items()},
            auth_params=auth,
        )
    except GpuscaleError as error:
        raise relocate(error, manifest) from None
    address = prometheus_address.rstrip("/")
    for index, prom in enumerate(generated.triggers):
        if prom is None:
            continue
        try:
            backend.check(prom.query)
        except PromQLError as error:
            raise InputError(
                f"ScaledObject {manifest.name}: {error.message}",
                where=where(manifest, ("spec", "triggers", index, "metadata", "query")),
                fix=error.fix or "rewrite the query (gpuscale lint explains its findings)",
            ) from None
        if prom.server_address.rstrip("/") != address:
            warnings.append(
                f"ScaledObject {manifest.name} "
                f"({manifest.line_of(('spec', 'triggers', index, 'metadata', 'serverAddress'))})"
                f": serverAddress {prom.server_address} is not the profile's Prometheus "
                f"({address}); the simulation answers the query from the simulated Prometheus"
            )
    source = ScaledObjectSource(
        name=manifest.name,
        namespace=namespace,
        target=typed.scale_target_name,
        spec=typed,
        hpa=generated,
        annotations={str(k): str(v) for k, v in annotations.items()},
        hpa_options=hpa,
    )
    return source, warnings
