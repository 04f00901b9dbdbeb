"""Name rules of the Kubernetes API server (k8s.io/apimachinery/pkg/util/validation:
IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label; apimachinery api/validation/path:
IsValidPathSegmentName), as :mod:`gpuscale.manifests.names` ports them."""

from __future__ import annotations

import pytest

from gpuscale.manifests.names import NameRule, name_problem, name_rule_for, suggest_name

# Cases from upstream's validation_test.go tables (TestIsDNS1123Label, TestIsDNS1035Label,
# TestIsDNS1123Subdomain) plus the length limits.
CASES: list[tuple[NameRule, str, bool]] = [
    ("dns1123-label", "a", True),
    ("dns1123-label", "1-2", True),
    ("dns1123-label", "a" * 63, True),
    ("dns1123-label", "a" * 64, False),
    ("dns1123-label", "A", False),
    ("dns1123-label", "a.b", False),
    ("dns1123-label", "-a", False),
    ("dns1123-label", "a_b", False),
    ("dns1035-label", "a-1", True),
    ("dns1035-label", "1app", False),
    ("dns1035-label", "a-", False),
    ("dns1035-label", "a" * 64, False),
    ("dns1123-subdomain", "a.b.c", True),
    ("dns1123-subdomain", "1.2.3", True),
    ("dns1123-subdomain", "a" * 253, True),
    ("dns1123-subdomain", "a" * 254, False),
    ("dns1123-subdomain", "a..b", False),
    ("dns1123-subdomain", "a.-b", False),
    ("dns1123-subdomain", "Web", False),
    ("path-segment", "system:controller:x", True),
    ("path-segment", "Any_Thing", True),
    ("path-segment", "..", False),
    ("path-segment", "a/b", False),
    ("path-segment", "a%b", False),
]


@pytest.mark.parametrize(("rule", "value", "ok"), CASES)
def test_name_problem(rule: NameRule, value: str, ok: bool) -> None:
    problem = name_problem(value, rule)
    assert (problem is None) == ok
    if problem is not None:
        assert problem.startswith("must be ")


@pytest.mark.parametrize(("rule", "value", "ok"), [c for c in CASES if not c[2]])
def test_suggestions_fit_the_rule(rule: NameRule, value: str, ok: bool) -> None:
    assert name_problem(suggest_name(value, rule), rule) is None


def test_suggestions_read_well() -> None:
    assert suggest_name("1app", "dns1035-label") == "app-1"
    assert suggest_name("Bad_NS", "dns1123-label") == "bad-ns"


@pytest.mark.parametrize(
    ("api_version", "kind", "rule"),
    [
        ("v1", "Service", "dns1035-label"),
        ("v1", "Namespace", "dns1123-label"),
        ("v1", "ConfigMap", "dns1123-subdomain"),
        ("apps/v1", "Deployment", "dns1123-subdomain"),
        ("keda.sh/v1alpha1", "ScaledObject", "dns1123-subdomain"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "path-segment"),
    ],
)
def test_rule_per_kind(api_version: str, kind: str, rule: NameRule) -> None:
    assert name_rule_for(api_version, kind) == rule
