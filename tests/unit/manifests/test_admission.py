"""What the API server's validation code and KEDA refuse beyond the schemas
(:mod:`gpuscale.manifests._admission`), through :func:`gpuscale.manifests.validate`.

Cases name the upstream function whose rule they check (kubernetes
``pkg/apis/core/validation/validation.go``, ``pkg/apis/apps/validation/validation.go``,
``pkg/apis/autoscaling/validation/validation.go``; KEDA's webhook and prometheus scaler).
Most refusals are also run through every command in
``tests/unit/badinput/cases_validator.py``.
"""

from __future__ import annotations

import pytest

from gpuscale.errors import ManifestError
from gpuscale.manifests import format_path, load_text, validate, validate_or_raise
from tests.unit.badinput.cases_validator import BASE


def _errors(text: str) -> list[tuple[str, str, str]]:
    return [
        (format_path(p.path), p.check, p.message)
        for p in validate(load_text(text, "m.yaml"))
        if p.severity == "error"
    ]


def test_the_base_set_is_valid() -> None:
    assert _errors(BASE) == []


HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: MIN
  maxReplicas: MAX
  metrics:
    - type: External
      external:
        metric: {name: q}
        target: {type: AverageValue, averageValue: TARGET}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: WINDOW
"""


def _hpa(minimum: int = 1, maximum: int = 3, target: str = "'5'", window: int = 0) -> str:
    return (
        HPA.replace("MIN", str(minimum))
        .replace("MAX", str(maximum))
        .replace("TARGET", target)
        .replace("WINDOW", str(window))
    )


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        # ValidateHorizontalPodAutoscalerSpec
        (_hpa(minimum=0), "spec.minReplicas", "greater than or equal to 1"),
        (_hpa(minimum=4, maximum=3), "spec.maxReplicas", "minReplicas"),
        # validateMetricTarget
        (_hpa(target="'0'"), "spec.metrics[0].external.target.averageValue", "positive"),
        (_hpa(target="'-2'"), "spec.metrics[0].external.target.averageValue", "positive"),
        # validateScalingRules, by the HPA model's Behavior.from_k8s
        (_hpa(window=3601), "spec.behavior.scaleUp.stabilizationWindowSeconds", "3600"),
    ],
)
def test_horizontal_pod_autoscaler(text: str, path: str, words: str) -> None:
    found = _errors(text)
    assert [(p, check) for p, check, _ in found] == [(path, "apiserver")], found
    assert words in found[0][2]


def test_a_valid_hpa_passes() -> None:
    assert _errors(_hpa()) == []


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      image: busybox
      resources:
        requests: REQUESTS
        limits: LIMITS
"""


@pytest.mark.parametrize(
    ("requests", "limits", "words"),
    [
        # ValidateResourceRequirements: extended resources are not overcommitted
        ("{amd.com/gpu: '1'}", "{}", "needs a limit"),
        ("{nvidia.com/gpu: '1'}", "{nvidia.com/gpu: '2'}", "must be equal to its limit"),
        ("{cpu: '2'}", "{cpu: '1'}", "less than or equal to its limit"),
        ("{memory: 2Gi}", "{memory: 1Gi}", "less than or equal to its limit"),
    ],
)
def test_resource_requirements(requests: str, limits: str, words: str) -> None:
    found = _errors(POD.replace("REQUESTS", requests).replace("LIMITS", limits))
    assert len(found) == 1, found
    assert found[0][0].startswith("spec.containers[0].resources.requests.")
    assert words in found[0][2]


def test_equal_gpu_requests_and_limits_pass() -> None:
    text = POD.replace("REQUESTS", "{amd.com/gpu: 1}").replace("LIMITS", "{amd.com/gpu: '1'}")
    assert _errors(text) == []


@pytest.mark.parametrize(
    "spec",
    [
        "{clusterIP: None, selector: {app: web}}",  # headless: no ports needed
        "{type: ExternalName, externalName: example.com}",
        "{ports: [{port: 80, protocol: TCP}, {port: 80, protocol: UDP, name: dns}], "
        "selector: {a: b}}",
    ],
)
def test_services_the_api_server_accepts(spec: str) -> None:
    text = f"apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {spec}\n"
    found = _errors(text)
    # the last one: two ports need names (ValidateService), and only that
    assert all("name is required" in message for _, _, message in found), found


def test_schema_errors_come_first_as_the_api_server_decodes_before_it_validates() -> None:
    text = BASE.replace("targetPort: metrics", "targetPort: 70000").replace(
        "      port: 8080", "      port: eighty"
    )
    found = _errors(text)
    assert [(p, c) for p, c, _ in found] == [("spec.ports[0].port", "schema")], found


def test_placeholders_are_not_judged() -> None:
    assert _errors(BASE.replace("threshold: '80'", "threshold: '${THRESHOLD}'")) == []
    assert (
        _errors(
            BASE.replace("      app: web\n  template", "      app: '{{ .Values.app }}'\n  template")
        )
        == []
    )


def test_keda_refusals_are_marked_keda() -> None:
    found = _errors(BASE.replace("threshold: '80'", "threshold: '0'"))
    assert [(p, c) for p, c, _ in found] == [("spec.triggers[0].metadata.threshold", "keda")]


def test_validate_or_raise_names_the_line_and_key() -> None:
    text = BASE.replace("containerPort: 8080", "containerPort: 70000")
    with pytest.raises(ManifestError) as caught:
        validate_or_raise(load_text(text, "m.yaml"))
    assert caught.value.where == "m.yaml:22"
    assert "containerPort" in caught.value.message


def test_deployment_strategy_percentages_and_defaults() -> None:
    ok = BASE.replace(
        "spec:\n  selector:\n    matchLabels",
        "spec:\n  strategy:\n    rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}\n"
        "  selector:\n    matchLabels",
    )
    assert _errors(ok) == []
    slow = BASE.replace(
        "spec:\n  selector:\n    matchLabels",
        "spec:\n  minReadySeconds: 600\n  selector:\n    matchLabels",
    )
    assert [p for p, _, _ in _errors(slow)] == ["spec.minReadySeconds"]
