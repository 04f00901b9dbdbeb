"""An exact model of KEDA v2's ScaledObject semantics for ``prometheus`` triggers.

KEDA sits between Prometheus and the Kubernetes HPA: it parses each trigger, queries
Prometheus, decides whether the ScaledObject is active, scales the target between 0 and
the HPA's minimum itself, generates the HPA that scales above it, serves that HPA its
metric values, and substitutes fallback values when a trigger keeps failing. gpuscale's
simulator and linter need all of that to predict what a cluster will do, so this
module reproduces it function by function, pure (no clock, no I/O: time is a float
passed in as ``now``).

It follows kedacore/keda at commit 8b4f083ca8c8c2baf8477e322bd4d16ac4dfa09a
(``git describe`` v2.20.1-117-g8b4f083ca, main after v2.20.2), with expr-lang v1.17.8 for
formulas. The upstream files, each named again where it is ported:

- ``pkg/scalers/prometheus_scaler.go``, ``pkg/scalers/scaler.go``,
  ``pkg/scalers/scalersconfig/typed_config.go``,
  ``pkg/scalers/authentication/authentication_types.go``: trigger metadata, the
  Prometheus answer, metric values and targets (``_keda/prometheus.py``);
- ``pkg/scaling/executor/scale_scaledobjects.go``, ``scale_executor.go``: the polling
  tick (``_keda/executor.py``);
- ``pkg/fallback/fallback.go``: failure counting and fallback metrics
  (``_keda/fallback.py``);
- ``pkg/scaling/modifiers/formula.go`` and the webhook's formula validation, with the
  expr-lang subset in ``_keda/expr/`` (``_keda/modifiers.py``);
- ``apis/keda/v1alpha1/scaledobject_types.go``, ``scaledobject_webhook.go``,
  ``scaletriggers_types.go``, ``withtriggers_types.go``, the CRD, and
  ``controllers/keda/hpa.go``: defaults, admission, the generated HPA (``_keda/spec.py``);
- ``pkg/scaling/scale_handler.go`` and ``pkg/provider/provider.go``: activity aggregation
  and what the HPA reads (``_keda/scale_handler.py``);
- Go's ``strconv``, ``time``, ``encoding/json`` and ``math`` where KEDA's answers depend on
  them (``_keda/goparse.py``, and ``gpuscale._gomath`` for what the models share).

The conformance contract (``../shared/conformance/CONTRACT.md``) names the functions
checked against upstream's own test vectors; everything else here is what the simulator
and ``gpuscale lint`` build on. ``docs/models/keda.md`` lists what is and is not modelled.
"""

from __future__ import annotations

from gpuscale.controllers._keda.errors import (
    FallbackError,
    FormulaError,
    PrometheusQueryError,
    PrometheusQueryPanicError,
    ScaledObjectError,
    TriggerError,
)
from gpuscale.controllers._keda.executor import (
    DEFAULT_COOLDOWN_PERIOD,
    DEFAULT_INITIAL_COOLDOWN_PERIOD,
    FORCE_ACTIVATION_ANNOTATION,
    PAUSED_ANNOTATION,
    PAUSED_REPLICAS_ANNOTATION,
    PAUSED_SCALE_IN_ANNOTATION,
    PAUSED_SCALE_OUT_ANNOTATION,
    ScaleRequest,
    is_paused,
    paused_replica_count,
    request_scale,
)
from gpuscale.controllers._keda.fallback import (
    FALLBACK_BEHAVIORS,
    FallbackResult,
    fallback_exceeded_threshold,
    fallback_metric,
    has_valid_fallback,
    metrics_with_fallback,
)
from gpuscale.controllers._keda.modifiers import (
    COMPOSITE_METRIC_NAME,
    cast_to_float_if_necessary,
    composite_metric_value,
    evaluate_formula,
    is_using_modifiers,
    scaling_modifier_trigger_value,
    validate_scaling_modifiers,
)
from gpuscale.controllers._keda.prometheus import (
    PrometheusAuth,
    PrometheusTrigger,
    metric_quantity,
    metric_target_type,
    metrics_and_activity,
    parse_prometheus_response,
    parse_prometheus_trigger,
)
from gpuscale.controllers._keda.scale_handler import (
    HpaMetricRead,
    MetricsRecord,
    ScaledObjectState,
    TriggerState,
    hpa_metric_value,
    reads_scaler_live,
    scaled_object_state,
)
from gpuscale.controllers._keda.spec import (
    DEFAULT_HPA_MAX_REPLICAS,
    DEFAULT_HPA_MIN_REPLICAS,
    DEFAULT_POLLING_INTERVAL,
    FallbackSpec,
    GeneratedHPA,
    GeneratedMetric,
    ScaledObjectSpec,
    ScalingModifiersSpec,
    TriggerSpec,
    check_fallback,
    check_replica_bounds,
    check_triggers,
    generated_hpa,
    hpa_max_replicas,
    hpa_min_replicas,
    hpa_name,
    scaled_object_warnings,
    validate_scaled_object,
)

__all__ = [
    "COMPOSITE_METRIC_NAME",
    "DEFAULT_COOLDOWN_PERIOD",
    "DEFAULT_HPA_MAX_REPLICAS",
    "DEFAULT_HPA_MIN_REPLICAS",
    "DEFAULT_INITIAL_COOLDOWN_PERIOD",
    "DEFAULT_POLLING_INTERVAL",
    "FALLBACK_BEHAVIORS",
    "FORCE_ACTIVATION_ANNOTATION",
    "PAUSED_ANNOTATION",
    "PAUSED_REPLICAS_ANNOTATION",
    "PAUSED_SCALE_IN_ANNOTATION",
    "PAUSED_SCALE_OUT_ANNOTATION",
    "FallbackError",
    "FallbackResult",
    "FallbackSpec",
    "FormulaError",
    "GeneratedHPA",
    "GeneratedMetric",
    "HpaMetricRead",
    "MetricsRecord",
    "PrometheusAuth",
    "PrometheusQueryError",
    "PrometheusQueryPanicError",
    "PrometheusTrigger",
    "ScaleRequest",
    "ScaledObjectError",
    "ScaledObjectSpec",
    "ScaledObjectState",
    "ScalingModifiersSpec",
    "TriggerError",
    "TriggerSpec",
    "TriggerState",
    "cast_to_float_if_necessary",
    "check_fallback",
    "check_replica_bounds",
    "check_triggers",
    "composite_metric_value",
    "evaluate_formula",
    "fallback_exceeded_threshold",
    "fallback_metric",
    "generated_hpa",
    "has_valid_fallback",
    "hpa_max_replicas",
    "hpa_metric_value",
    "hpa_min_replicas",
    "hpa_name",
    "is_paused",
    "is_using_modifiers",
    "metric_quantity",
    "metric_target_type",
    "metrics_and_activity",
    "metrics_with_fallback",
    "parse_prometheus_response",
    "parse_prometheus_trigger",
    "paused_replica_count",
    "reads_scaler_live",
    "request_scale",
    "scaled_object_state",
    "scaled_object_warnings",
    "scaling_modifier_trigger_value",
    "validate_scaled_object",
    "validate_scaling_modifiers",
]
