"""Rules that say whether an object can exist at all: KEDA's verdict on a ScaledObject
(``scaledobject-invalid``), the schema (``schema-invalid``) and one object defined twice
(``duplicate-object``).

KEDA values accepted and refused follow the model's sources: ``strconv.ParseBool`` takes
``1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False`` (Go ``strconv/atob.go``), the
threshold is a JSON number (``encoding/json``), metricType is AverageValue or Value for
external metrics (``GetMetricTargetType``, kubernetes ``validateMetricTarget``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.controllers.keda import TriggerError, parse_prometheus_trigger
from gpuscale.inputs import read_manifests
from gpuscale.lint import REGISTRY, LintOptions, Severity, run_lint
from gpuscale.lint._keda import model_problems
from gpuscale.manifests import load_text
from tests.unit.lint.conftest import line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object, service

INVALID = "scaledobject-invalid"
SCHEMA = "schema-invalid"
DUPLICATE = "duplicate-object"


# --- scaledobject-invalid: trigger metadata ----------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "key", "words"),
    [
        ("activationThreshold: '-x'\n", "activationThreshold:", 'param "activationThreshold"'),
        ("ignoreNullValues: maybe\n", "ignoreNullValues:", 'parsing "maybe": invalid syntax'),
        ("unsafeSsl: 'yes'\n", "unsafeSsl:", 'parsing "yes": invalid syntax'),
        ("timeout: soon\n", "timeout:", 'unable to parse duration value "soon"'),
        ("customHeaders: 'a=b,c'\n", "customHeaders:", "expected format key=value"),
        ("authModes: bearer\n", "authModes:", "bearer token=<empty> is required"),
    ],
    ids=["activation", "ignore-null", "unsafe-ssl", "timeout", "headers", "auth-without-ref"],
)
def test_trigger_metadata_keda_refuses(metadata: str, key: str, words: str) -> None:
    text = scaled_object(metadata=metadata)
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, key)
    assert words in finding.message
    assert "never becomes Ready" in finding.why


def test_a_bad_threshold_is_reported_on_its_line_with_a_fix() -> None:
    text = scaled_object(threshold="abc")
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.location.line == line_of(text, "threshold:")
    assert 'unable to set param "threshold" value "abc"' in finding.message
    assert 'threshold: "80"' in finding.fix


def test_every_bad_key_gets_its_own_finding() -> None:
    text = scaled_object(threshold="abc", metadata="ignoreNullValues: maybe\nunsafeSsl: 'yes'\n")
    found = only(lint_yaml(text), INVALID)
    assert sorted(f.location.line for f in found) == [
        line_of(text, "threshold:"),
        line_of(text, "ignoreNullValues:"),
        line_of(text, "unsafeSsl:"),
    ]


def test_a_placeholder_hides_only_its_own_key() -> None:
    text = scaled_object(threshold="'${THRESHOLD}'", metadata="ignoreNullValues: maybe\n")
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.location.line == line_of(text, "ignoreNullValues:")


def test_a_missing_server_address_points_at_the_metadata() -> None:
    text = scaled_object().replace(
        "        serverAddress: http://prometheus-operated.monitoring.svc:9090\n", ""
    )
    [finding] = only(lint_yaml(text), INVALID)
    assert 'missing required parameter "serverAddress"' in finding.message
    assert finding.location.line == line_of(text, "metadata:", 2)


@pytest.mark.parametrize(
    ("metric_type", "words"),
    [
        ("Avg", 'target type "Avg" must be either Utilization, Value, or AverageValue'),
        ("Utilization", "'Utilization' metric type is unsupported for external metrics"),
        ("averagevalue", 'target type "averagevalue"'),
    ],
)
def test_metric_type_keda_or_the_hpa_refuses(metric_type: str, words: str) -> None:
    text = scaled_object(trigger=f"metricType: {metric_type}\n")
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.location.line == line_of(text, "metricType:")
    assert words in finding.message
    assert "metricType: AverageValue" in finding.fix


@pytest.mark.parametrize(
    ("metadata", "trigger", "threshold"),
    [
        ("activationThreshold: '0'\nignoreNullValues: 'true'\nunsafeSsl: 'false'\n", "", "'80'"),
        ("ignoreNullValues: F\nunsafeSsl: '1'\ntimeout: '1500'\n", "", "'80.5'"),
        ("ignoreNullValues: TRUE\ntimeout: 30s\ncustomHeaders: 'a=b, c=d'\n", "", "'1e2'"),
        ("", "metricType: Value\n", "'80'"),
        ("", "metricType: AverageValue\n", "'80'"),
        ("", "", "'${THRESHOLD}'"),
        ("ignoreNullValues: '{{ .Values.nulls }}'\n", "", "'80'"),
        ("", "metricType: $TYPE\n", "'80'"),
        ("authModes: bearer\n", "authenticationRef:\n  name: prom-auth\n", "'80'"),
        ("", "", "80"),
    ],
    ids=[
        "defaults-written",
        "go-bool-spellings",
        "more-spellings",
        "value",
        "average-value",
        "templated-threshold",
        "templated-bool",
        "templated-metric-type",
        "auth-from-trigger-authentication",
        "number-is-another-rules",
    ],
)
def test_trigger_near_misses(metadata: str, trigger: str, threshold: str) -> None:
    text = scaled_object(metadata=metadata, trigger=trigger, threshold=threshold)
    assert only(lint_yaml(text), INVALID) == []


def test_cpu_triggers_may_use_utilization() -> None:
    text = scaled_object(
        trigger="metricType: Value\n",
        spec="minReplicaCount: 1\n",
    ).replace(
        "  triggers:\n",
        "  triggers:\n    - type: cpu\n      metricType: Utilization\n"
        "      metadata:\n        value: '60'\n",
    )
    assert only(lint_yaml(text), INVALID) == []


# --- scaledobject-invalid: the spec --------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "key", "words"),
    [
        ('minReplicaCount: "1"\n', "minReplicaCount:", "minReplicaCount must be an integer"),
        ("pollingInterval: 0\n", "pollingInterval:", "must be at least 1, got 0"),
        (
            "fallback:\n  failureThreshold: 3\n  replicas: 2\n  behavior: sometimes\n",
            "behavior:",
            "must be one of static",
        ),
    ],
    ids=["quoted-integer", "below-minimum", "fallback-behavior"],
)
def test_spec_keda_refuses(spec: str, key: str, words: str) -> None:
    text = scaled_object(spec=spec)
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.location.line == line_of(text, key)
    assert words in finding.message
    assert "kubectl apply fails" in finding.why


def test_trigger_names_must_be_unique() -> None:
    text = scaled_object(trigger="name: load\n")
    text += (
        "    - type: prometheus\n      name: load\n      metadata:\n"
        "        serverAddress: http://p:9090\n        threshold: '1'\n        query: sum(y)\n"
    )
    [finding] = only(lint_yaml(text), INVALID)
    assert finding.location.line == line_of(text, "name: load", 2)
    assert 'triggerName "load" is defined multiple times' in finding.message


def test_the_quoted_count_is_the_schemas_when_schemas_are_checked() -> None:
    text = scaled_object(spec='minReplicaCount: "1"\n')
    found = lint_yaml(text, validate=True)
    line = line_of(text, "minReplicaCount:")
    assert [(f.rule, f.location.line) for f in found if f.location.line == line] == [(SCHEMA, line)]
    assert "remove the quotes: 1" in only(found, SCHEMA)[0].fix


def test_replica_bounds_are_reported_once() -> None:
    text = scaled_object(spec="minReplicaCount: 4\nmaxReplicaCount: 2\n")
    found = lint_yaml(text)
    assert [f.rule for f in found if f.location.line == line_of(text, "minReplicaCount:")] == [
        "replica-bounds-invalid"
    ]
    alone = lint_yaml(text, select=[INVALID])
    assert [f.location.line for f in alone] == [line_of(text, "minReplicaCount:")]


@pytest.mark.parametrize(
    "spec",
    [
        "minReplicaCount: 0\nmaxReplicaCount: 4\nidleReplicaCount: 0\n",
        "minReplicaCount: ${MIN}\nmaxReplicaCount: 4\n",
        "pollingInterval: '{{ .Values.polling }}'\n",
        "fallback:\n  failureThreshold: 3\n  replicas: 2\n",
    ],
    ids=["idle-zero-with-set-min", "templated-min", "templated-polling", "fallback"],
)
def test_spec_near_misses(spec: str) -> None:
    assert only(lint_yaml(scaled_object(spec=spec)), INVALID) == []


def test_model_problems_keep_keda_s_problems_apart() -> None:
    metadata = {"serverAddress": "http://p", "query": "x", "threshold": "a", "unsafeSsl": "y"}
    with pytest.raises(TriggerError) as error:
        parse_prometheus_trigger(metadata, key_path=("spec", "triggers", 1, "metadata"))
    assert [path for path, _ in error.value.problems] == [
        ("spec", "triggers", 1, "metadata", "threshold"),
        ("spec", "triggers", 1, "metadata", "unsafeSsl"),
    ]
    assert error.value.key_path == ("spec", "triggers", 1, "metadata", "threshold")
    assert error.value.where == "spec.triggers[1].metadata.threshold"
    [obj] = load_text(scaled_object(threshold="'${T}'", metadata="unsafeSsl: maybe\n"), "s.yaml")
    with pytest.raises(TriggerError) as error:
        parse_prometheus_trigger(
            obj.spec["triggers"][0]["metadata"], key_path=("spec", "triggers", 0, "metadata")
        )
    assert [p.key_path[-1] for p in model_problems(obj, error.value)] == ["unsafeSsl"]


# --- schema-invalid -----------------------------------------------------------------------


def test_a_wrong_type_is_an_error_on_its_line() -> None:
    text = deployment(gpu=None).replace("spec:\n  selector:", "spec:\n  replicas: two\n  selector:")
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "replicas:")
    assert finding.message == "spec.replicas: expected an integer, got 'two'"
    assert "kubectl apply" in finding.why


def test_an_unknown_field_names_the_close_one() -> None:
    text = deployment(gpu=None).replace("spec:\n  selector:", "spec:\n  replica: 2\n  selector:")
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.location.line == line_of(text, "replica:")
    assert "unknown field 'replica'" in finding.message
    assert "did you mean replicas?" in finding.fix


def test_a_missing_api_version() -> None:
    text = "kind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.location.line == 1
    assert "missing apiVersion" in finding.message


def test_a_kind_of_an_unknown_group_is_info() -> None:
    # a third-party CRD: --fail-on warning must not fail on ordinary custom objects
    text = "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: c\nspec: {}\n"
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.severity is Severity.INFO
    assert finding.location.line == line_of(text, "kind:")


def test_a_misspelt_built_in_kind_is_an_error_with_the_closest_kind() -> None:
    text = "apiVersion: apps/v1\nkind: Deploymnet\nmetadata:\n  name: web\nspec: {}\n"
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "kind:")
    assert "did you mean Deployment?" in finding.fix


def test_names_and_namespaces_are_checked_on_their_lines() -> None:
    text = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: 1app\n  namespace: Bad_NS\n"
        "spec:\n  ports: [{port: 80}]\n"
    )
    findings = only(lint_yaml(text, validate=True), SCHEMA)
    assert [(f.location.line, f.severity) for f in findings] == [
        (line_of(text, "name: 1app"), Severity.ERROR),
        (line_of(text, "namespace:"), Severity.ERROR),
    ]
    assert "DNS-1035" in findings[0].message
    assert "DNS-1123 label" in findings[1].message


@pytest.mark.parametrize(
    ("name", "namespace"),
    [("${NAME}", "${NS}"), ("{{ .Values.name }}", "{{ .Release.Namespace }}"), ("<name>", "<ns>")],
)
def test_templated_names_are_not_judged(name: str, namespace: str) -> None:
    text = (
        f"apiVersion: v1\nkind: Service\nmetadata:\n  name: '{name}'\n"
        f"  namespace: '{namespace}'\nspec:\n  ports: [{{port: 80}}]\n"
    )
    assert only(lint_yaml(text, validate=True), SCHEMA) == []


def test_the_profile_picks_the_kubernetes_version() -> None:
    text = (
        "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata:\n"
        "  name: h\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 3\n"
    )
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert "Kubernetes 1.33 has no HorizontalPodAutoscaler in autoscaling/v2beta2" in (
        finding.message
    )
    old = make_profile(cluster={"version": "1.25.16-do.0"})
    assert only(lint_yaml(text, validate=True, profile=old), SCHEMA) == []


@pytest.mark.parametrize(
    "text",
    [
        deployment(gpu=None),
        deployment(gpu=None).replace("spec:\n  selector:", "spec:\n  replicas: ${N}\n  selector:"),
        deployment(gpu=None).replace(
            "spec:\n  selector:", "spec:\n  '{{ .Values.key }}': 2\n  selector:"
        ),
        scaled_object(),
        service(),
    ],
    ids=["deployment", "templated-value", "templated-key", "scaled-object", "service"],
)
def test_schema_near_misses(text: str) -> None:
    assert only(lint_yaml(text, validate=True), SCHEMA) == []


def test_a_number_in_trigger_metadata_is_reported_once() -> None:
    text = scaled_object(threshold="80")
    found = [f.rule for f in lint_yaml(text, validate=True)]
    assert "trigger-metadata-not-string" in found
    assert SCHEMA not in found
    assert INVALID not in found


def test_schemas_are_checked_only_when_asked() -> None:
    text = deployment(gpu=None).replace("spec:\n  selector:", "spec:\n  replicas: two\n  selector:")
    assert only(lint_yaml(text), SCHEMA) == []
    report = run_lint(load_text(text, "d.yaml"), None, LintOptions(select=frozenset({SCHEMA})))
    assert report.exit_code == 2
    assert report.not_run == (
        (SCHEMA, "this run does not check schemas (LintOptions.validate is off)"),
    )


# --- duplicate-object ---------------------------------------------------------------------


def test_the_same_deployment_twice() -> None:
    text = docs(deployment(), service(), deployment())
    [finding] = only(lint_yaml(text), DUPLICATE)
    assert finding.severity is REGISTRY[DUPLICATE].severity is Severity.ERROR
    assert finding.location.line == line_of(text, "name: web", 3)
    assert f"manifest.yaml:{line_of(text, 'apiVersion: apps/v1')}" in finding.message


def test_an_object_without_a_namespace_lands_in_the_default_one() -> None:
    text = docs(deployment(namespace="prod"), deployment())
    assert only(lint_yaml(text), DUPLICATE) == []
    [finding] = only(lint_yaml(text, namespace="prod"), DUPLICATE)
    assert "Deployment prod/web" in finding.message


@pytest.mark.parametrize(
    "text",
    [
        docs(deployment(), service()),
        docs(deployment(namespace="a"), deployment(namespace="b")),
        docs(deployment(name="a"), deployment(name="b")),
        docs(deployment(name="${NAME}"), deployment(name="${NAME}")),
    ],
    ids=["other-kind", "other-namespace", "other-name", "templated-name"],
)
def test_duplicate_near_misses(text: str) -> None:
    assert only(lint_yaml(text), DUPLICATE) == []


def test_a_file_named_twice_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(deployment())
    objects = read_manifests([path, tmp_path])
    assert len(objects) == 2
    report = run_lint(objects, None, LintOptions(select=frozenset({DUPLICATE})))
    assert report.findings == ()


@pytest.mark.parametrize("amount", ["null", "[1]", "{a: 1}"])
def test_a_quantity_of_the_wrong_type_is_the_schemas_not_a_crash(amount: str) -> None:
    # gpuscale.manifests.validate used to raise AttributeError on these (found by the
    # property test in test_robustness.py).
    text = deployment(resources=f"resources:\n  requests:\n    amd.com/gpu: {amount}\n")
    [finding] = only(lint_yaml(text, validate=True), SCHEMA)
    assert finding.location.line == line_of(text, "amd.com/gpu:")
