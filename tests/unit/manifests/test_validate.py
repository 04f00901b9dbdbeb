"""Schema validation: each class of problem names file:line, the key path, what was
expected and the fix; core kinds use the Kubernetes schemas, CRD kinds their CRD schemas."""

from __future__ import annotations

import textwrap

import pytest

from gpuscale.errors import ManifestError
from gpuscale.manifests import (
    CRD_SCHEMAS,
    ValidationProblem,
    kube_versions,
    load_text,
    validate,
    validate_or_raise,
)

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: app}}
  template:
    metadata:
      labels: {{app: app}}
    spec:
      containers:
        - name: app
          image: example/app:1
{extra}"""

SCALED_OBJECT = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: app
spec:
  scaleTargetRef:
    name: app
  minReplicaCount: 1
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus:9090
        query: sum(x)
        threshold: '80'
{extra}"""


def _problems(text: str) -> list[ValidationProblem]:
    return validate(load_text(text, "m.yaml"))


def test_valid_objects_have_no_problems() -> None:
    assert _problems(DEPLOYMENT.format(replicas=2, extra="")) == []
    assert _problems(SCALED_OBJECT.format(extra="")) == []


@pytest.mark.parametrize(
    ("text", "line", "path", "message", "fix"),
    [
        (
            DEPLOYMENT.format(replicas="'2'", extra=""),
            6,
            "spec.replicas",
            "expected an integer, got '2'",
            "remove the quotes: 2",
        ),
        (
            DEPLOYMENT.format(replicas=2, extra="          imagePullPolcy: Always\n"),
            16,
            "spec.template.spec.containers[0].imagePullPolcy",
            "unknown field 'imagePullPolcy'",
            "did you mean imagePullPolicy?",
        ),
        (
            DEPLOYMENT.format(replicas=2, extra="          resources: {limits: {cpu: lots}}\n"),
            16,
            "spec.template.spec.containers[0].resources.limits.cpu",
            "'lots' is not a resource quantity",
            "500m",
        ),
        (
            SCALED_OBJECT.format(
                extra=(
                    "  fallback:\n    failureThreshold: 3\n    replicas: 2\n    behavior: Static\n"
                )
            ),
            18,
            "spec.fallback.behavior",
            "expected one of static, currentReplicas",
            "did you mean static?",
        ),
        (
            DEPLOYMENT.format(replicas="${replicas}", extra=""),
            6,
            "spec.replicas",
            "expected an integer, got '${replicas}'",
            "render the template",
        ),
        (
            SCALED_OBJECT.format(extra="        ignoreNullValues: false\n"),
            15,
            "spec.triggers[0].metadata.ignoreNullValues",
            "expected a string, got false",
            "quote it: 'false'",
        ),
        (
            SCALED_OBJECT.format(extra="  cooldownPerod: 30\n"),
            15,
            "spec.cooldownPerod",
            "unknown field 'cooldownPerod'",
            "did you mean cooldownPeriod?",
        ),
        (
            SCALED_OBJECT.format(extra="  pollingInterval: 0\n"),
            15,
            "spec.pollingInterval",
            "minimum",
            "satisfy the schema",
        ),
        (
            SCALED_OBJECT.replace(
                "    name: app\n  minReplicaCount", "    kind: Deployment\n  minReplicaCount"
            ).format(extra=""),
            6,
            "spec.scaleTargetRef",
            "missing required field 'name'",
            "add name",
        ),
        (
            SCALED_OBJECT.replace(
                "metadata:\n  name: app", "metadata:\n  name: app\n  labels: {{a: 1}}"
            ).format(extra=""),
            5,
            "metadata.labels.a",
            "expected a string, got 1",
            "quote it",
        ),
    ],
)
def test_each_problem_names_line_path_expectation_and_fix(
    text: str, line: int, path: str, message: str, fix: str
) -> None:
    problems = _problems(text)
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.location.line == line
    assert problem.severity == "error"
    one_line = problem.one_line()
    assert "\n" not in one_line
    assert one_line.startswith(f"m.yaml:{line}: ")
    assert f": {path}: " in one_line
    assert message in problem.message
    assert fix in problem.fix


def test_service_monitor_schema_requires_a_selector() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: monitoring.coreos.com/v1
        kind: ServiceMonitor
        metadata:
          name: m
        spec:
          endpoints:
            - port: http
              honorLabels: "yes"
        """
    )
    problems = _problems(text)
    assert [(p.location.line, p.message) for p in problems] == [
        (5, "missing required field 'selector' in spec"),
        (8, "expected true or false, got 'yes'"),
    ]


def test_removed_api_versions_say_which_one_to_use() -> None:
    (problem,) = _problems(
        "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\n"
    )
    assert problem.severity == "error"
    assert problem.fix == "use apiVersion: apps/v1"


def test_unknown_kinds_are_only_a_warning() -> None:
    (problem,) = _problems("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    assert problem.severity == "warning"
    assert problem.location.line == 2
    validate_or_raise(load_text("apiVersion: example.com/v1\nkind: Widget\n", "w.yaml"))


def test_missing_kind_is_an_error() -> None:
    (problem,) = _problems("metadata: {name: x}\n")
    assert problem.message == "missing apiVersion and kind"


def test_strict_form_raises_a_one_line_manifest_error() -> None:
    manifests = load_text(DEPLOYMENT.format(replicas="'2'", extra=""), "d.yaml")
    with pytest.raises(ManifestError) as caught:
        validate_or_raise(manifests)
    assert caught.value.exit_code == 2
    text = str(caught.value)
    assert text.startswith("d.yaml:6: Deployment/app: spec.replicas: expected an integer")
    assert "(fix: remove the quotes: 2)" in text


def test_kube_versions_fall_back_to_the_nearest_older_schema() -> None:
    versions = kube_versions()
    assert versions
    assert "1.33" in versions
    manifests = load_text(DEPLOYMENT.format(replicas=1, extra=""), "d.yaml")
    assert validate(manifests, kube_version="99.0") == []
    assert validate(manifests, kube_version="1.0") == []
    with pytest.raises(ManifestError, match="not a Kubernetes version"):
        validate(manifests, kube_version="latest")


def test_every_crd_schema_is_packaged() -> None:
    for key in CRD_SCHEMAS:
        group_version, kind = key.rsplit("/", 1)
        text = f"apiVersion: {group_version}\nkind: {kind}\nmetadata: {{name: x}}\nspek: {{}}\n"
        problems = _problems(text)
        assert any(p.message == "unknown field 'spek'" for p in problems), (key, problems)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("  pollingInterval: '30'\n", "an integer"),
        ("  pollingIntervall: 30\n", "a known field"),
        ("  fallback: {failureThreshold: 3, replicas: 1, behavior: x}\n", "one of static"),
    ],
)
def test_problems_say_what_was_expected(extra: str, expected: str) -> None:
    (problem,) = _problems(SCALED_OBJECT.format(extra=extra))
    assert problem.expected.startswith(expected)


def test_wrong_api_version_expects_the_served_one() -> None:
    (problem,) = _problems(
        "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\n"
    )
    assert problem.expected == "apps/v1"
