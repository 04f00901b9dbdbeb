"""Label selectors and node affinity, table-driven.

Cases follow k8s.io/apimachinery/pkg/labels/selector_test.go (``TestRequirementMatches``-style
rows: operator, values, labels, expected) and the LabelSelector rules of
k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.errors import ManifestError
from gpuscale.kube import (
    LabelSelector,
    NodeSelectorTerm,
    Requirement,
    node_affinity_matches,
    selector_matches,
)

LABELS = {"app": "web", "tier": "front", "gpus": "4"}


@pytest.mark.parametrize(
    ("operator", "values", "expected"),
    [
        ("In", ("web", "api"), True),
        ("In", ("api",), False),
        ("NotIn", ("api",), True),
        ("NotIn", ("web",), False),
        ("Exists", (), True),
        ("DoesNotExist", (), False),
    ],
)
def test_requirement_on_a_present_key(
    operator: str, values: tuple[str, ...], expected: bool
) -> None:
    assert Requirement("app", operator, values).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("operator", "values", "expected"),
    [
        ("In", ("x",), False),
        ("NotIn", ("x",), True),  # an absent label is "not in" any set
        ("Exists", (), False),
        ("DoesNotExist", (), True),
        ("Gt", ("1",), False),
    ],
)
def test_requirement_on_an_absent_key(
    operator: str, values: tuple[str, ...], expected: bool
) -> None:
    assert Requirement("missing", operator, values).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, True),  # empty selector: everything
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "web", "tier": "back"}}, False),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
            },
            True,
        ),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}],
            },
            False,
        ),
        ({"matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}, True),
        (None, False),  # a missing selector selects nothing
    ],
)
def test_selector_matches(spec: Any, expected: bool) -> None:
    assert selector_matches(spec, LABELS) is expected


def test_non_string_label_values_compare_as_kubernetes_writes_them() -> None:
    selector = LabelSelector.from_spec({"matchLabels": {"enabled": True, "n": 4}})
    assert selector.matches({"enabled": "true", "n": "4"})
    assert LabelSelector.from_map({"app": "web"}).matches(LABELS)
    assert LabelSelector().is_empty


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("app=web", "must be a mapping"),
        ({"matchLabels": ["app"]}, "matchLabels must be a mapping"),
        ({"matchExpressions": {"key": "a"}}, "matchExpressions must be a list"),
        (
            {"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]},
            "unknown operator",
        ),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "needs at least one value"),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            "takes no values",
        ),
        ({"matchExpressions": [{"operator": "Exists"}]}, "needs a key"),
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            "unknown operator",
        ),
    ],
)
def test_malformed_selectors_are_rejected(spec: Any, words: str) -> None:
    with pytest.raises(ManifestError, match=words) as caught:
        LabelSelector.from_spec(spec, where="s.yaml:4")
    assert str(caught.value).startswith("s.yaml:4: ")


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ([], True),
        ([{"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["2"]}]}], True),
        ([{"matchExpressions": [{"key": "gpus", "operator": "Lt", "values": ["2"]}]}], False),
        (
            [
                {"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]},
                {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            ],
            True,  # terms are ORed
        ),
        (
            [
                {
                    "matchExpressions": [
                        {"key": "app", "operator": "In", "values": ["web"]},
                        {"key": "tier", "operator": "DoesNotExist"},
                    ]
                }
            ],
            False,  # expressions in a term are ANDed
        ),
        ([{"matchExpressions": []}], False),  # an empty term matches no node
    ],
)
def test_node_affinity(terms: list[dict[str, Any]], expected: bool) -> None:
    parsed = tuple(NodeSelectorTerm.from_spec(term) for term in terms)
    assert node_affinity_matches(parsed, LABELS) is expected


def test_gt_needs_one_integer() -> None:
    with pytest.raises(ManifestError, match="exactly one integer"):
        NodeSelectorTerm.from_spec(
            {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["many"]}]}
        )


@pytest.mark.parametrize(
    ("requirement", "labels", "expected"),
    [
        # selector.go Requirement.Matches: an operator it does not know matches nothing
        (Requirement("zone", "in", ("a",)), {"zone": "a"}, False),
        (Requirement("gpus", "Ge", ("4",)), {"gpus": "8"}, False),
        # Gt/Lt: exactly one value, both sides int64 (strconv.ParseInt), else no match
        (Requirement("gpus", "Gt", ()), {"gpus": "8"}, False),
        (Requirement("gpus", "Gt", ("4", "5")), {"gpus": "8"}, False),
        (Requirement("gpus", "Gt", ("4",)), {"gpus": "1_0"}, False),
        (Requirement("gpus", "Gt", ("4",)), {"gpus": " 8"}, False),
        (Requirement("gpus", "Gt", ("4",)), {"gpus": str(2**63)}, False),
        (Requirement("gpus", "Lt", ("-1",)), {"gpus": "-2"}, True),
        (Requirement("gpus", "Gt", ("+4",)), {"gpus": "8"}, True),
    ],
)
def test_requirement_matches_as_upstream_on_odd_input(
    requirement: Requirement, labels: dict[str, str], expected: bool
) -> None:
    assert requirement.matches(labels) is expected
