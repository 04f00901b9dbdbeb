"""The Kubernetes and KEDA semantics lint relies on, and the fix-snippet emitter."""

from __future__ import annotations

import math
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpuscale.lint import Taint
from gpuscale.lint._k8s import is_gpu_resource, selector_matches, tolerates
from gpuscale.lint._keda import DEFAULTS, go_parse_bool, go_parse_float, scaled_object_view
from gpuscale.lint._yaml import scalar, snippet

# k8s.io/api core/v1 toleration_test.go, TestTolerationToleratesTaint (the six cases), plus
# the empty-effect rule of Toleration.ToleratesTaint.
TOLERATIONS = [
    (
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        Taint("foo", "", "NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        {"key": "", "operator": "Exists", "effect": "NoSchedule"},
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
        Taint("foo", "value2", "NoSchedule"),
        False,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        Taint("foo", "bar", "NoExecute"),
        False,
    ),
    ({"key": "foo", "operator": "Exists"}, Taint("foo", "", "NoExecute"), True),
    ({"key": "foo"}, Taint("foo", "", "NoSchedule"), True),
    ({"key": "foo"}, Taint("foo", "bar", "NoSchedule"), False),
]


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), TOLERATIONS)
def test_tolerates(toleration: dict[str, str], taint: Taint, tolerated: bool) -> None:
    assert tolerates(toleration, taint) is tolerated


LABELS = {"app": "web", "tier": "gpu"}


@pytest.mark.parametrize(
    ("selector", "result"),
    [
        ({}, True),
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "api"}}, False),
        ({"matchLabels": {"app": "web", "zone": "a"}}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu", "cpu"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, True),
        ({"matchLabels": {"app": "${APP}"}}, None),
        ({"matchLabels": {"app": "api", "x": "${X}"}}, False),
        ({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}, None),
    ],
)
def test_selector_matches(selector: dict[str, Any], result: bool | None) -> None:
    assert selector_matches(selector, LABELS) is result


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("amd.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("nvidia.com/mig-1g.10gb", True),
        ("gpu.intel.com/i915", True),
        ("cpu", False),
        ("ephemeral-storage", False),
    ],
)
def test_is_gpu_resource(name: str, gpu: bool) -> None:
    assert is_gpu_resource(name) is gpu


def test_scaled_object_defaults_follow_keda() -> None:
    view = scaled_object_view(
        {
            "spec": {
                "scaleTargetRef": {"name": "web"},
                "triggers": [
                    {"type": "prometheus", "metadata": {"query": "sum(x)", "threshold": "80"}}
                ],
            }
        }
    )
    assert view.min_replica_count == DEFAULTS["minReplicaCount"] == 0
    assert view.max_replica_count == DEFAULTS["maxReplicaCount"] == 100
    assert view.cooldown_period == DEFAULTS["cooldownPeriod"] == 300
    assert view.initial_cooldown_period == DEFAULTS["initialCooldownPeriod"] == 0
    assert view.polling_interval == DEFAULTS["pollingInterval"] == 30
    assert view.explicit == frozenset()
    assert view.target_kind == "Deployment"
    assert view.scales_to_zero is True
    [trigger] = view.triggers
    assert trigger.metric_type == "AverageValue"
    assert not trigger.metric_type_explicit
    assert trigger.prometheus is not None
    assert trigger.prometheus.ignore_null_values is True
    assert trigger.prometheus.activation_threshold == 0.0
    assert trigger.prometheus.threshold == 80.0


def test_scaled_object_explicit_and_undecidable_settings() -> None:
    view = scaled_object_view(
        {
            "spec": {
                "minReplicaCount": 2,
                "idleReplicaCount": 0,
                "cooldownPeriod": "${COOLDOWN}",
                "maxReplicaCount": True,
                "triggers": [
                    {
                        "type": "prometheus",
                        "metricType": "Value",
                        "metadata": {
                            "threshold": "${T}",
                            "ignoreNullValues": "False",
                            "activationThreshold": "x",
                        },
                    }
                ],
            }
        }
    )
    assert view.min_replica_count == 2
    assert view.idle_mode
    assert view.scales_to_zero is True
    assert view.cooldown_period is None
    assert view.max_replica_count is None
    assert view.explicit == {
        "minReplicaCount",
        "idleReplicaCount",
        "cooldownPeriod",
        "maxReplicaCount",
    }
    [trigger] = view.triggers
    assert trigger.metric_type == "Value"
    assert trigger.prometheus is not None
    assert trigger.prometheus.threshold is None
    assert trigger.prometheus.ignore_null_values is False
    assert trigger.prometheus.activation_threshold is None


def test_scaled_object_view_of_garbage() -> None:
    view = scaled_object_view({"spec": ["not", "a", "mapping"]})
    assert view.triggers == ()
    assert view.target_name is None


# Go's strconv.ParseFloat / ParseBool as KEDA's typed config applies them.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80", 80.0),
        ("0.5", 0.5),
        ("1e3", 1000.0),
        ("+2", 2.0),
        ("-1", -1.0),
        (" 80", None),
        ("80 ", None),
        ("1_000", None),
        ("", None),
        ("eighty", None),
        (80, None),
    ],
)
def test_go_parse_float(text: object, value: float | None) -> None:
    assert go_parse_float(text) == value


def test_go_parse_float_specials() -> None:
    assert go_parse_float("Inf") == math.inf
    nan = go_parse_float("NaN")
    assert nan is not None
    assert math.isnan(nan)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("t", True),
        ("1", True),
        ("false", False),
        ("F", False),
        ("0", False),
        ("yes", None),
        ("tRUE", None),
        (True, None),
        ([], None),
    ],
)
def test_go_parse_bool(text: object, value: bool | None) -> None:
    assert go_parse_bool(text) is value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("80", '"80"'),
        ("false", '"false"'),
        ("amd", "amd"),
        ("", '""'),
        ('sum(x{a="b"})', 'sum(x{a="b"})'),
        ("a: b", '"a: b"'),
        ("*", '"*"'),
        (80, "80"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_scalar(value: object, text: str) -> None:
    assert scalar(value) == text


def test_snippet_round_trips_through_yaml() -> None:
    value = {
        "spec": {
            "tolerations": [{"key": "amd.com/gpu", "operator": "Exists"}],
            "triggers": [
                {"type": "prometheus", "metadata": {"threshold": "80", "query": "sum(x)"}}
            ],
            "command": ["/app/server", "--port", "8080"],
            "empty": {},
        }
    }
    assert YAML(typ="safe").load(snippet(value)) == value
