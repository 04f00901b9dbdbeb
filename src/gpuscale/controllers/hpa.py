"""An exact model of the Kubernetes autoscaling/v2 HorizontalPodAutoscaler controller.

Everything gpuscale predicts about replicas passes through here: KEDA hands its metric
to an HPA, and this module answers what that HPA does with it, sync by sync, in the same
integers upstream computes. It is pure (no clock, no I/O): time is a float of seconds
passed in as ``now``, and the caller supplies what the controller would have fetched.

Upstream followed (kubernetes/kubernetes master after the v1.36 branch, read from the
omerap12/kubernetes fork that tracks master; no tagged release of these files could be
read here, so none is cited and the model is not checked against one: docs/models/hpa.md,
"Which upstream, exactly", says what was tried and which parts may be fork-only):

- ``pkg/controller/podautoscaler/replica_calculator.go`` @ a769d5884497dc246960b38f3e5aae2cc30dd062
  (GetExternalMetricReplicas, GetExternalPerPodMetricReplicas, GetObjectMetricReplicas,
  GetObjectPerPodMetricReplicas, GetMetricReplicas/calcPlainMetricReplicas,
  getUsageRatioReplicaCount, getPerPodUsage);
- ``pkg/controller/podautoscaler/horizontal.go`` @ a769d588 (reconcileAutoscaler,
  computeReplicasForMetrics, normalizeDesiredReplicas[WithBehaviors], the stabilization
  and rate-limit functions, storeScaleEvent, tolerancesForHpa);
- ``pkg/controller/podautoscaler/metrics/client.go`` @ a769d588 and ``utilization.go``
  (samples read with MilliValue(); GetMetricUsageRatio);
- ``pkg/apis/autoscaling/v2/defaults.go`` @ 1adaa753 and ``validation/validation.go``
  (behavior defaults and limits);
- ``k8s.io/apimachinery/pkg/api/resource`` @ eed236ce (MilliValue rounding);
- tests ported from ``replica_calculator_test.go`` @ a769d588, ``horizontal_test.go`` @
  060da1681551ba64d82dad3c8d4246ab81760d4d and ``pkg/apis/autoscaling/v2/defaults_test.go``.

Feature gates as of v1.36: HPAConfigurableTolerance is beta and on
(``configurable_tolerance=True``); HPAScaleToZero is alpha and off by default, and on in
any cluster that admitted ``minReplicas: 0`` (``scale_to_zero=None`` infers it).

Not modelled: Resource and ContainerResource (CPU, memory) metrics, selector checks,
API failures when writing the scale, events. See ``docs/models/hpa.md``.
"""

from __future__ import annotations

from gpuscale.controllers._hpa.behavior import (
    calculate_scale_down_limit,
    calculate_scale_up_limit,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    get_longest_policy_period,
    get_replicas_change_per_period,
    legacy_scale_up_limit,
    mark_scale_events_outdated,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)
from gpuscale.controllers._hpa.compute_replicas import MetricInput
from gpuscale.controllers._hpa.controller import HorizontalPodAutoscaler
from gpuscale.controllers._hpa.quantity import approximate_float64
from gpuscale.controllers._hpa.replica_calculator import (
    ReplicaCalculationError,
    external_metric_replicas,
    external_per_pod_metric_replicas,
    object_metric_replicas,
    object_per_pod_metric_replicas,
    per_pod_usage,
    pods_metric_replicas,
)
from gpuscale.controllers._hpa.spec import (
    DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
    DEFAULT_SYNC_PERIOD_SECONDS,
    DEFAULT_TOLERANCE,
    Behavior,
    HPAControllerOptions,
    MetricTarget,
    Recommendation,
    ScaleEvent,
    ScalingPolicy,
    ScalingRules,
    Tolerance,
    generate_scale_down_rules,
    generate_scale_up_rules,
)
from gpuscale.controllers._hpa.status import Condition, MetricProposal, ReconcileResult
from gpuscale.kube import QuantityLike, milli_value

__all__ = [
    "DEFAULT_DOWNSCALE_STABILIZATION_SECONDS",
    "DEFAULT_SYNC_PERIOD_SECONDS",
    "DEFAULT_TOLERANCE",
    "Behavior",
    "Condition",
    "HPAControllerOptions",
    "HorizontalPodAutoscaler",
    "MetricInput",
    "MetricProposal",
    "MetricTarget",
    "QuantityLike",
    "Recommendation",
    "ReconcileResult",
    "ReplicaCalculationError",
    "ScaleEvent",
    "ScalingPolicy",
    "ScalingRules",
    "Tolerance",
    "approximate_float64",
    "calculate_scale_down_limit",
    "calculate_scale_up_limit",
    "convert_desired_replicas_with_behavior_rate",
    "convert_desired_replicas_with_rules",
    "external_metric_replicas",
    "external_per_pod_metric_replicas",
    "generate_scale_down_rules",
    "generate_scale_up_rules",
    "get_longest_policy_period",
    "get_replicas_change_per_period",
    "legacy_scale_up_limit",
    "mark_scale_events_outdated",
    "milli_value",
    "object_metric_replicas",
    "object_per_pod_metric_replicas",
    "per_pod_usage",
    "pods_metric_replicas",
    "stabilize_recommendation",
    "stabilize_recommendation_with_behaviors",
    "store_scale_event",
]
