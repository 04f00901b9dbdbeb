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


def test_kinds_of_unknown_groups_are_only_info() -> None:
    (problem,) = _problems("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    assert problem.severity == "info"
    assert problem.location.line == 2
    validate_or_raise(load_text("apiVersion: example.com/v1\nkind: Widget\n", "w.yaml"))


# (apiVersion, kind, severity, key, words in message or fix). Built-in groups come from the
# kinds the Kubernetes schemas declare (x-kubernetes-group-version-kind); keda.sh and
# monitoring.coreos.com from KEDA's and prometheus-operator's CRD lists.
@pytest.mark.parametrize(
    ("api_version", "kind", "severity", "key", "words"),
    [
        ("apps/v1", "Deploymnet", "error", "kind", "did you mean Deployment?"),
        ("apps/v1", "deployment", "error", "kind", "did you mean Deployment?"),
        ("v1", "Servce", "error", "kind", "did you mean Service?"),
        ("batch/v1", "Cronjob", "error", "kind", "did you mean CronJob?"),
        ("autoscaling/v2", "HorizontalPodAutoScaler", "error", "kind", "HorizontalPodAutoscaler"),
        ("networking.k8s.io/v1", "Ingres", "error", "kind", "did you mean Ingress?"),
        ("rbac.authorization.k8s.io/v1", "RoleBind", "error", "kind", "RoleBinding"),
        ("policy/v1", "PodDisruptionBudgets", "error", "kind", "PodDisruptionBudget"),
        ("keda.sh/v1alpha1", "ScaledObjects", "error", "kind", "did you mean ScaledObject?"),
        ("monitoring.coreos.com/v1", "ServiceMonitr", "error", "kind", "ServiceMonitor"),
        ("keda.sh/v1", "ScaledObject", "error", "apiVersion", "keda.sh/v1alpha1"),
        ("apps/v1", "Service", "error", "apiVersion", "use apiVersion: v1"),
        ("monitoring.coreos.com/v1", "PrometheusRule", "info", "kind", "not validated"),
        ("keda.sh/v1alpha1", "ScaledJob", "info", "kind", "not validated"),
        ("serving.knative.dev/v1", "Service", "info", "kind", "not validated"),
        ("example.com/v1", "Widget", "info", "kind", "not validated"),
    ],
)
def test_unknown_kinds_by_group(
    api_version: str, kind: str, severity: str, key: str, words: str
) -> None:
    (problem,) = _problems(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: a}}\n")
    assert problem.severity == severity
    assert problem.path == (key,)
    assert problem.location.line == (1 if key == "apiVersion" else 2)
    assert words in f"{problem.message} {problem.fix}"


SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {namespace}
spec:
  ports: [{{port: 80}}]
"""


# The API server's name rules: ValidateServiceName (DNS-1035), ValidateNamespaceName and
# ValidateObjectMeta's namespace check (DNS-1123 label), NameIsDNSSubdomain for the rest,
# ValidateRBACName (path segment): kubernetes pkg/apis/core/validation/validation.go,
# k8s.io/apimachinery/pkg/util/validation/validation.go.
@pytest.mark.parametrize(
    ("text", "problems"),
    [
        (SERVICE.format(name="app-1", namespace="ml"), []),
        (SERVICE.format(name="1app", namespace="ml"), [(4, "metadata.name", "DNS-1035")]),
        (SERVICE.format(name="web.v2", namespace="ml"), [(4, "metadata.name", "DNS-1035")]),
        (
            SERVICE.format(name="1app", namespace="Bad_NS"),
            [(4, "metadata.name", "app-1"), (5, "metadata.namespace", "bad-ns")],
        ),
        (SERVICE.format(name="'${NAME}'", namespace="'<your-namespace>'"), []),
        (SERVICE.format(name="'{{ .Values.name }}'", namespace="'${NS}'"), []),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 1.conf}\n",
            [],
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: My_Conf\n",
            [(4, "metadata.name", "DNS-1123 subdomain")],
        ),
        (
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml.prod\n",
            [(4, "metadata.name", "DNS-1123 label")],
        ),
        (
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
            "metadata: {name: 'system:gpuscale'}\n",
            [],
        ),
        (
            SCALED_OBJECT.replace("name: app\nspec", "name: App\nspec").format(extra=""),
            [(4, "metadata.name", "DNS-1123 subdomain")],
        ),
    ],
)
def test_names_and_namespaces_follow_the_api_servers_rules(
    text: str, problems: list[tuple[int, str, str]]
) -> None:
    found = _problems(text)
    assert [(p.location.line, ".".join(map(str, p.path))) for p in found] == [
        (line, path) for line, path, _ in problems
    ]
    for problem, (_, _, words) in zip(found, problems, strict=True):
        assert problem.severity == "error"
        assert words in f"{problem.message} {problem.fix}"


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
