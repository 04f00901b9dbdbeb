"""Rules on a ScaledObject's settings and its relation to other autoscalers."""

from __future__ import annotations

import pytest

from gpuscale.lint import REGISTRY, Severity
from gpuscale.profile import Profile
from tests.unit.lint.conftest import line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object

ZERO_TO_N = "minReplicaCount: 0\n"


# --- cooldown-has-no-effect ------------------------------------------------------------


@pytest.mark.parametrize("cooldown", [30, 300])
def test_cooldown_fires_with_min_one_even_for_an_explicit_default(cooldown: int) -> None:
    text = scaled_object(spec=f"cooldownPeriod: {cooldown}\nminReplicaCount: 1\n")
    [finding] = only(lint_yaml(text), "cooldown-has-no-effect")
    assert finding.location.line == line_of(text, "cooldownPeriod:")
    assert "300 s" in finding.message
    assert f"stabilizationWindowSeconds: {cooldown}" in finding.fix


def test_cooldown_names_the_configured_window() -> None:
    spec = (
        "cooldownPeriod: 30\nminReplicaCount: 2\nadvanced:\n  horizontalPodAutoscalerConfig:\n"
        "    behavior:\n      scaleDown:\n        stabilizationWindowSeconds: 600\n"
    )
    [finding] = only(lint_yaml(scaled_object(spec=spec)), "cooldown-has-no-effect")
    assert "600 s window" in finding.message
    assert "stabilizationWindowSeconds: 600" in finding.why


@pytest.mark.parametrize(
    "spec",
    [
        "cooldownPeriod: 30\nminReplicaCount: 0\n",
        "cooldownPeriod: 30\n",
        "cooldownPeriod: 30\nminReplicaCount: 2\nidleReplicaCount: 0\n",
        "minReplicaCount: 1\n",
        "cooldownPeriod: 30\nminReplicaCount: ${MIN}\n",
    ],
    ids=["min-zero", "min-default-zero", "idle-mode", "no-cooldown", "templated-min"],
)
def test_cooldown_near_misses(spec: str) -> None:
    assert only(lint_yaml(scaled_object(spec=spec)), "cooldown-has-no-effect") == []


# --- polling-interval-has-no-effect -----------------------------------------------------


def test_polling_interval_with_min_one_is_info() -> None:
    text = scaled_object(spec="pollingInterval: 30\nminReplicaCount: 1\n")
    [finding] = only(lint_yaml(text), "polling-interval-has-no-effect")
    assert finding.severity is Severity.INFO
    assert finding.location.line == line_of(text, "pollingInterval:")


def test_polling_interval_why_names_each_schedule_once() -> None:
    # Reviewer's report: the why read "queried about every 15 s and every 30 s".
    text = scaled_object(spec="pollingInterval: 45\nminReplicaCount: 1\n")
    profile = make_profile(hpa={"sync_period": "20s"})
    [finding] = only(lint_yaml(text, profile=profile), "polling-interval-has-no-effect")
    assert "queried about every" not in finding.why
    assert "every 20 s for the HPA and every 45 s for KEDA's own loop" in finding.why
    assert "scaling reacts on the 20 s cycle" in finding.why


@pytest.mark.parametrize(
    ("spec", "trigger"),
    [
        ("pollingInterval: 30\nminReplicaCount: 0\n", ""),
        ("pollingInterval: 30\nminReplicaCount: 1\n", "useCachedMetrics: true\n"),
        ("minReplicaCount: 1\n", ""),
    ],
)
def test_polling_interval_near_misses(spec: str, trigger: str) -> None:
    text = scaled_object(spec=spec, trigger=trigger)
    assert only(lint_yaml(text), "polling-interval-has-no-effect") == []


# --- activation-above-threshold ---------------------------------------------------------


@pytest.mark.parametrize("activation", ["'80'", "'200'"])
def test_activation_at_or_above_threshold(activation: str) -> None:
    text = scaled_object(spec=ZERO_TO_N, metadata=f"activationThreshold: {activation}\n")
    [finding] = only(lint_yaml(text), "activation-above-threshold")
    assert finding.location.line == line_of(text, "activationThreshold:")
    assert 'activationThreshold: "40"' in finding.fix or "activationThreshold: 40" in finding.fix


def test_activation_arithmetic() -> None:
    text = scaled_object(spec=ZERO_TO_N, metadata="activationThreshold: '200'\n")
    [finding] = only(lint_yaml(text), "activation-above-threshold")
    assert "ceil(200/80) = 3" in finding.why


@pytest.mark.parametrize(
    ("spec", "activation"),
    [
        (ZERO_TO_N, "'40'"),
        ("minReplicaCount: 1\n", "'200'"),
        (ZERO_TO_N, "'${ACT}'"),
    ],
    ids=["below", "min-one-ignores-activation", "templated"],
)
def test_activation_near_misses(spec: str, activation: str) -> None:
    text = scaled_object(spec=spec, metadata=f"activationThreshold: {activation}\n")
    assert only(lint_yaml(text), "activation-above-threshold") == []


# --- null-values-ignored ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "severity"),
    [
        (ZERO_TO_N, Severity.WARNING),
        ("minReplicaCount: 1\n", Severity.INFO),
        ("minReplicaCount: 3\n", Severity.INFO),
        ("minReplicaCount: 0\nfallback:\n  failureThreshold: 3\n  replicas: 2\n", Severity.ERROR),
        ("minReplicaCount: 1\nfallback:\n  failureThreshold: 3\n  replicas: 2\n", Severity.ERROR),
        ("minReplicaCount: 2\nidleReplicaCount: 0\n", Severity.WARNING),
    ],
    ids=["min-zero", "min-one", "min-three", "fallback-at-zero", "fallback-at-one", "idle"],
)
def test_null_values_ignored_severity(spec: str, severity: Severity) -> None:
    text = scaled_object(spec=spec)
    [finding] = only(lint_yaml(text), "null-values-ignored")
    assert finding.severity is severity
    # On the trigger's metadata, where ignoreNullValues goes (the object's is the first).
    assert finding.location.line == line_of(text, "metadata:", 2)
    assert 'ignoreNullValues: "false"' in finding.fix
    if "fallback" in spec:
        assert "can never trigger" in finding.why


@pytest.mark.parametrize(
    ("query", "metadata"),
    [
        ('sum(x{app="web"})', "ignoreNullValues: 'false'\n"),
        ('sum(x{app="web"})', "ignoreNullValues: 'true'\n"),
        ('sum(x{app="web"}) or vector(0)', ""),
        ('sum(x{app="web"}) or absent(x{app="web"}) * 0', ""),
        ("'{{ .Values.query }}'", ""),
    ],
    ids=["false", "explicit-true", "or-vector", "absent", "templated"],
)
def test_null_values_near_misses(query: str, metadata: str) -> None:
    text = scaled_object(query, spec=ZERO_TO_N, metadata=metadata)
    assert only(lint_yaml(text), "null-values-ignored") == []


def test_null_values_silent_when_keda_cannot_read_the_trigger() -> None:
    # KEDA's parser refuses a templated threshold, so what it does with an empty result
    # is not decided: the rule stays silent (the query rules still run).
    text = scaled_object(spec=ZERO_TO_N, threshold="'${T}'")
    found = lint_yaml(text)
    assert only(found, "null-values-ignored") == []
    assert only(lint_yaml(scaled_object(spec=ZERO_TO_N)), "null-values-ignored")


def test_null_values_says_when_it_is_only_info() -> None:
    # A warning on nearly every Prometheus trigger gets the linter switched off: with
    # minReplicaCount >= 1 and no fallback the rule says the same at info, and why.
    explanation = " ".join(REGISTRY["null-values-ignored"].explanation.split())
    assert "a warning with `minReplicaCount: 0` or an `idleReplicaCount`" in explanation
    assert "an error with a `fallback`" in explanation
    assert "otherwise, with `minReplicaCount >= 1`, info" in explanation
    assert "`servicemonitor-namespace-mismatch`" in explanation
    [finding] = only(lint_yaml(scaled_object(spec="minReplicaCount: 1\n")), "null-values-ignored")
    assert finding.severity is Severity.INFO
    assert "silently scales down to minReplicaCount 1" in finding.why


def test_null_values_on_a_trigger_authenticated_elsewhere() -> None:
    # authModes with an authenticationRef: the token is in the TriggerAuthentication, so
    # KEDA's parser reads the trigger and the rule decides.
    text = scaled_object(
        spec=ZERO_TO_N, metadata="authModes: bearer\n", trigger="authenticationRef:\n  name: a\n"
    )
    assert only(lint_yaml(text), "null-values-ignored")
    without_ref = scaled_object(spec=ZERO_TO_N, metadata="authModes: bearer\n")
    assert only(lint_yaml(without_ref), "null-values-ignored") == []


# --- replica-bounds-invalid -------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("minReplicaCount: 4\nmaxReplicaCount: 2\n", "minReplicaCount:"),
        ("minReplicaCount: 150\n", "minReplicaCount:"),
        ("minReplicaCount: 2\nidleReplicaCount: 2\n", "idleReplicaCount:"),
        ("idleReplicaCount: 0\n", "idleReplicaCount:"),
    ],
    ids=["min-above-max", "min-above-default-max", "idle-equals-min", "idle-without-min"],
)
def test_replica_bounds_invalid(spec: str, key: str) -> None:
    text = scaled_object(spec=spec)
    [finding] = only(lint_yaml(text), "replica-bounds-invalid")
    assert finding.location.line == line_of(text, key)
    assert finding.message.startswith("KEDA rejects the replica bounds: ")


@pytest.mark.parametrize(
    "spec",
    [
        "minReplicaCount: 2\nmaxReplicaCount: 2\n",
        "minReplicaCount: 0\nidleReplicaCount: 0\n",
        "minReplicaCount: 2\nidleReplicaCount: 0\n",
    ],
    ids=["equal", "explicit-zero-min-counts-as-one", "idle-below-min"],
)
def test_replica_bounds_valid(spec: str) -> None:
    assert only(lint_yaml(scaled_object(spec=spec)), "replica-bounds-invalid") == []


# --- trigger metadata -------------------------------------------------------------------


def test_metadata_not_string() -> None:
    text = scaled_object(threshold="80", metadata="ignoreNullValues: false\n")
    found = only(lint_yaml(text), "trigger-metadata-not-string")
    assert [f.location.line for f in found] == [
        line_of(text, "threshold:"),
        line_of(text, "ignoreNullValues:"),
    ]
    assert 'threshold: "80"' in found[0].fix
    assert 'ignoreNullValues: "false"' in found[1].fix


def test_metadata_strings_are_fine() -> None:
    text = scaled_object(threshold="'80'", metadata="ignoreNullValues: 'false'\n")
    assert only(lint_yaml(text), "trigger-metadata-not-string") == []


def test_metricname_ignored() -> None:
    text = scaled_object(metadata="metricName: my_custom_gauge\n")
    [finding] = only(lint_yaml(text), "metricname-ignored")
    assert finding.severity is Severity.INFO
    assert finding.location.line == line_of(text, "metricName:")
    assert only(lint_yaml(scaled_object()), "metricname-ignored") == []


# --- prometheus-address-namespace -------------------------------------------------------


def _address(address: str) -> str:
    return scaled_object().replace("http://prometheus-operated.monitoring.svc:9090", address)


MONITORING = make_profile(prometheus={"namespace": "monitoring"})


def test_address_namespace_against_the_profile() -> None:
    text = _address("http://prometheus-operated.kube-system.svc.cluster.local:9090")
    profile = make_profile(prometheus={"namespace": "monitoring"})
    [finding] = only(lint_yaml(text, profile=profile), "prometheus-address-namespace")
    assert finding.location.line == line_of(text, "serverAddress:")
    assert "prometheus-operated.monitoring.svc.cluster.local:9090" in finding.fix


@pytest.mark.parametrize(
    ("address", "profile"),
    [
        ("http://prometheus-operated.kube-system.svc:9090", None),
        (
            "http://prometheus-operated.monitoring.svc:9090",
            MONITORING,
        ),
        ("http://prometheus.example.com:9090", MONITORING),
        ("http://${PROM}:9090", MONITORING),
        ("http://prometheus-operated.monitoring.svc:9090", Profile.default()),
    ],
    ids=["no-profile", "same-namespace", "external-host", "templated", "profile-default"],
)
def test_address_namespace_near_misses(address: str, profile: Profile | None) -> None:
    found = lint_yaml(_address(address), profile=profile)
    assert only(found, "prometheus-address-namespace") == []


# --- prometheus-in-kube-system ---------------------------------------------------------

KUBE_SYSTEM = "http://prometheus-operated.kube-system.svc.cluster.local:9090"


@pytest.mark.parametrize(
    "profile",
    [None, make_profile(prometheus={"namespace": "kube-system"})],
    ids=["no-profile", "profile-says-kube-system"],
)
def test_prometheus_in_kube_system(profile: Profile | None) -> None:
    text = _address(KUBE_SYSTEM)
    [finding] = only(lint_yaml(text, profile=profile), "prometheus-in-kube-system")
    assert finding.severity is Severity.WARNING
    assert finding.location.line == line_of(text, "serverAddress:")
    assert "prometheus-operated.monitoring.svc.cluster.local:9090" in finding.fix
    assert "-n monitoring" in finding.fix


@pytest.mark.parametrize(
    ("address", "profile"),
    [
        ("http://prometheus-operated.monitoring.svc:9090", None),
        ("http://kube-system.example.com:9090", None),
        ("http://prometheus-operated.${NS}.svc:9090", None),
        (KUBE_SYSTEM, MONITORING),
    ],
    ids=["own-namespace", "external-host", "templated", "profile-names-another"],
)
def test_prometheus_in_kube_system_near_misses(address: str, profile: Profile | None) -> None:
    found = lint_yaml(_address(address), profile=profile)
    assert only(found, "prometheus-in-kube-system") == []
    if profile is MONITORING:
        # The profile says where Prometheus is: the wrong address is the finding instead.
        assert len(only(found, "prometheus-address-namespace")) == 1


# --- scaledobject-target-missing --------------------------------------------------------


def test_target_typo_is_an_error() -> None:
    text = docs(deployment(name="web", gpu=None), scaled_object(target="wbe"))
    [finding] = only(lint_yaml(text), "scaledobject-target-missing")
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "    name: wbe")
    assert "name: web" in finding.fix


def test_target_in_another_explicit_namespace_is_an_error() -> None:
    text = docs(deployment(name="web", gpu=None, namespace="prod"), scaled_object(namespace="dev"))
    [finding] = only(lint_yaml(text), "scaledobject-target-missing")
    assert finding.severity is Severity.ERROR
    assert "namespace prod" in finding.message
    assert "namespace: prod" in finding.fix


def test_target_elsewhere_with_an_implicit_namespace_is_info() -> None:
    # `kubectl apply -n prod` would put the ScaledObject next to its Deployment.
    text = docs(deployment(name="web", gpu=None, namespace="prod"), scaled_object())
    [finding] = only(lint_yaml(text), "scaledobject-target-missing")
    assert finding.severity is Severity.INFO


def test_target_typo_mentions_a_same_named_workload_elsewhere() -> None:
    text = docs(
        deployment(name="api", gpu=None),
        deployment(name="web", gpu=None, namespace="prod"),
        scaled_object(),
    )
    [finding] = only(lint_yaml(text), "scaledobject-target-missing")
    assert finding.severity is Severity.ERROR
    assert "the set has api" in finding.message
    assert "is in namespace prod" in finding.message


@pytest.mark.parametrize("target", ["web", "<deployment_name>", "'${TARGET}'"])
def test_target_alone_or_placeholder_is_at_most_info(target: str) -> None:
    found = only(lint_yaml(scaled_object(target=target)), "scaledobject-target-missing")
    assert [f.severity for f in found] == [Severity.INFO]


def test_target_present_is_silent() -> None:
    text = docs(deployment(gpu=None), scaled_object())
    assert only(lint_yaml(text), "scaledobject-target-missing") == []


def test_target_found_through_the_namespace_default() -> None:
    text = docs(deployment(gpu=None), scaled_object(namespace="prod"))
    assert only(lint_yaml(text, namespace="prod"), "scaledobject-target-missing") == []


# --- hpa-and-scaledobject, scaledobjects-share-target ------------------------------------

HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web-cpu
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 1
  maxReplicas: 4
"""


def test_hpa_and_scaledobject() -> None:
    text = docs(deployment(gpu=None), HPA, scaled_object())
    [finding] = only(lint_yaml(text), "hpa-and-scaledobject")
    assert finding.object.kind == "ScaledObject"
    assert "web-cpu (manifest.yaml:" in finding.message
    assert finding.location.line == line_of(text, "    name: web", 2)


@pytest.mark.parametrize(
    "change",
    [
        ("name: web\n  minReplicas", "name: api\n  minReplicas"),
        (
            "  name: web-cpu\n",
            "  name: keda-hpa-web\n  ownerReferences:\n    - kind: ScaledObject\n      name: web\n",
        ),
        (
            "  name: web-cpu\n",
            "  name: web-cpu\n  annotations:\n    validations.keda.sh/hpa-ownership: 'false'\n",
        ),
    ],
    ids=["other-target", "owned-by-keda", "validation-off"],
)
def test_hpa_near_misses(change: tuple[str, str]) -> None:
    hpa = HPA.replace(*change)
    assert change[1] in hpa
    text = docs(deployment(gpu=None), hpa, scaled_object())
    assert only(lint_yaml(text), "hpa-and-scaledobject") == []


def test_hpa_in_another_namespace_is_fine() -> None:
    hpa = HPA.replace("  name: web-cpu\n", "  name: web-cpu\n  namespace: other\n")
    assert only(lint_yaml(docs(hpa, scaled_object())), "hpa-and-scaledobject") == []


def test_two_scaledobjects_one_target() -> None:
    text = docs(scaled_object(name="a"), scaled_object(name="b"))
    [finding] = only(lint_yaml(text), "scaledobjects-share-target")
    assert finding.object.name == "b"
    one = docs(scaled_object(name="a"), scaled_object(name="b", target="api"))
    assert only(lint_yaml(one), "scaledobjects-share-target") == []
