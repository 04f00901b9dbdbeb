"""The Kubernetes and KEDA semantics lint relies on (through the typed views and the KEDA
model, with placeholders made undecidable), and the fix-snippet emitter."""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML

from gpuscale.errors import ManifestError
from gpuscale.kube import LabelSelector, Taint, Toleration
from gpuscale.lint._k8s import selects
from gpuscale.lint._keda import scaled_object_view
from gpuscale.lint._yaml import scalar, snippet
from gpuscale.manifests import load_text

# k8s.io/api core/v1 toleration_test.go, TestTolerationToleratesTaint (the six cases), plus
# the empty-effect rule of Toleration.ToleratesTaint.
TOLERATIONS = [
    (
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        Taint(key="foo", value="", effect="NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        Taint(key="foo", value="bar", effect="NoSchedule"),
        True,
    ),
    (
        {"key": "", "operator": "Exists", "effect": "NoSchedule"},
        Taint(key="foo", value="bar", effect="NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        Taint(key="foo", value="bar", effect="NoSchedule"),
        True,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
        Taint(key="foo", value="value2", effect="NoSchedule"),
        False,
    ),
    (
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        Taint(key="foo", value="bar", effect="NoExecute"),
        False,
    ),
    ({"key": "foo", "operator": "Exists"}, Taint(key="foo", value="", effect="NoExecute"), True),
    ({"key": "foo"}, Taint(key="foo", value="", effect="NoSchedule"), True),
    ({"key": "foo"}, Taint(key="foo", value="bar", effect="NoSchedule"), False),
]


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), TOLERATIONS)
def test_tolerates(toleration: dict[str, str], taint: Taint, tolerated: bool) -> None:
    assert Toleration(**toleration).tolerates(taint) is tolerated


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
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["<tier>"]}]}, None),
    ],
)
def test_selects(selector: dict[str, Any], result: bool | None) -> None:
    assert selects(LabelSelector.from_spec(selector), LABELS) is result


def test_selects_with_templated_labels() -> None:
    selector = LabelSelector.from_spec({"matchLabels": {"app": "web"}})
    assert selects(selector, {"app": "{{ .Values.app }}"}) is None
    assert selects(selector, {"app": "api", "x": "${X}"}) is False


def test_label_selectors_refuse_node_operators() -> None:
    # Gt/Lt belong to node affinity; the view refuses them in a label selector, as the API
    # server does, and lint then skips the object.
    with pytest.raises(ManifestError):
        LabelSelector.from_spec({"matchExpressions": [{"key": "a", "operator": "Gt"}]})


def _view(text: str) -> Any:
    (manifest,) = load_text("apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\n" + text, "s.yaml")
    return scaled_object_view(manifest)


def test_scaled_object_defaults_come_from_the_keda_model() -> None:
    view = _view(
        "spec:\n  scaleTargetRef: {name: web}\n  triggers:\n    - type: prometheus\n"
        "      metadata: {query: sum(x), threshold: '80', serverAddress: 'http://p:9090'}\n"
    )
    spec = view.spec
    assert spec is not None
    assert (spec.min_replica_count, spec.max_replica_count) == (0, 100)
    assert (spec.cooldown_period, spec.initial_cooldown_period, spec.polling_interval) == (
        300,
        0,
        30,
    )
    assert not spec.cooldown_period_set
    assert not spec.min_replica_count_set
    assert spec.scales_to_zero_or_idle
    assert view.target == ("Deployment", "web")
    [trigger] = view.triggers
    assert trigger.metric_type == "AverageValue"
    assert not trigger.metric_type_explicit
    assert trigger.query == "sum(x)"
    assert trigger.prometheus is not None
    assert trigger.prometheus.ignore_null_values is True
    assert trigger.prometheus.activation_threshold == 0.0
    assert trigger.prometheus.threshold == 80.0


def test_templated_settings_are_undecidable_but_the_query_is_read() -> None:
    view = _view(
        "spec:\n  scaleTargetRef: {name: web}\n  cooldownPeriod: ${COOLDOWN}\n  triggers:\n"
        "    - type: prometheus\n      metricType: Value\n"
        "      metadata: {query: sum(x), threshold: '${T}', serverAddress: 'http://p:9090'}\n"
    )
    assert view.spec is None
    assert view.target is None
    [trigger] = view.triggers
    assert trigger.metric_type == "Value"
    assert trigger.prometheus is None
    assert trigger.query == "sum(x)"


@pytest.mark.parametrize(
    ("metric_type", "expected"),
    [("AverageValue", "AverageValue"), ("Value", "Value"), ("Utilization", None), ("$T", None)],
)
def test_metric_type_through_the_keda_model(metric_type: str, expected: str | None) -> None:
    view = _view(f"spec:\n  triggers:\n    - type: prometheus\n      metricType: '{metric_type}'\n")
    assert view.triggers[0].metric_type == expected


def test_placeholder_target_name() -> None:
    view = _view(
        "spec:\n  scaleTargetRef: {name: <deployment_name>}\n  triggers:\n"
        "    - type: prometheus\n      metadata: {query: sum(x)}\n"
    )
    assert view.spec is not None
    assert view.target is None


def test_scaled_object_view_of_garbage() -> None:
    view = _view("spec: [not, a, mapping]\n")
    assert view.triggers == ()
    assert view.spec is None


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
