"""Rules on ServiceMonitors."""

from __future__ import annotations

import pytest

from gpuscale.lint import REGISTRY, Severity
from gpuscale.profile import Profile
from tests.unit.lint.conftest import line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import docs, service, service_monitor

KUBE_SYSTEM = "namespaceSelector:\n  matchNames:\n    - kube-system\n"


# --- servicemonitor-namespace-mismatch --------------------------------------------------


def test_namespace_selector_misses_the_service() -> None:
    text = docs(service(), service_monitor(namespace_selector=KUBE_SYSTEM))
    [finding] = only(lint_yaml(text), "servicemonitor-namespace-mismatch")
    assert finding.location.line == line_of(text, "namespaceSelector:")
    assert "is in default" in finding.message
    assert "- default" in finding.fix


def test_namespace_default_comes_from_the_flag() -> None:
    text = docs(service(), service_monitor(namespace_selector=KUBE_SYSTEM))
    [finding] = only(lint_yaml(text, namespace="prod"), "servicemonitor-namespace-mismatch")
    assert "is in prod" in finding.message
    assert only(lint_yaml(text, namespace="kube-system"), "servicemonitor-namespace-mismatch") == []


def test_servicemonitor_without_selector_looks_in_its_own_namespace() -> None:
    text = docs(service(namespace="app"), service_monitor(namespace="monitoring"))
    [finding] = only(lint_yaml(text), "servicemonitor-namespace-mismatch")
    assert "its own namespace monitoring" in finding.message
    assert finding.location.line == line_of(text, "  selector:", 2)


@pytest.mark.parametrize(
    ("svc", "monitor"),
    [
        (service(namespace="app"), service_monitor(namespace="app")),
        (
            service(namespace="app"),
            service_monitor(namespace_selector="namespaceSelector:\n  any: true\n"),
        ),
        (
            service(),
            service_monitor(namespace_selector="namespaceSelector:\n  matchNames: [default, x]\n"),
        ),
        (
            service(),
            service_monitor(namespace_selector="namespaceSelector:\n  matchNames: ['${NS}']\n"),
        ),
        (service(name="other"), service_monitor(namespace_selector=KUBE_SYSTEM)),
    ],
    ids=["same-namespace", "any", "listed", "templated", "selects-another-service"],
)
def test_namespace_near_misses(svc: str, monitor: str) -> None:
    assert only(lint_yaml(docs(svc, monitor)), "servicemonitor-namespace-mismatch") == []


def test_namespace_rule_needs_services_in_the_set() -> None:
    text = service_monitor(namespace_selector=KUBE_SYSTEM)
    assert only(lint_yaml(text), "servicemonitor-namespace-mismatch") == []


# --- servicemonitor-selects-nothing -----------------------------------------------------


def test_selector_matches_no_service() -> None:
    text = docs(service(name="api"), service_monitor(app="web"))
    [finding] = only(lint_yaml(text), "servicemonitor-selects-nothing")
    assert finding.location.line == line_of(text, "  selector:", 2)
    assert "app: api" in finding.fix


def test_endpoint_port_not_a_port_name() -> None:
    text = docs(service(port_name="http"), service_monitor(port="metrics"))
    [finding] = only(lint_yaml(text), "servicemonitor-selects-nothing")
    assert finding.location.line == line_of(text, "- port: metrics")
    assert "named http" in finding.message
    assert "port: http" in finding.fix


def test_endpoint_port_on_an_unnamed_service_port() -> None:
    text = docs(service(port_name=None), service_monitor(port="metrics"))
    [finding] = only(lint_yaml(text), "servicemonitor-selects-nothing")
    assert "have no name" in finding.message
    assert "name: metrics" in finding.fix


@pytest.mark.parametrize(
    ("svc", "monitor"),
    [
        (service(), service_monitor()),
        (service(name="api", namespace="other"), service_monitor(app="web")),
        (service(port_name="http"), service_monitor(port="${PORT}")),
        (service(port_name="http"), service_monitor(endpoint="targetPort: 8080\n")),
    ],
    ids=["matches", "services-only-elsewhere", "templated-port", "target-port"],
)
def test_selects_nothing_near_misses(svc: str, monitor: str) -> None:
    assert only(lint_yaml(docs(svc, monitor)), "servicemonitor-selects-nothing") == []


# --- servicemonitor-not-selected --------------------------------------------------------


BY_LABEL = {"release": "kube-prometheus-stack", "selects_all_servicemonitors": False}
"""A profile's Prometheus installed with the chart's defaults: it selects by release label."""


def test_missing_release_label_is_an_info_without_a_profile() -> None:
    text = service_monitor(labels="team: ml")
    [finding] = only(lint_yaml(text), "servicemonitor-not-selected")
    assert finding.severity is Severity.INFO
    assert finding.location.line == line_of(text, "labels:")
    assert "release: prometheus" in finding.fix
    assert "team: ml" in finding.fix
    assert "selects_all_servicemonitors" in finding.why


def test_release_mismatch_is_an_error_when_the_profile_selects_by_label() -> None:
    text = service_monitor()
    profile = make_profile(prometheus=BY_LABEL)
    [finding] = only(lint_yaml(text, profile=profile), "servicemonitor-not-selected")
    assert finding.severity is Severity.ERROR
    assert finding.severity is REGISTRY["servicemonitor-not-selected"].severity
    assert finding.location.line == line_of(text, "release:")
    assert "release: kube-prometheus-stack" in finding.fix


def test_missing_label_is_an_error_when_the_profile_selects_by_label() -> None:
    text = service_monitor(labels="")
    profile = make_profile(prometheus={"selects_all_servicemonitors": False})
    [finding] = only(lint_yaml(text, profile=profile), "servicemonitor-not-selected")
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "metadata:")
    assert "release: prometheus" in finding.fix


@pytest.mark.parametrize(
    ("labels", "profile"),
    [
        ("release: prometheus", None),
        ("release: kps", make_profile(prometheus={"release": "kps"})),
        ("release: '{{ .Release.Name }}'", None),
        # gpuscale install's Prometheus (the profile's default) selects every ServiceMonitor.
        ("team: ml", make_profile()),
        ("release: other", make_profile(prometheus={"release": "kps"})),
        ("", make_profile(prometheus={"selects_all_servicemonitors": True})),
        (
            "release: kube-prometheus-stack",
            make_profile(prometheus=BY_LABEL),
        ),
    ],
    ids=[
        "default-release",
        "profile-release",
        "templated",
        "install-selects-all",
        "selects-all-any-label",
        "selects-all-explicit",
        "by-label-matching",
    ],
)
def test_not_selected_near_misses(labels: str, profile: Profile | None) -> None:
    found = lint_yaml(service_monitor(labels=labels), profile=profile)
    assert only(found, "servicemonitor-not-selected") == []


def test_the_install_plan_and_the_rule_read_the_same_field() -> None:
    from gpuscale.live.helm import install_spec_from_profile, prometheus_values

    for selects_all in (True, False):
        profile = make_profile(prometheus={"selects_all_servicemonitors": selects_all})
        spec = prometheus_values(install_spec_from_profile(profile))["prometheus"]
        opened = spec["prometheusSpec"].get("serviceMonitorSelectorNilUsesHelmValues") is False
        fired = only(
            lint_yaml(service_monitor(labels=""), profile=profile), "servicemonitor-not-selected"
        )
        assert opened is selects_all
        assert bool(fired) is not selects_all


# --- servicemonitor-honor-labels --------------------------------------------------------


def test_gpu_exporter_without_honor_labels() -> None:
    text = service_monitor(name="dcgm-exporter", app="nvidia-dcgm-exporter")
    [finding] = only(lint_yaml(text), "servicemonitor-honor-labels")
    assert finding.location.line == line_of(text, "- port:")
    assert "honorLabels: true" in finding.fix


def test_gpu_exporter_found_through_its_service() -> None:
    svc = service(name="amd-device-metrics-exporter")
    monitor = service_monitor(name="gpu", app="amd-device-metrics-exporter")
    assert len(only(lint_yaml(docs(svc, monitor)), "servicemonitor-honor-labels")) == 1


@pytest.mark.parametrize(
    "monitor",
    [
        service_monitor(name="dcgm-exporter", app="dcgm", endpoint="honorLabels: true\n"),
        service_monitor(name="web", app="web"),
    ],
    ids=["honored", "not-an-exporter"],
)
def test_honor_labels_near_misses(monitor: str) -> None:
    assert only(lint_yaml(monitor), "servicemonitor-honor-labels") == []
