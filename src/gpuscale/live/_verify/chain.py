"""What a manifest set asks verify to check: its ScaledObjects, ServiceMonitors, Services
and Deployments, each in the namespace it goes to (the subjects of
:data:`gpuscale.live._verify.links.LINKS`), and the one-line summary of the checks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuscale.controllers.keda import (
    PrometheusTrigger,
    ScaledObjectError,
    TriggerError,
    parse_prometheus_trigger,
)
from gpuscale.live._verify.facts import (
    Check,
    Status,
)
from gpuscale.live.apply import CLUSTER_SCOPED_KINDS, target_namespace
from gpuscale.manifests import (
    Manifest,
    ManifestSet,
)


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


_STATUSES: tuple[Status, ...] = ("pass", "fail", "warn", "skip", "error")


def summary(checks: Sequence[Check]) -> str:
    """``12 checks: 10 pass, 1 fail, 1 warn, 0 skip`` (``, 2 error`` when checks could not
    be made)."""
    counts = {status: sum(1 for c in checks if c.status == status) for status in _STATUSES}
    if not counts["error"]:
        del counts["error"]
    return f"{len(checks)} checks: " + ", ".join(f"{n} {status}" for status, n in counts.items())
