"""A ScaledObject as KEDA reads it: settings with KEDA's defaults, triggers parsed.

Lint rules read ScaledObjects only through :func:`scaled_object_view`, so that switching
to the typed view of ``gpuscale.controllers.keda`` later means changing this one module.
Every setting is decided (a number, with KEDA's default when the key is absent) or
undecidable (``None``: templated, or the wrong type); rules stay silent on undecidable
settings. ``explicit`` records which keys the manifest sets, since some rules care
whether a default was written out.

Defaults, as of ``kedacore/keda@8b4f083`` (v2.20.1-117, main after v2.20.2):

- ``minReplicaCount`` 0: ``pkg/scaling/executor/scale_scaledobjects.go`` ``RequestScale``
  ("if scaledObject.Spec.MinReplicaCount is not set, then set the default value (0)");
- ``maxReplicaCount`` 100: ``defaultHPAMaxReplicas`` in
  ``apis/keda/v1alpha1/scaledobject_types.go``, ``GetHPAMaxReplicas``;
- ``cooldownPeriod`` 300 and ``initialCooldownPeriod`` 0: ``defaultCooldownPeriod`` and
  ``defaultInitialCooldownPeriod`` in ``pkg/scaling/executor/scale_executor.go``;
- ``pollingInterval`` 30: ``defaultPollingInterval`` in
  ``apis/keda/v1alpha1/withtriggers_types.go``;
- trigger ``metricType`` AverageValue: ``GetMetricTargetType`` in ``pkg/scalers/scaler.go``;
- Prometheus ``ignoreNullValues`` true and ``activationThreshold`` 0: the
  ``prometheusMetadata`` struct tags in ``pkg/scalers/prometheus_scaler.go``
  (``default=true``; ``optional`` float, so Go's zero value).

Trigger metadata is ``map[string]string`` (``ScaleTriggers.Metadata`` in
``apis/keda/v1alpha1/scaletriggers_types.go``); numbers and booleans are parsed from
strings the way Go's ``strconv.ParseFloat``/``ParseBool`` do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.lint._access import as_int, as_map, as_str, dig, is_templated, iter_list

__all__ = [
    "DEFAULTS",
    "PrometheusTriggerView",
    "ScaledObjectView",
    "TriggerView",
    "go_parse_bool",
    "go_parse_float",
    "scaled_object_view",
]

DEFAULTS: Mapping[str, Any] = {
    "minReplicaCount": 0,
    "maxReplicaCount": 100,
    "cooldownPeriod": 300,
    "initialCooldownPeriod": 0,
    "pollingInterval": 30,
    "metricType": "AverageValue",
    "ignoreNullValues": True,
    "activationThreshold": 0.0,
}
"""KEDA's defaults for the settings lint reads (sources in the module docstring)."""

_SPEC_INTS = (
    "minReplicaCount",
    "maxReplicaCount",
    "idleReplicaCount",
    "cooldownPeriod",
    "initialCooldownPeriod",
    "pollingInterval",
)


@dataclass(frozen=True)
class PrometheusTriggerView:
    """The metadata of a ``prometheus`` trigger; ``None`` for an undecidable value."""

    server_address: str | None
    query: str | None
    threshold: float | None
    activation_threshold: float | None
    ignore_null_values: bool | None
    explicit: frozenset[str]
    """The metadata keys the manifest sets."""


@dataclass(frozen=True)
class TriggerView:
    """One entry of ``spec.triggers``."""

    index: int
    type: str | None
    name: str | None
    metric_type: str | None
    """``AverageValue`` (the default) or ``Value``; ``None`` when undecidable."""
    metric_type_explicit: bool
    use_cached_metrics: bool
    metadata: Mapping[str, Any]
    """The raw metadata mapping (empty when missing or not a mapping)."""
    prometheus: PrometheusTriggerView | None
    """Parsed metadata for ``type: prometheus`` triggers, else ``None``."""


@dataclass(frozen=True)
class ScaledObjectView:
    """A ScaledObject's settings with KEDA's defaults filled in."""

    min_replica_count: int | None
    max_replica_count: int | None
    idle_replica_count: int | None
    cooldown_period: int | None
    initial_cooldown_period: int | None
    polling_interval: int | None
    explicit: frozenset[str]
    """The ``spec`` keys the manifest sets (of the integer settings above)."""
    target_kind: str | None
    target_name: str | None
    fallback: Mapping[str, Any] | None
    scale_down_window: int | None
    """``advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds``
    when set, else ``None`` (the HPA controller's default then applies)."""
    has_behavior: bool
    uses_scaling_modifiers: bool
    triggers: tuple[TriggerView, ...]

    @property
    def idle_mode(self) -> bool:
        """Whether ``idleReplicaCount`` is set (KEDA then scales to it, not to 0)."""
        return "idleReplicaCount" in self.explicit

    @property
    def scales_to_zero(self) -> bool | None:
        """Whether KEDA itself scales down (min 0 or idle mode); ``None``: undecidable."""
        if self.idle_mode:
            return True
        if self.min_replica_count is None:
            return None
        return self.min_replica_count == 0


def go_parse_float(text: Any) -> float | None:
    """``text`` as Go's ``strconv.ParseFloat(text, 64)`` reads it, or ``None`` if it errors."""
    if not isinstance(text, str) or not text or text != text.strip() or "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def go_parse_bool(text: Any) -> bool | None:
    """``text`` as Go's ``strconv.ParseBool`` reads it, or ``None`` if it errors."""
    if not isinstance(text, str):
        return None
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    return None


def _prometheus(metadata: Mapping[str, Any]) -> PrometheusTriggerView:
    explicit = frozenset(key for key in metadata if isinstance(key, str))
    threshold = go_parse_float(metadata.get("threshold"))
    activation: float | None = DEFAULTS["activationThreshold"]
    if "activationThreshold" in metadata:
        activation = go_parse_float(metadata["activationThreshold"])
    ignore_null: bool | None = DEFAULTS["ignoreNullValues"]
    if "ignoreNullValues" in metadata:
        ignore_null = go_parse_bool(metadata["ignoreNullValues"])
    query = as_str(metadata.get("query"))
    return PrometheusTriggerView(
        server_address=as_str(metadata.get("serverAddress")),
        query=query.strip() if query is not None else None,
        threshold=threshold if threshold is not None and math.isfinite(threshold) else None,
        activation_threshold=activation,
        ignore_null_values=ignore_null,
        explicit=explicit,
    )


def _trigger(index: int, raw: Any) -> TriggerView:
    trigger = as_map(raw) or {}
    metadata = as_map(trigger.get("metadata")) or {}
    kind = as_str(trigger.get("type"))
    metric_type: str | None = DEFAULTS["metricType"]
    if "metricType" in trigger:
        value = trigger["metricType"]
        known = isinstance(value, str) and value in {"AverageValue", "Value", "Utilization"}
        metric_type = value if known else None
    return TriggerView(
        index=index,
        type=kind,
        name=as_str(trigger.get("name")),
        metric_type=metric_type,
        metric_type_explicit="metricType" in trigger,
        use_cached_metrics=trigger.get("useCachedMetrics") is True,
        metadata=metadata,
        prometheus=_prometheus(metadata) if kind == "prometheus" else None,
    )


def _spec_int(spec: Mapping[str, Any], key: str) -> int | None:
    if key not in spec:
        default = DEFAULTS.get(key)
        return default if isinstance(default, int) else None
    return as_int(spec[key])


def scaled_object_view(body: Mapping[str, Any]) -> ScaledObjectView:
    """Read a ScaledObject document (as plain dicts) the way KEDA does."""
    spec = as_map(body.get("spec")) or {}
    target = as_map(spec.get("scaleTargetRef")) or {}
    target_kind = as_str(target.get("kind")) if "kind" in target else "Deployment"
    target_name = as_str(target.get("name"))
    if target_name is not None and (not target_name or is_templated(target_name)):
        target_name = None
    window = dig(
        spec,
        ("advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleDown"),
    )
    modifiers = as_map(dig(spec, ("advanced", "scalingModifiers")))
    return ScaledObjectView(
        min_replica_count=_spec_int(spec, "minReplicaCount"),
        max_replica_count=_spec_int(spec, "maxReplicaCount"),
        idle_replica_count=_spec_int(spec, "idleReplicaCount"),
        cooldown_period=_spec_int(spec, "cooldownPeriod"),
        initial_cooldown_period=_spec_int(spec, "initialCooldownPeriod"),
        polling_interval=_spec_int(spec, "pollingInterval"),
        explicit=frozenset(key for key in _SPEC_INTS if key in spec),
        target_kind=target_kind,
        target_name=target_name,
        fallback=as_map(spec.get("fallback")),
        scale_down_window=as_int(dig(window, ("stabilizationWindowSeconds",))),
        has_behavior=dig(spec, ("advanced", "horizontalPodAutoscalerConfig", "behavior"))
        is not None,
        uses_scaling_modifiers=bool(modifiers),
        triggers=tuple(_trigger(index, raw) for index, raw in iter_list(spec.get("triggers"))),
    )
