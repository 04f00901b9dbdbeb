"""A ScaledObject spec as KEDA sees it: defaults, admission rules, and the HPA it generates.

Follows ``apis/keda/v1alpha1/scaledobject_types.go`` (ScaledObjectSpec and its CRD markers,
GetHPAMinReplicas, GetHPAMaxReplicas, CheckReplicaCountBoundsAreValid,
CheckFallbackValid), ``withtriggers_types.go`` (the 30 s polling default),
``scaletriggers_types.go`` (ValidateTriggers), ``scaledobject_webhook.go``
(verifyScaledObjects' warnings, verifyCPUMemoryScalers' scale-to-zero rule, verifyName,
validateWorkload), ``config/crd/bases/keda.sh_scaledobjects.yaml`` (minimums, enums, the
min <= max CEL rule), ``controllers/keda/hpa.go`` (newHPAForScaledObject,
getScaledObjectMetricSpecs, getHPAName) and the scalers' GetMetricSpecForScaling
(``pkg/scalers/prometheus_scaler.go``, ``pkg/scalers/cpu_memory_scaler.go``), at
kedacore/keda 8b4f083 (v2.20.1-117).

Specs are the camelCase mappings found in manifests (``spec`` of a ScaledObject). The
checks that need the cluster (other HPAs or ScaledObjects on the same target, container
resource requests, LimitRanges) are out of reach here and left to ``gpuscale verify``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpuscale._gomath import GoSyntaxError, go_float_to_int64, parse_go_float
from gpuscale.controllers._keda.errors import ScaledObjectError, TriggerError
from gpuscale.controllers._keda.executor import (
    DEFAULT_COOLDOWN_PERIOD,
    DEFAULT_INITIAL_COOLDOWN_PERIOD,
    PAUSED_SCALE_IN_ANNOTATION,
    PAUSED_SCALE_OUT_ANNOTATION,
    bool_annotation,
)
from gpuscale.controllers._keda.fallback import FALLBACK_BEHAVIORS
from gpuscale.controllers._keda.goparse import parse_go_int
from gpuscale.controllers._keda.modifiers import (
    COMPOSITE_METRIC_NAME,
    is_using_modifiers,
    validate_scaling_modifiers,
)
from gpuscale.controllers._keda.prometheus import (
    PrometheusTrigger,
    metric_quantity,
    metric_target_type,
    parse_prometheus_trigger,
)
from gpuscale.errors import KeyPath, format_key_path
from gpuscale.kube import parse_quantity

__all__ = [
    "DEFAULT_HPA_MAX_REPLICAS",
    "DEFAULT_HPA_MIN_REPLICAS",
    "DEFAULT_POLLING_INTERVAL",
    "FallbackSpec",
    "GeneratedHPA",
    "GeneratedMetric",
    "ScaledObjectSpec",
    "ScalingModifiersSpec",
    "TriggerSpec",
    "check_fallback",
    "check_replica_bounds",
    "check_triggers",
    "generated_hpa",
    "hpa_max_replicas",
    "hpa_min_replicas",
    "hpa_name",
    "scaled_object_warnings",
    "validate_scaled_object",
]

DEFAULT_POLLING_INTERVAL = 30
DEFAULT_HPA_MIN_REPLICAS = 1
DEFAULT_HPA_MAX_REPLICAS = 100
_INT32_MAX = 2**31 - 1
_LABEL_VALUE_MAX = 63
POLLING_WARNING = (
    "PollingInterval is configured but is not relevant. PollingInterval is only relevant "
    "when minReplicaCount = 0, idleReplicaCount is set, or useCachedMetrics is enabled"
)
COOLDOWN_WARNING = (
    "CooldownPeriod is configured but is not relevant. CooldownPeriod is only relevant "
    "when minReplicaCount = 0 or idleReplicaCount is set"
)


def hpa_min_replicas(min_replica_count: int | None) -> int:
    """GetHPAMinReplicas: ``minReplicaCount`` when set and above 0, else 1 (the HPA never has
    a minimum of 0; KEDA itself does 0 <-> 1)."""
    if min_replica_count is not None and min_replica_count > 0:
        return min_replica_count
    return DEFAULT_HPA_MIN_REPLICAS


def hpa_max_replicas(max_replica_count: int | None) -> int:
    """GetHPAMaxReplicas: ``maxReplicaCount``, or 100."""
    return max_replica_count if max_replica_count is not None else DEFAULT_HPA_MAX_REPLICAS


def check_replica_bounds(
    *, min_replica_count: int | None, max_replica_count: int | None, idle_replica_count: int | None
) -> None:
    """CheckReplicaCountBoundsAreValid. Note upstream's quirk: a *set* minimum goes through
    GetHPAMinReplicas, so ``minReplicaCount: 0`` counts as 1 here (idle 0 passes) while an
    unset minimum counts as 0 (idle 0 fails)."""
    minimum = hpa_min_replicas(min_replica_count) if min_replica_count is not None else 0
    maximum = hpa_max_replicas(max_replica_count)
    if minimum > maximum:
        raise ScaledObjectError(
            f"MinReplicaCount={minimum} must be less than MaxReplicaCount={maximum}",
            key_path=("spec", "minReplicaCount"),
            fix="make minReplicaCount at most maxReplicaCount",
        )
    if idle_replica_count is not None and idle_replica_count >= minimum:
        raise ScaledObjectError(
            f"IdleReplicaCount={idle_replica_count} must be less than MinReplicaCount={minimum}",
            key_path=("spec", "idleReplicaCount"),
            fix="make idleReplicaCount smaller than minReplicaCount, or remove it",
        )


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _int_or_zero(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def check_fallback(
    *,
    fallback: Mapping[str, object] | None,
    triggers: Sequence[Mapping[str, object]],
    advanced: Mapping[str, object] | None,
) -> None:
    """CheckFallbackValid: threshold and replicas not negative, and, unless scalingModifiers
    are used, at least one trigger that is not cpu or memory."""
    if fallback is None:
        return
    threshold = _int_or_zero(fallback.get("failureThreshold"))
    replicas = _int_or_zero(fallback.get("replicas"))
    if threshold < 0 or replicas < 0:
        raise ScaledObjectError(
            f"FailureThreshold={threshold} & Replicas={replicas} "
            "must both be greater than or equal to 0",
            key_path=("spec", "fallback"),
            fix="use non-negative failureThreshold and replicas",
        )
    spec: dict[str, object] = {} if advanced is None else {"advanced": advanced}
    if not is_using_modifiers(spec) and all(
        _mapping(trigger).get("type") in ("cpu", "memory") for trigger in triggers
    ):
        raise ScaledObjectError(
            "at least one trigger (that is not cpu or memory) has to have the `AverageValue` "
            "type for the fallback to be enabled",
            key_path=("spec", "fallback"),
            fix="add an external trigger, or remove fallback (it never applies to cpu/memory)",
        )


def check_triggers(triggers: Sequence[Mapping[str, object]]) -> None:
    """ValidateTriggers: at least one trigger, unique names, no ``useCachedMetrics`` on cpu,
    memory or cron."""
    if not triggers:
        raise ScaledObjectError(
            "no triggers defined in the ScaledObject/ScaledJob",
            key_path=("spec", "triggers"),
            fix="add at least one trigger",
        )
    seen: set[str] = set()
    for index, trigger in enumerate(triggers):
        kind = trigger.get("type")
        if trigger.get("useCachedMetrics") is True and kind in ("cpu", "memory", "cron"):
            raise ScaledObjectError(
                f'property "useCachedMetrics" is not supported for "{kind}" scaler',
                key_path=("spec", "triggers", index, "useCachedMetrics"),
                fix="remove useCachedMetrics from this trigger",
            )
        name = trigger.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                raise ScaledObjectError(
                    f'triggerName "{name}" is defined multiple times in the '
                    "ScaledObject/ScaledJob, but it must be unique",
                    key_path=("spec", "triggers", index, "name"),
                    fix="give every trigger a different name",
                )
            seen.add(name)


def scaled_object_warnings(spec: Mapping[str, object]) -> list[str]:
    """The admission webhook's warnings (verifyScaledObjects, KEDA >= 2.20): a set
    ``pollingInterval`` is not relevant when ``minReplicaCount > 0``, idle mode is off and no
    trigger uses cached metrics; a set ``cooldownPeriod`` when ``minReplicaCount > 0`` and
    idle mode is off."""
    warnings = []
    minimum = spec.get("minReplicaCount")
    minimum = minimum if isinstance(minimum, int) else 0
    idle_off = spec.get("idleReplicaCount") is None
    triggers = spec.get("triggers")
    cached = any(
        _mapping(t).get("useCachedMetrics") is True
        for t in (triggers if isinstance(triggers, list | tuple) else ())
    )
    if spec.get("pollingInterval") is not None and minimum > 0 and idle_off and not cached:
        warnings.append(POLLING_WARNING)
    if spec.get("cooldownPeriod") is not None and minimum > 0 and idle_off:
        warnings.append(COOLDOWN_WARNING)
    return warnings


def hpa_name(spec: Mapping[str, object], scaled_object_name: str) -> str:
    """getHPAName: ``advanced.horizontalPodAutoscalerConfig.name`` or ``keda-hpa-<name>``."""
    config = _mapping(_mapping(spec.get("advanced")).get("horizontalPodAutoscalerConfig"))
    name = config.get("name")
    return name if isinstance(name, str) and name else f"keda-hpa-{scaled_object_name}"


# --- the typed view ---------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerSpec:
    """One entry of ``spec.triggers``."""

    type: str
    """``type``: the scaler (``prometheus``, ``cpu``, ...)."""
    metadata: dict[str, str]
    """``metadata``: the scaler's settings, all strings."""
    name: str = ""
    """``name``: needed to use the trigger in a scalingModifiers formula."""
    metric_type: str = ""
    """``metricType``: AverageValue (default for external metrics), Value or Utilization."""
    use_cached_metrics: bool = False
    """``useCachedMetrics``: the HPA reads the value of the last poll instead of querying."""
    authentication_ref: str | None = None
    """``authenticationRef.name``: the TriggerAuthentication supplying auth parameters."""


@dataclass(frozen=True)
class FallbackSpec:
    """``spec.fallback``."""

    failure_threshold: int
    """``failureThreshold``: failures tolerated before the fallback applies (strictly more)."""
    replicas: int
    """``replicas``: the replica count the fallback asks for."""
    behavior: str = "static"
    """``behavior``: static, currentReplicas, currentReplicasIfHigher,
    currentReplicasIfLower or scalingModifiers."""

    def as_k8s(self) -> dict[str, object]:
        """The camelCase mapping the functions of this model take."""
        return {
            "failureThreshold": self.failure_threshold,
            "replicas": self.replicas,
            "behavior": self.behavior,
        }


@dataclass(frozen=True)
class ScalingModifiersSpec:
    """``spec.advanced.scalingModifiers``."""

    formula: str = ""
    """``formula``: an expr-lang expression over trigger names."""
    target: str = ""
    """``target``: the composite metric's HPA target, as a string."""
    activation_target: str = ""
    """``activationTarget``: the composite value above which the object is active (0)."""
    metric_type: str = ""
    """``metricType``: AverageValue (default) or Value."""


@dataclass(frozen=True)
class ScaledObjectSpec:
    """A ScaledObject ``spec`` that passed the CRD schema, with KEDA's defaults filled in.

    ``*_set`` fields record whether the user wrote a value, which the webhook's warnings
    and a few rules depend on.
    """

    scale_target_name: str
    """``scaleTargetRef.name``."""
    triggers: tuple[TriggerSpec, ...]
    """``triggers``, in order (the index names each external metric ``s<i>-<scaler>``)."""
    scale_target_kind: str = "Deployment"
    """``scaleTargetRef.kind`` (Deployment when unset)."""
    scale_target_api_version: str = "apps/v1"
    """``scaleTargetRef.apiVersion`` (apps/v1 when unset)."""
    polling_interval: int = DEFAULT_POLLING_INTERVAL
    """``pollingInterval`` in seconds (30)."""
    cooldown_period: int = DEFAULT_COOLDOWN_PERIOD
    """``cooldownPeriod`` in seconds (300); read only when scaling to 0 or to idle."""
    initial_cooldown_period: int = DEFAULT_INITIAL_COOLDOWN_PERIOD
    """``initialCooldownPeriod`` in seconds (0): delay after creation before the first
    scale to 0 when the object has never been active."""
    min_replica_count: int = 0
    """``minReplicaCount`` (0)."""
    max_replica_count: int = DEFAULT_HPA_MAX_REPLICAS
    """``maxReplicaCount`` (100)."""
    idle_replica_count: int | None = None
    """``idleReplicaCount``: the count while inactive, below the minimum (idle mode)."""
    fallback: FallbackSpec | None = None
    """``fallback``."""
    hpa_behavior: Mapping[str, object] | None = None
    """``advanced.horizontalPodAutoscalerConfig.behavior``, copied into the HPA verbatim."""
    hpa_name_override: str = ""
    """``advanced.horizontalPodAutoscalerConfig.name``."""
    restore_to_original_replica_count: bool = False
    """``advanced.restoreToOriginalReplicaCount``."""
    scaling_modifiers: ScalingModifiersSpec | None = None
    """``advanced.scalingModifiers`` when any of its fields is set."""
    polling_interval_set: bool = False
    cooldown_period_set: bool = False
    initial_cooldown_period_set: bool = False
    min_replica_count_set: bool = False
    max_replica_count_set: bool = False
    source: Mapping[str, object] = field(default_factory=dict, repr=False, compare=False)
    """The mapping this view was read from."""

    @property
    def hpa_min_replicas(self) -> int:
        """The generated HPA's ``minReplicas``."""
        return hpa_min_replicas(self.min_replica_count if self.min_replica_count_set else None)

    @property
    def hpa_max_replicas(self) -> int:
        """The generated HPA's ``maxReplicas``."""
        return self.max_replica_count

    @property
    def scales_to_zero_or_idle(self) -> bool:
        """Whether KEDA itself ever scales the target down (min 0 or idle mode), which is the
        only time ``cooldownPeriod`` is read."""
        return self.min_replica_count == 0 or self.idle_replica_count is not None

    @classmethod
    def from_k8s(cls, spec: Mapping[str, object]) -> ScaledObjectSpec:
        """Read a camelCase ``spec``, checking what the CRD schema and its CEL rule check
        (types, minimums, enums, required fields, ``minReplicaCount <= maxReplicaCount``).
        Raises ``ScaledObjectError`` naming the key. Webhook rules are in
        ``validate_scaled_object``."""
        if not isinstance(spec, Mapping):
            raise ScaledObjectError(
                "expected a mapping", key_path=("spec",), fix="write spec as a mapping"
            )
        reader = _SpecReader()
        target = reader.mapping(spec, "scaleTargetRef", required=True)
        target_name = reader.string(target, "name", path=("scaleTargetRef",), required=True)
        if not target_name:
            raise reader.error(
                ("scaleTargetRef", "name"), "must not be empty", "name the Deployment to scale"
            )
        triggers_raw = spec.get("triggers")
        if not isinstance(triggers_raw, list | tuple):
            raise reader.error(
                ("triggers",), "is required and must be a list", "add a triggers list"
            )
        if not triggers_raw:
            raise reader.error(
                ("triggers",), "must have at least 1 item", "add at least one trigger"
            )
        triggers = tuple(reader.trigger(item, i) for i, item in enumerate(triggers_raw))
        polling = reader.integer(spec, "pollingInterval", minimum=1)
        cooldown = reader.integer(spec, "cooldownPeriod", minimum=0)
        initial = reader.integer(spec, "initialCooldownPeriod", minimum=0)
        idle = reader.integer(spec, "idleReplicaCount", minimum=0)
        minimum = reader.integer(spec, "minReplicaCount", minimum=0)
        maximum = reader.integer(spec, "maxReplicaCount", minimum=1)
        if minimum is not None and minimum > (
            maximum if maximum is not None else DEFAULT_HPA_MAX_REPLICAS
        ):
            raise reader.error(
                ("minReplicaCount",),
                "minReplicaCount must be less than or equal to maxReplicaCount",
                "lower minReplicaCount or raise maxReplicaCount",
            )
        fallback = reader.fallback(spec.get("fallback"))
        advanced = reader.mapping(spec, "advanced")
        hpa_config = reader.mapping(advanced, "horizontalPodAutoscalerConfig", path=("advanced",))
        behavior = hpa_config.get("behavior")
        if behavior is not None and not isinstance(behavior, Mapping):
            raise reader.error(
                ("advanced", "horizontalPodAutoscalerConfig", "behavior"),
                "must be a mapping",
                "write an autoscaling/v2 behavior block",
            )
        modifiers = reader.modifiers(advanced)
        restore = advanced.get("restoreToOriginalReplicaCount", False)
        if not isinstance(restore, bool):
            raise reader.error(
                ("advanced", "restoreToOriginalReplicaCount"),
                "must be true or false",
                "use a boolean",
            )
        return cls(
            scale_target_name=target_name,
            scale_target_kind=reader.string(target, "kind", path=("scaleTargetRef",))
            or "Deployment",
            scale_target_api_version=reader.string(target, "apiVersion", path=("scaleTargetRef",))
            or "apps/v1",
            triggers=triggers,
            polling_interval=polling if polling is not None else DEFAULT_POLLING_INTERVAL,
            cooldown_period=cooldown if cooldown is not None else DEFAULT_COOLDOWN_PERIOD,
            initial_cooldown_period=initial
            if initial is not None
            else DEFAULT_INITIAL_COOLDOWN_PERIOD,
            min_replica_count=minimum if minimum is not None else 0,
            max_replica_count=maximum if maximum is not None else DEFAULT_HPA_MAX_REPLICAS,
            idle_replica_count=idle,
            fallback=fallback,
            hpa_behavior=copy.deepcopy(dict(behavior)) if isinstance(behavior, Mapping) else None,
            hpa_name_override=reader.string(
                hpa_config, "name", path=("advanced", "horizontalPodAutoscalerConfig")
            ),
            restore_to_original_replica_count=restore,
            scaling_modifiers=modifiers,
            polling_interval_set=polling is not None,
            cooldown_period_set=cooldown is not None,
            initial_cooldown_period_set=initial is not None,
            min_replica_count_set=minimum is not None,
            max_replica_count_set=maximum is not None,
            source=spec,
        )


@dataclass
class _SpecReader:
    """Reads ``spec``; every path it is given is relative to it."""

    def error(self, key: KeyPath, message: str, fix: str) -> ScaledObjectError:
        return ScaledObjectError(
            f"{format_key_path(key)} {message}", key_path=("spec", *key), fix=fix
        )

    def mapping(
        self, parent: Mapping[str, object], key: str, *, path: KeyPath = (), required: bool = False
    ) -> Mapping[str, object]:
        full: KeyPath = (*path, key)
        shown = format_key_path(full)
        value = parent.get(key)
        if value is None:
            if required:
                raise self.error(full, "is required", f"add {shown}")
            return {}
        if not isinstance(value, Mapping):
            raise self.error(full, "must be a mapping", f"write {shown} as a mapping")
        return value

    def string(
        self, parent: Mapping[str, object], key: str, *, path: KeyPath = (), required: bool = False
    ) -> str:
        full: KeyPath = (*path, key)
        shown = format_key_path(full)
        value = parent.get(key)
        if value is None:
            if required:
                raise self.error(full, "is required", f"add {shown}")
            return ""
        if not isinstance(value, str):
            raise self.error(full, "must be a string", f"quote the value of {shown}")
        return value

    def integer(
        self, parent: Mapping[str, object], key: str, *, minimum: int, path: KeyPath = ()
    ) -> int | None:
        full: KeyPath = (*path, key)
        shown = format_key_path(full)
        value = parent.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(
                full, f"must be an integer, got {value!r}", f"write {shown} as a whole number"
            )
        if value < minimum:
            raise self.error(
                full, f"must be at least {minimum}, got {value}", f"use {minimum} or more"
            )
        if value > _INT32_MAX:
            raise self.error(full, f"must fit an int32, got {value}", f"use at most {_INT32_MAX}")
        return value

    def trigger(self, item: object, index: int) -> TriggerSpec:
        path: KeyPath = ("triggers", index)
        if not isinstance(item, Mapping):
            raise self.error(path, "must be a mapping", "write the trigger as a mapping")
        kind = self.string(item, "type", path=path, required=True)
        if not kind:
            raise self.error(
                (*path, "type"), "must not be empty", "name the scaler, e.g. prometheus"
            )
        metadata = item.get("metadata")
        if not isinstance(metadata, Mapping):
            raise self.error(
                (*path, "metadata"), "is required and must be a mapping", "add metadata"
            )
        for key, value in metadata.items():
            if not isinstance(value, str):
                raise self.error(
                    (*path, "metadata", str(key)),
                    f"must be a string, got {value!r}",
                    f'quote it: {key}: "{value}"',
                )
        cached = item.get("useCachedMetrics", False)
        if not isinstance(cached, bool):
            raise self.error((*path, "useCachedMetrics"), "must be true or false", "use a boolean")
        auth = self.mapping(item, "authenticationRef", path=path)
        auth_name = self.string(auth, "name", path=(*path, "authenticationRef")) if auth else ""
        if auth and not auth_name:
            raise self.error(
                (*path, "authenticationRef", "name"),
                "is required",
                "name the TriggerAuthentication",
            )
        auth_kind = self.string(auth, "kind", path=(*path, "authenticationRef")) if auth else ""
        if auth_kind and auth_kind not in ("TriggerAuthentication", "ClusterTriggerAuthentication"):
            raise self.error(
                (*path, "authenticationRef", "kind"),
                f"must be TriggerAuthentication or ClusterTriggerAuthentication, got {auth_kind!r}",
                "fix the kind",
            )
        return TriggerSpec(
            type=kind,
            metadata={str(k): str(v) for k, v in metadata.items()},
            name=self.string(item, "name", path=path),
            metric_type=self.string(item, "metricType", path=path),
            use_cached_metrics=cached,
            authentication_ref=auth_name or None,
        )

    def fallback(self, value: object) -> FallbackSpec | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(("fallback",), "must be a mapping", "write fallback as a mapping")
        for key in ("failureThreshold", "replicas"):
            if value.get(key) is None:
                raise self.error(("fallback", key), "is required", f"add fallback.{key}")
        threshold = self.integer(value, "failureThreshold", minimum=0, path=("fallback",))
        replicas = self.integer(value, "replicas", minimum=0, path=("fallback",))
        behavior = self.string(value, "behavior", path=("fallback",)) or "static"
        if behavior not in FALLBACK_BEHAVIORS:
            raise self.error(
                ("fallback", "behavior"),
                f"must be one of {', '.join(FALLBACK_BEHAVIORS)}, got {behavior!r}",
                "pick a supported behavior",
            )
        assert threshold is not None
        assert replicas is not None
        return FallbackSpec(threshold, replicas, behavior)

    def modifiers(self, advanced: Mapping[str, object]) -> ScalingModifiersSpec | None:
        raw = self.mapping(advanced, "scalingModifiers", path=("advanced",))
        path: KeyPath = ("advanced", "scalingModifiers")
        fields = {
            key: self.string(raw, key, path=path)
            for key in ("formula", "target", "activationTarget", "metricType")
        }
        if fields["metricType"] not in ("", "AverageValue", "Value"):
            raise self.error(
                (*path, "metricType"),
                f"must be AverageValue or Value, got {fields['metricType']!r}",
                "use AverageValue or Value",
            )
        if not any(fields.values()):
            return None
        return ScalingModifiersSpec(
            formula=fields["formula"],
            target=fields["target"],
            activation_target=fields["activationTarget"],
            metric_type=fields["metricType"],
        )


def validate_scaled_object(spec: Mapping[str, object], *, name: str | None = None) -> list[str]:
    """The admission webhook, minus the checks that need the cluster: the CRD schema
    (``ScaledObjectSpec.from_k8s``), replica bounds, fallback, triggers, scalingModifiers,
    the cpu/memory-only scale-to-zero rule and, when ``name`` is given, the name-length
    rules. Returns the webhook's warnings; raises ``ScaledObjectError`` at the first
    rejection."""
    typed = ScaledObjectSpec.from_k8s(spec)
    check_replica_bounds(
        min_replica_count=spec.get("minReplicaCount"),  # type: ignore[arg-type]
        max_replica_count=spec.get("maxReplicaCount"),  # type: ignore[arg-type]
        idle_replica_count=typed.idle_replica_count,
    )
    triggers = [_mapping(t) for t in spec.get("triggers", [])]  # type: ignore[attr-defined]
    advanced = spec.get("advanced")
    check_fallback(
        fallback=typed.fallback.as_k8s() if typed.fallback else None,
        triggers=triggers,
        advanced=advanced if isinstance(advanced, Mapping) else None,
    )
    check_triggers(triggers)
    validate_scaling_modifiers(spec)
    if typed.min_replica_count == 0 and all(t.type in ("cpu", "memory") for t in typed.triggers):
        raise ScaledObjectError(
            "scaledobject has only cpu/memory triggers AND minReplica is 0 "
            "(scale to zero doesn't work in this case)",
            key_path=("spec", "minReplicaCount"),
            fix="set minReplicaCount to 1 or more, or add an external trigger",
        )
    if name is not None:
        if len(name) > _LABEL_VALUE_MAX:
            raise ScaledObjectError(
                f"scaledobject name {name!r} is {len(name)} characters long; must be no more "
                f"than {_LABEL_VALUE_MAX} characters because it is used as the "
                '"scaledobject.keda.sh/name" label value',
                key_path=("metadata", "name"),
                fix="shorten the ScaledObject's name",
            )
        generated = hpa_name(spec, name)
        if len(generated) > _LABEL_VALUE_MAX:
            raise ScaledObjectError(
                f"HPA name {generated!r} derived from scaledobject is {len(generated)} characters "
                f"long; must be no more than {_LABEL_VALUE_MAX} characters",
                key_path=("metadata", "name"),
                fix="set spec.advanced.horizontalPodAutoscalerConfig.name to a shorter name or "
                "shorten the scaledobject name",
            )
    return scaled_object_warnings(spec)


# --- the generated HPA ------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedMetric:
    """One entry of the generated HPA's ``spec.metrics``."""

    source: str
    """External, Resource or ContainerResource."""
    name: str
    """External: ``s<i>-prometheus`` or ``composite-metric``; Resource: cpu or memory."""
    target_type: str
    """AverageValue, Value or Utilization."""
    target: float
    """The target as the HPA reads it: a quantity rounded to milli-units (a percentage for
    Utilization)."""
    trigger_index: int | None = None
    """Index of the trigger in ``spec.triggers`` (None for the composite metric)."""
    container: str = ""
    """For ContainerResource: the container name."""


@dataclass(frozen=True)
class GeneratedHPA:
    """The HorizontalPodAutoscaler KEDA creates for a ScaledObject (newHPAForScaledObject),
    described with plain values so any HPA model can be built from it."""

    name: str
    """``metadata.name``: ``keda-hpa-<ScaledObject name>`` unless overridden."""
    min_replicas: int
    """``spec.minReplicas`` (never below 1)."""
    max_replicas: int
    """``spec.maxReplicas``."""
    metrics: tuple[GeneratedMetric, ...]
    """``spec.metrics``, sorted by source type as KEDA sorts them."""
    behavior: Mapping[str, object] | None
    """``spec.behavior``: the ScaledObject's, with ``selectPolicy: Disabled`` forced by the
    paused-scale-in/out annotations; None means the HPA's defaults."""
    triggers: tuple[PrometheusTrigger | None, ...] = ()
    """The parsed prometheus trigger for each entry of ``spec.triggers`` (None otherwise)."""


def _resource_metric(trigger: TriggerSpec, index: int) -> GeneratedMetric:
    """cpu/memory: parseResourceMetadata and GetMetricSpecForScaling (cpu_memory_scaler.go)."""
    where: KeyPath = ("spec", "triggers", index)
    if "type" in trigger.metadata:
        raise ScaledObjectError(
            "scaler info: The 'type' setting is DEPRECATED and is removed in v2.18 - Use "
            "'metricType' instead.",
            key_path=(*where, "metadata", "type"),
            fix="move the value to the trigger's metricType",
        )
    value = trigger.metadata.get("value", "").strip()
    if not value:
        raise ScaledObjectError(
            'missing required parameter "value" in [triggerMetadata]',
            key_path=(*where, "metadata", "value"),
            fix="set the target value",
        )
    if trigger.metric_type == "AverageValue":
        try:
            target = parse_quantity(value)
        except ValueError:
            raise ScaledObjectError(
                f"quantity {value!r} is not valid (KEDA panics on it)",
                key_path=(*where, "metadata", "value"),
                fix="write a Kubernetes quantity such as 500m or 1Gi",
            ) from None
    elif trigger.metric_type == "Utilization":
        try:
            target = float(parse_go_int(value, 32))
        except GoSyntaxError:
            raise ScaledObjectError(
                f"utilization {value!r} is not an integer",
                key_path=(*where, "metadata", "value"),
                fix="write a whole percentage such as 60",
            ) from None
    else:
        raise ScaledObjectError(
            f"unknown metric type: {trigger.metric_type}, allowed values are 'Utilization' or "
            "'AverageValue'",
            key_path=(*where, "metricType"),
            fix="set metricType: Utilization or AverageValue",
        )
    container = trigger.metadata.get("containerName", "").strip()
    return GeneratedMetric(
        source="ContainerResource" if container else "Resource",
        name=trigger.type,
        target_type=trigger.metric_type,
        target=target,
        trigger_index=index,
        container=container,
    )


def generated_hpa(
    spec: Mapping[str, object],
    *,
    name: str,
    annotations: Mapping[str, str] | None = None,
    auth_params: Sequence[Mapping[str, str] | None] | None = None,
) -> GeneratedHPA:
    """The HPA KEDA generates for the ScaledObject ``name`` with this ``spec``.

    Each ``prometheus`` trigger gives an External metric ``s<i>-prometheus`` whose target
    is its ``threshold`` (AverageValue unless the trigger's ``metricType`` says Value);
    ``cpu``/``memory`` triggers give Resource metrics. With scalingModifiers (and a target
    above 0) every External metric is replaced by one ``composite-metric``. Other trigger
    types are not modelled and raise ``ScaledObjectError``, as do invalid triggers
    (``TriggerError``). ``auth_params`` optionally gives each trigger's resolved auth
    parameters.
    """
    typed = ScaledObjectSpec.from_k8s(spec)
    if typed.scaling_modifiers is not None and typed.scaling_modifiers.formula:
        validate_scaling_modifiers(spec)
    metrics: list[GeneratedMetric] = []
    parsed: list[PrometheusTrigger | None] = []
    for index, trigger in enumerate(typed.triggers):
        if trigger.type in ("cpu", "memory"):
            metrics.append(_resource_metric(trigger, index))
            parsed.append(None)
            continue
        if trigger.type != "prometheus":
            raise ScaledObjectError(
                f"trigger type {trigger.type!r} is not modelled by gpuscale "
                "(prometheus, cpu and memory are)",
                key_path=("spec", "triggers", index, "type"),
                fix="use a prometheus trigger, or leave this ScaledObject out of the simulation",
            )
        params = (
            auth_params[index] if auth_params is not None and index < len(auth_params) else None
        )
        prom = parse_prometheus_trigger(
            trigger.metadata,
            params,
            trigger_index=index,
            key_path=("spec", "triggers", index, "metadata"),
        )
        try:
            target_type = metric_target_type(trigger.metric_type)
        except ValueError as exc:
            raise TriggerError(
                str(exc),
                key_path=("spec", "triggers", index, "metricType"),
                fix="use AverageValue or Value",
            ) from None
        metrics.append(
            GeneratedMetric(
                "External", prom.metric_name, target_type, metric_quantity(prom.threshold), index
            )
        )
        parsed.append(prom)
    metrics.sort(key=lambda metric: metric.source)
    modifiers = typed.scaling_modifiers
    if modifiers is not None:
        metric_type = modifiers.metric_type or "AverageValue"
        try:
            target = parse_go_float(modifiers.target)
        except GoSyntaxError:
            target = 0.0
        if target > 0.0:
            composite = GeneratedMetric(
                "External",
                COMPOSITE_METRIC_NAME,
                metric_type,
                go_float_to_int64(target * 1000) / 1000,
            )
            metrics = [m for m in metrics if m.source == "Resource"] + [composite]
    behavior = copy.deepcopy(dict(typed.hpa_behavior)) if typed.hpa_behavior is not None else None
    for annotation, direction in (
        (PAUSED_SCALE_IN_ANNOTATION, "scaleDown"),
        (PAUSED_SCALE_OUT_ANNOTATION, "scaleUp"),
    ):
        if bool_annotation(annotations, annotation):
            behavior = behavior if behavior is not None else {}
            rules = dict(_mapping(behavior.get(direction)))
            rules["selectPolicy"] = "Disabled"
            behavior[direction] = rules
    return GeneratedHPA(
        name=hpa_name(spec, name),
        min_replicas=typed.hpa_min_replicas,
        max_replicas=typed.hpa_max_replicas,
        metrics=tuple(metrics),
        behavior=behavior,
        triggers=tuple(parsed),
    )
