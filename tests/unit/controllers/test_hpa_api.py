"""The public surface of gpuscale.controllers.hpa: the contract names (its ``__all__`` is
checked with every module's by tests/unit/test_exported_members.py).

The conformance contract (../shared/conformance/CONTRACT.md) calls these names with these
keywords; a rename here would break the conformance runner before any vector ran.
"""

from __future__ import annotations

import inspect

import pytest

from gpuscale.controllers import hpa

CONTRACT_KEYWORDS = {
    "external_metric_replicas": {"current_replicas", "ready_pods", "tolerance"},
    "external_per_pod_metric_replicas": {"status_replicas", "tolerance"},
    "object_metric_replicas": {"current_replicas", "ready_pods", "tolerance"},
    "object_per_pod_metric_replicas": {"status_replicas", "tolerance"},
    "pods_metric_replicas": {"current_replicas", "missing_pods", "tolerance"},
    "stabilize_recommendation_with_behaviors": {
        "desired",
        "current_replicas",
        "behavior",
        "recommendations",
        "now",
    },
    "convert_desired_replicas_with_behavior_rate": {
        "desired",
        "current_replicas",
        "min_replicas",
        "max_replicas",
        "behavior",
        "scale_up_events",
        "scale_down_events",
        "now",
    },
    "stabilize_recommendation": {"desired", "recommendations", "now", "window_seconds"},
    "convert_desired_replicas_with_rules": {
        "desired",
        "current_replicas",
        "min_replicas",
        "max_replicas",
    },
    "calculate_scale_up_limit": {
        "current_replicas",
        "scale_up_events",
        "rules",
        "now",
        "scale_down_events",
    },
    "calculate_scale_down_limit": {
        "current_replicas",
        "scale_down_events",
        "rules",
        "now",
        "scale_up_events",
    },
    "HorizontalPodAutoscaler": {
        "min_replicas",
        "max_replicas",
        "metrics",
        "behavior",
        "tolerance",
        "downscale_stabilization_seconds",
        "recommendations",
    },
}


@pytest.mark.parametrize("name", sorted(CONTRACT_KEYWORDS))
def test_contract_keywords(name: str) -> None:
    parameters = inspect.signature(getattr(hpa, name)).parameters
    assert CONTRACT_KEYWORDS[name] <= set(parameters), name


def test_contract_types_take_the_contract_keywords() -> None:
    hpa.Tolerance(scale_down=0.1, scale_up=0.1)
    hpa.ScalingPolicy(type="Pods", value=4, period_seconds=15)
    hpa.ScalingRules(
        stabilization_window_seconds=None, select_policy=None, policies=None, tolerance=None
    )
    hpa.Behavior(scale_up=None, scale_down=None)
    hpa.MetricTarget(source="External", target_type="Value", target=1.0)
    reconcile = inspect.signature(hpa.HorizontalPodAutoscaler.reconcile).parameters
    assert {"now", "spec_replicas", "status_replicas", "ready_pods", "metric_values"} <= set(
        reconcile
    )


def test_from_k8s_none_gives_the_api_defaults() -> None:
    behavior = hpa.Behavior.from_k8s(None)
    assert behavior.scale_up == hpa.ScalingRules(
        stabilization_window_seconds=0,
        select_policy="Max",
        policies=(
            hpa.ScalingPolicy(type="Pods", value=4, period_seconds=15),
            hpa.ScalingPolicy(type="Percent", value=100, period_seconds=15),
        ),
    )
    assert behavior.scale_down == hpa.ScalingRules(
        stabilization_window_seconds=None,
        select_policy="Max",
        policies=(hpa.ScalingPolicy(type="Percent", value=100, period_seconds=15),),
    )
