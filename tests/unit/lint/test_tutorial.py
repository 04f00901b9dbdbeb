"""The tutorial's manifests: every mistake /work/shared/reference/platform.md §5 lists that
is a lint rule is reported on its line; the fixed manifests report nothing at warning or
above. The manifests are test data transcribed from the seed (see the file headers)."""

from __future__ import annotations

import dataclasses

import pytest

from gpuscale.lint import NodePool, ProfileValues, Severity, Taint
from tests.unit.lint.conftest import DATA, line_of, lint_yaml

TUTORIAL = (DATA / "tutorial" / "resources.yaml").read_text()
FIXED = (DATA / "tutorial" / "fixed.yaml").read_text()

PROFILE = ProfileValues(
    release_name="kube-prometheus-stack",
    prometheus_namespace="monitoring",
    scrape_interval=30,
    node_pools=(
        NodePool(
            name="gpu-mi300x",
            gpu_vendor="amd",
            gpus_per_node=1,
            labels={
                "doks.digitalocean.com/gpu-brand": "amd",
                "doks.digitalocean.com/node-pool": "gpu-mi300x",
            },
            taints=(Taint("amd.com/gpu", "", "NoSchedule"),),
            max_nodes=4,
        ),
        NodePool(name="general", max_nodes=3),
    ),
    default_startup_seconds=600,
)

# (platform.md §5 item, rule, the line the finding must be on)
WITHOUT_PROFILE = [
    ("1 double division", "query-divides-by-replicas", "query:"),
    ("2 denominator counts Pending pods", "replica-count-includes-pending", "query:"),
    ("2 denominator lacks a namespace filter", "query-unscoped", "query:"),
    ("3 empty metric silently 0", "null-values-ignored", "query:"),
    ("4 cooldownPeriod has no effect with min 1", "cooldown-has-no-effect", "cooldownPeriod:"),
    (
        "5a ServiceMonitor looks in kube-system",
        "servicemonitor-namespace-mismatch",
        "namespaceSelector:",
    ),
    ("7 nodeSelector key is a placeholder", "gpu-node-selector", "gpu-brand: amd"),
    ("8 CriticalAddonsOnly toleration", "unneeded-toleration", "CriticalAddonsOnly"),
    ("9 sum(my_custom_gauge{}) sums every series", "query-unscoped", "query:"),
    (
        "11 pollingInterval paces nothing with min 1",
        "polling-interval-has-no-effect",
        "pollingInterval:",
    ),
    ("Deployment compiles Go at start (step 5)", "compile-at-start", "- |"),
    ("metricName is ignored (trigger metadata)", "metricname-ignored", "metricName:"),
]
WITH_PROFILE = [
    ("5b serverAddress hard-codes kube-system", "prometheus-address-namespace", "serverAddress:"),
    (
        "6 release label must match the Helm release",
        "servicemonitor-not-selected",
        "release: prometheus",
    ),
    ("10 max 8 GPUs vs the pool's capacity", "max-exceeds-gpu-capacity", "maxReplicaCount:"),
]


@pytest.mark.parametrize(("item", "rule", "needle"), WITHOUT_PROFILE)
def test_tutorial_mistakes_without_a_profile(item: str, rule: str, needle: str) -> None:
    found = {(f.rule, f.location.line) for f in lint_yaml(TUTORIAL, file="resources.yaml")}
    assert (rule, line_of(TUTORIAL, needle)) in found, item


@pytest.mark.parametrize(("item", "rule", "needle"), WITHOUT_PROFILE + WITH_PROFILE)
def test_tutorial_mistakes_with_a_profile(item: str, rule: str, needle: str) -> None:
    found = {
        (f.rule, f.location.line)
        for f in lint_yaml(TUTORIAL, profile=PROFILE, file="resources.yaml")
    }
    assert (rule, line_of(TUTORIAL, needle)) in found, item


def test_tutorial_errors() -> None:
    errors = {f.rule for f in lint_yaml(TUTORIAL) if f.severity is Severity.ERROR}
    assert errors == {
        "query-divides-by-replicas",
        "servicemonitor-namespace-mismatch",
        "gpu-node-selector",
    }


def test_placeholder_variant_of_the_node_selector() -> None:
    text = TUTORIAL.replace("doks.linux-console.net/gpu-brand", "doks.<provider-domain>/gpu-brand")
    [finding] = [f for f in lint_yaml(text) if f.rule == "gpu-node-selector"]
    assert "placeholder" in finding.message
    assert "doks.digitalocean.com/gpu-brand: amd" in finding.fix


FIXED_PROFILE = dataclasses.replace(PROFILE, release_name="prometheus")


@pytest.mark.parametrize("profile", [None, FIXED_PROFILE], ids=["no-profile", "profile"])
def test_fixed_tutorial_is_clean_at_warning_and_above(profile: ProfileValues | None) -> None:
    found = lint_yaml(FIXED, profile=profile)
    assert [(f.rule, f.message) for f in found if f.severity is not Severity.INFO] == []
    assert found == []
