"""The autoscaling/v2 pieces the HPA model takes as input, with the API server's defaults.

Upstream: ``k8s.io/api/autoscaling/v2/types.go`` (HPAScalingRules, HPAScalingPolicy,
HorizontalPodAutoscalerBehavior, MetricTarget), ``pkg/apis/autoscaling/v2/defaults.go``
(``GenerateHPAScaleUpRules``, ``GenerateHPAScaleDownRules``, ``copyHPAScalingRules``)
and ``pkg/apis/autoscaling/validation/validation.go`` (``validateScalingRules``,
``validateScalingPolicy``, ``validateMetricTarget``), kubernetes/kubernetes as of v1.36
(read from the omerap12/kubernetes fork at a769d588, see ``gpuscale.controllers.hpa``).

Everything here is a frozen value. ``Behavior.from_k8s`` is the edge where a manifest's
camelCase ``spec.behavior`` block comes in; it fills what is missing exactly as the API
server does and rejects, with the key path and the fix, what the API server would reject.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from gpuscale.controllers._hpa.quantity import approximate_float64
from gpuscale.errors import InputError, KeyPath
from gpuscale.kube import QuantityLike, milli_value

__all__ = [
    "DEFAULT_DOWNSCALE_STABILIZATION_SECONDS",
    "DEFAULT_SYNC_PERIOD_SECONDS",
    "DEFAULT_TOLERANCE",
    "DEFAULT_TOLERANCES",
    "MAX_PERIOD_SECONDS",
    "MAX_STABILIZATION_WINDOW_SECONDS",
    "Behavior",
    "HPAControllerOptions",
    "MetricSource",
    "MetricTarget",
    "PolicyType",
    "Recommendation",
    "ScaleEvent",
    "ScalingPolicy",
    "ScalingRules",
    "SelectPolicy",
    "TargetType",
    "Tolerance",
    "generate_scale_down_rules",
    "generate_scale_up_rules",
]

DEFAULT_TOLERANCE = 0.1
"""--horizontal-pod-autoscaler-tolerance (config/v1alpha1/defaults.go)."""
DEFAULT_SYNC_PERIOD_SECONDS = 15.0
"""--horizontal-pod-autoscaler-sync-period: one reconcile per HPA per period."""
DEFAULT_DOWNSCALE_STABILIZATION_SECONDS = 300.0
"""--horizontal-pod-autoscaler-downscale-stabilization."""
MAX_PERIOD_SECONDS = 1800
"""validation.go MaxPeriodSeconds: the longest policy period the API server accepts."""
MAX_STABILIZATION_WINDOW_SECONDS = 3600
"""validation.go MaxStabilizationWindowSeconds."""

PolicyType = Literal["Pods", "Percent"]
SelectPolicy = Literal["Max", "Min", "Disabled"]
MetricSource = Literal["External", "Object", "Pods"]
TargetType = Literal["Value", "AverageValue"]

_POLICY_TYPES = ("Percent", "Pods")
_SELECT_POLICIES = ("Disabled", "Max", "Min")
_SOURCES = ("External", "Object", "Pods")
_TARGET_TYPES = ("AverageValue", "Value")


class Recommendation(NamedTuple):
    """One stored, unstabilized recommendation (upstream ``timestampedRecommendation``)."""

    timestamp: float
    replicas: int


class ScaleEvent(NamedTuple):
    """One stored scale change (upstream ``timestampedScaleEvent``).

    ``replica_change`` is the absolute size of the change; ``outdated`` marks a slot that
    ``storeScaleEvent`` may reuse.
    """

    timestamp: float
    replica_change: int
    outdated: bool = False


def _check_number(
    value: object, where: str | None = None, *, integer: bool, key_path: KeyPath = ()
) -> None:
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        expected = "an integer" if integer else "a number"
        raise InputError(
            f"expected {expected}, got {value!r}",
            where=where,
            key_path=key_path,
            fix=f"set {expected}",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(
            f"expected a finite number, got {value!r}",
            where=where,
            key_path=key_path,
            fix="set a number",
        )


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far the usage ratio may stray from 1.0 before the HPA acts (upstream ``Tolerances``).

    A ratio r is "within tolerance" when ``1 - scale_down <= r <= 1 + scale_up``.
    """

    scale_down: float = DEFAULT_TOLERANCE
    """Fraction below target tolerated before scaling down (0.1 = 10 %)."""
    scale_up: float = DEFAULT_TOLERANCE
    """Fraction above target tolerated before scaling up."""

    def __post_init__(self) -> None:
        for name in ("scale_down", "scale_up"):
            value = getattr(self, name)
            _check_number(value, f"Tolerance.{name}", integer=False)
            if value < 0:
                raise InputError(
                    f"tolerance must be >= 0, got {value}",
                    where=f"Tolerance.{name}",
                    fix="use a fraction such as 0.1 for 10 %",
                )

    def is_within(self, ratio: float) -> bool:
        """Upstream ``Tolerances.isWithin``; NaN is never within."""
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """One rate limit (upstream ``HPAScalingPolicy``): at most ``value`` pods or % per period."""

    type: PolicyType
    """``Pods`` (an absolute number of pods) or ``Percent`` (of the count at the period start)."""
    value: int
    """How many pods, or what percentage, may be added or removed within one period."""
    period_seconds: int
    """The sliding window, in seconds, over which past changes count against ``value``."""

    def __post_init__(self) -> None:
        if self.type not in _POLICY_TYPES:
            raise InputError(
                f"policy type must be Pods or Percent, got {self.type!r}",
                where="ScalingPolicy.type",
                fix="use type Pods or Percent",
            )
        _check_number(self.value, "ScalingPolicy.value", integer=True)
        _check_number(self.period_seconds, "ScalingPolicy.period_seconds", integer=True)


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """Rules for one direction (upstream ``HPAScalingRules``); ``None`` means "not set".

    Functions that only stabilize read only the window. The controller fills unset
    fields the way the API server does (:func:`generate_scale_up_rules`,
    :func:`generate_scale_down_rules`).
    """

    stabilization_window_seconds: int | None = None
    """Look-back window over past recommendations; None = 0 s (up) or the controller flag (down)."""
    select_policy: SelectPolicy | None = None
    """``Max`` (the policy allowing the largest change), ``Min``, or ``Disabled``; None = Max."""
    policies: Sequence[ScalingPolicy] | None = None
    """Rate limits; None = the API defaults for the direction."""
    tolerance: float | None = None
    """Per-direction tolerance (HPAConfigurableTolerance); None = the controller's tolerance."""

    def __post_init__(self) -> None:
        if self.stabilization_window_seconds is not None:
            _check_number(
                self.stabilization_window_seconds,
                "ScalingRules.stabilization_window_seconds",
                integer=True,
            )
        if self.select_policy is not None and self.select_policy not in _SELECT_POLICIES:
            raise InputError(
                f"select policy must be Max, Min or Disabled, got {self.select_policy!r}",
                where="ScalingRules.select_policy",
                fix="use Max, Min or Disabled",
            )
        if self.policies is not None:
            object.__setattr__(self, "policies", tuple(self.policies))
        if self.tolerance is not None:
            _check_number(self.tolerance, "ScalingRules.tolerance", integer=False)


DEFAULT_TOLERANCES = Tolerance()
"""The controller's default tolerances: 10 % each way."""


@dataclass(frozen=True, slots=True)
class HPAControllerOptions:
    """The kube-controller-manager flags the HPA controller runs with (upstream
    ``HPAControllerConfiguration``, pkg/controller/podautoscaler/config/types.go): one
    value per cluster, shared by every HPA, so they are not part of the HPA object."""

    sync_period_s: float = DEFAULT_SYNC_PERIOD_SECONDS
    """``--horizontal-pod-autoscaler-sync-period``: one reconcile per HPA per period."""
    tolerance: Tolerance = DEFAULT_TOLERANCES
    """``--horizontal-pod-autoscaler-tolerance``, for both directions."""
    downscale_stabilization_s: float = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS
    """``--horizontal-pod-autoscaler-downscale-stabilization``: the scale-down window of an
    HPA without ``behavior``."""


_DEFAULT_SCALE_UP = ScalingRules(
    stabilization_window_seconds=0,
    select_policy="Max",
    policies=(
        ScalingPolicy(type="Pods", value=4, period_seconds=15),
        ScalingPolicy(type="Percent", value=100, period_seconds=15),
    ),
)
_DEFAULT_SCALE_DOWN = ScalingRules(
    stabilization_window_seconds=None,
    select_policy="Max",
    policies=(ScalingPolicy(type="Percent", value=100, period_seconds=15),),
)


def _copy_rules(source: ScalingRules | None, defaults: ScalingRules) -> ScalingRules:
    """copyHPAScalingRules: every field set in ``source`` replaces the default."""
    if source is None:
        return defaults
    return ScalingRules(
        stabilization_window_seconds=(
            source.stabilization_window_seconds
            if source.stabilization_window_seconds is not None
            else defaults.stabilization_window_seconds
        ),
        select_policy=source.select_policy or defaults.select_policy,
        policies=source.policies if source.policies is not None else defaults.policies,
        tolerance=source.tolerance if source.tolerance is not None else defaults.tolerance,
    )


def generate_scale_up_rules(rules: ScalingRules | None) -> ScalingRules:
    """GenerateHPAScaleUpRules: window 0, select Max, policies Pods 4/15 s and Percent 100/15 s.

    Given policies replace the default list as a whole.
    """
    return _copy_rules(rules, _DEFAULT_SCALE_UP)


def generate_scale_down_rules(rules: ScalingRules | None) -> ScalingRules:
    """GenerateHPAScaleDownRules: select Max, policy Percent 100/15 s; the window stays unset.

    An unset window is filled later from the controller flag
    (``maybeInitScaleDownStabilizationWindow``).
    """
    return _copy_rules(rules, _DEFAULT_SCALE_DOWN)


def _mapping(value: object, path: KeyPath) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(
            f"expected a mapping, got {type(value).__name__}",
            key_path=path,
            fix="write the block as YAML keys",
        )
    return value


def _policy_from_k8s(raw: object, path: KeyPath) -> ScalingPolicy:
    data = _mapping(raw, path)
    unknown = set(data) - {"type", "value", "periodSeconds"}
    if unknown:
        raise InputError(
            f"unknown key {sorted(unknown)[0]!r}",
            key_path=path,
            fix="a policy has only type, value and periodSeconds",
        )
    kind = data.get("type")
    if kind not in _POLICY_TYPES:
        raise InputError(
            f"unsupported policy type {kind!r}", key_path=(*path, "type"), fix="use Pods or Percent"
        )
    value = data.get("value")
    _check_number(value, key_path=(*path, "value"), integer=True)
    assert isinstance(value, int)
    if value <= 0:
        raise InputError(
            f"must be greater than zero, got {value}",
            key_path=(*path, "value"),
            fix="set value >= 1",
        )
    period = data.get("periodSeconds")
    _check_number(period, key_path=(*path, "periodSeconds"), integer=True)
    assert isinstance(period, int)
    if not 0 < period <= MAX_PERIOD_SECONDS:
        raise InputError(
            f"must be between 1 and {MAX_PERIOD_SECONDS}, got {period}",
            key_path=(*path, "periodSeconds"),
            fix=f"set periodSeconds between 1 and {MAX_PERIOD_SECONDS}",
        )
    return ScalingPolicy(type=kind, value=value, period_seconds=period)


def _rules_from_k8s(raw: object, path: KeyPath) -> ScalingRules:
    data = _mapping(raw, path)
    unknown = set(data) - {"stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"}
    if unknown:
        raise InputError(
            f"unknown key {sorted(unknown)[0]!r}",
            key_path=path,
            fix="use stabilizationWindowSeconds, selectPolicy, policies or tolerance",
        )
    window = data.get("stabilizationWindowSeconds")
    if window is not None:
        _check_number(window, key_path=(*path, "stabilizationWindowSeconds"), integer=True)
        assert isinstance(window, int)
        if not 0 <= window <= MAX_STABILIZATION_WINDOW_SECONDS:
            raise InputError(
                f"must be between 0 and {MAX_STABILIZATION_WINDOW_SECONDS}, got {window}",
                key_path=(*path, "stabilizationWindowSeconds"),
                fix=f"set a window between 0 and {MAX_STABILIZATION_WINDOW_SECONDS} seconds",
            )
    select = data.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        raise InputError(
            f"unsupported selectPolicy {select!r}",
            key_path=(*path, "selectPolicy"),
            fix="use Max, Min or Disabled",
        )
    policies: tuple[ScalingPolicy, ...] | None = None
    if data.get("policies") is not None:
        raw_policies = data["policies"]
        if not isinstance(raw_policies, Sequence) or isinstance(raw_policies, str | bytes):
            raise InputError(
                "expected a list of policies", key_path=(*path, "policies"), fix="write a YAML list"
            )
        if not raw_policies:
            raise InputError(
                "must specify at least one Policy",
                key_path=(*path, "policies"),
                fix="add a policy or leave policies out to get the defaults",
            )
        policies = tuple(
            _policy_from_k8s(item, (*path, "policies", index))
            for index, item in enumerate(raw_policies)
        )
    tolerance: float | None = None
    if data.get("tolerance") is not None:
        raw_tolerance = data["tolerance"]
        try:
            tolerance = approximate_float64(raw_tolerance)
        except InputError as error:
            raise InputError(
                error.message, key_path=(*path, "tolerance"), fix="write a quantity such as 0.05"
            ) from None
        if tolerance < 0:
            raise InputError(
                f"must be greater than or equal to zero, got {raw_tolerance}",
                key_path=(*path, "tolerance"),
                fix="write a fraction such as 0.05",
            )
    return ScalingRules(
        stabilization_window_seconds=window,
        select_policy=select,
        policies=policies,
        tolerance=tolerance,
    )


@dataclass(frozen=True, slots=True)
class Behavior:
    """``spec.behavior`` (upstream ``HorizontalPodAutoscalerBehavior``).

    Build it from a manifest with :meth:`from_k8s`, which fills defaults like the API
    server. An HPA given ``behavior=None`` takes upstream's path without behavior
    (``normalizeDesiredReplicas``), which is not the same as the default behavior.
    """

    scale_up: ScalingRules | None = None
    """Rules for scaling up; None = the API defaults."""
    scale_down: ScalingRules | None = None
    """Rules for scaling down; None = the API defaults."""

    @classmethod
    def from_k8s(
        cls, data: Mapping[str, Any] | None, *, key_path: KeyPath = ("spec", "behavior")
    ) -> Behavior:
        """A camelCase ``behavior`` block, filled as SetDefaults_HorizontalPodAutoscalerBehavior.

        ``None`` gives the defaults for both directions; ``key_path`` is where the block
        is in its manifest. Raises ``InputError`` carrying the key path of anything the
        API server's validation rejects.
        """
        if data is None:
            return cls(generate_scale_up_rules(None), generate_scale_down_rules(None))
        path = key_path
        block = _mapping(data, path)
        unknown = set(block) - {"scaleUp", "scaleDown"}
        if unknown:
            raise InputError(
                f"unknown key {sorted(unknown)[0]!r}", key_path=path, fix="use scaleUp or scaleDown"
            )
        up = (
            None
            if block.get("scaleUp") is None
            else _rules_from_k8s(block["scaleUp"], (*path, "scaleUp"))
        )
        down = (
            None
            if block.get("scaleDown") is None
            else _rules_from_k8s(block["scaleDown"], (*path, "scaleDown"))
        )
        return cls(generate_scale_up_rules(up), generate_scale_down_rules(down))


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """One entry of ``spec.metrics`` that the model handles: an External, Object or Pods metric.

    Resource and ContainerResource (CPU/memory utilization) metrics are not modelled.
    """

    source: MetricSource
    """``External``, ``Object`` or ``Pods`` (the MetricSpec ``type``)."""
    target_type: TargetType
    """``Value`` (compare the total) or ``AverageValue`` (compare the total per replica)."""
    target: QuantityLike
    """Target in plain units or as a quantity string such as ``"500m"`` (read with MilliValue())."""
    name: str = ""
    """Metric name, used only in reasons and messages."""
    described_kind: str = ""
    """For Object metrics, the kind of the described object (used in messages)."""
    target_milli: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.source not in _SOURCES:
            raise InputError(
                f"metric source must be External, Object or Pods, got {self.source!r}",
                where="MetricTarget.source",
                fix="Resource and ContainerResource metrics are not modelled; use External, "
                "Object or Pods",
            )
        if self.target_type not in _TARGET_TYPES:
            raise InputError(
                f"target type must be Value or AverageValue, got {self.target_type!r}",
                where="MetricTarget.target_type",
                fix="use Value or AverageValue",
            )
        if self.source == "Pods" and self.target_type != "AverageValue":
            raise InputError(
                "a Pods metric supports only an AverageValue target",
                where="MetricTarget.target_type",
                fix="use target_type='AverageValue'",
            )
        try:
            milli = milli_value(self.target)
        except InputError as error:
            raise InputError(error.message, where="MetricTarget.target", fix=error.fix) from None
        if milli <= 0:
            raise InputError(
                f"must be positive, got {self.target!r}",
                where="MetricTarget.target",
                fix="set a target above zero",
            )
        object.__setattr__(self, "target_milli", milli)

    @property
    def label(self) -> str:
        """How upstream names the metric in reasons, e.g. ``external metric qps``.

        Object metrics with an AverageValue target are called "external metric" upstream too
        (``computeStatusForObjectMetric``); the selector upstream appends is left out.
        """
        name = self.name or "<unnamed>"
        if self.source == "External":
            return f"external metric {name}"
        if self.source == "Pods":
            return f"pods metric {name}"
        if self.target_type == "AverageValue":
            return f"external metric {name}"
        return f"{self.described_kind or 'Object'} metric {name}"
