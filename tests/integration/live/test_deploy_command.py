"""``gpuscale deploy`` against the fake API server: the exact requests, and every error class.

The manifests are the repository's examples (``examples/tutorial`` and
``examples/tutorial-fixed``); the fake serves discovery and server-side apply the way
the API server does (``tests/integration/live/fake_kube.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpuscale.cli import deploy_cmd
from gpuscale.cli.main import main
from gpuscale.inputs import read_manifests
from tests.integration.live import objects as o
from tests.integration.live.fake_kube import TOKEN, FakeKube, Seen

pytestmark = pytest.mark.integration

FIXED = "examples/tutorial-fixed"
TUTORIAL = "examples/tutorial"
APPLY = "application/apply-patch+yaml"
FIXED_PATHS = [
    "/api/v1/namespaces/gpu-demo/services/go-from-configmap",
    "/apis/apps/v1/namespaces/gpu-demo/deployments/go-from-configmap",
    "/apis/monitoring.coreos.com/v1/namespaces/gpu-demo/servicemonitors/go-from-configmap",
    "/apis/keda.sh/v1alpha1/namespaces/gpu-demo/scaledobjects/go-from-configmap",
]


def _stack(kube: FakeKube, *namespaces: str) -> None:
    """A cluster after gpuscale install: KEDA's and prometheus-operator's CRDs."""
    for doc in (*o.KEDA_CRDS, *o.PROMETHEUS_OPERATOR_CRDS):
        kube.put(doc)
    for name in namespaces:
        kube.put(o.namespace(name))


def _patches(kube: FakeKube) -> list[Seen]:
    return [s for s in kube.seen if s.method == "PATCH"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["deploy", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fixed_example_is_applied_server_side_in_dependency_order(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    code, out, err = _run(capsys, FIXED)
    assert code == 0, err
    assert out.splitlines() == [
        "service/go-from-configmap created",
        "deployment.apps/go-from-configmap created",
        "servicemonitor.monitoring.coreos.com/go-from-configmap created",
        "scaledobject.keda.sh/go-from-configmap created",
    ]
    patches = _patches(fake_kube)
    assert [p.path for p in patches] == FIXED_PATHS
    manifests = {m.kind: m.body for m in read_manifests([FIXED])}
    for patch in patches:
        assert patch.query == {"fieldManager": "gpuscale"}
        assert patch.headers["content-type"] == APPLY
        assert patch.headers["authorization"] == f"Bearer {TOKEN}"
        assert patch.body == manifests[patch.body["kind"]], "the manifest is sent as written"
    # Reads before writes: discovery once per group version, the namespace once.
    gets = [s.path for s in fake_kube.seen if s.method == "GET"]
    assert gets[:6] == [
        "/api/v1",
        "/apis/apps/v1",
        "/apis/monitoring.coreos.com/v1",
        "/apis/keda.sh/v1alpha1",
        "/api/v1/namespaces/gpu-demo",
        FIXED_PATHS[0],
    ]
    assert gets.count("/api/v1") == 1
    stored = fake_kube.objects[FIXED_PATHS[1]]
    assert stored["metadata"]["managedFields"][0]["manager"] == "gpuscale"


def test_applying_again_is_unchanged_and_an_edit_is_configured(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _stack(fake_kube, "gpu-demo")
    assert _run(capsys, FIXED)[0] == 0
    version = fake_kube.objects[FIXED_PATHS[1]]["metadata"]["resourceVersion"]
    code, out, _ = _run(capsys, FIXED)
    assert code == 0
    assert [line.rsplit(" ", 1)[1] for line in out.splitlines()] == ["unchanged"] * 4
    assert fake_kube.objects[FIXED_PATHS[1]]["metadata"]["resourceVersion"] == version
    edited = tmp_path / "resources.yaml"
    edited.write_text(
        (Path(FIXED) / "resources.yaml")
        .read_text()
        .replace("  # No replicas:", "  replicas: 2  # No replicas:")
    )
    code, out, _ = _run(capsys, str(edited))
    assert code == 0
    assert "deployment.apps/go-from-configmap configured" in out.splitlines()
    assert "service/go-from-configmap unchanged" in out.splitlines()
    assert fake_kube.objects[FIXED_PATHS[1]]["spec"]["replicas"] == 2


def test_objects_without_a_namespace_take_the_flag_else_the_context(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "demo", "team-a")
    assert _run(capsys, TUTORIAL, "--force")[0] == 0
    assert all("/namespaces/demo/" in p.path for p in _patches(fake_kube))
    assert all(p.body["metadata"]["namespace"] == "demo" for p in _patches(fake_kube))
    fake_kube.seen.clear()
    assert _run(capsys, TUTORIAL, "--force", "--namespace", "team-a")[0] == 0
    patches = _patches(fake_kube)
    assert [p.body["kind"] for p in patches] == [
        "ConfigMap",
        "Service",
        "Deployment",
        "ServiceMonitor",
        "ScaledObject",
    ]
    assert all("/namespaces/team-a/" in p.path for p in patches)


def test_server_dry_run_sends_dry_run_all_and_stores_nothing(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    code, out, err = _run(capsys, FIXED, "--dry-run=server")
    assert code == 0, err
    assert out.splitlines()[0] == "service/go-from-configmap created (server dry run)"
    assert all(
        p.query == {"fieldManager": "gpuscale", "dryRun": "All"} for p in _patches(fake_kube)
    )
    assert not any(path in fake_kube.objects for path in FIXED_PATHS)


def test_client_dry_run_prints_kubectl_ready_yaml_and_contacts_nothing(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, TUTORIAL, "--force", "--dry-run=client", "-n", "team-a")
    assert code == 0, err
    assert fake_kube.seen == []
    documents = list(YAML(typ="safe").load_all(out))
    assert [d["kind"] for d in documents] == [
        "ConfigMap",
        "Service",
        "Deployment",
        "ServiceMonitor",
        "ScaledObject",
    ]
    assert {d["metadata"]["namespace"] for d in documents} == {"team-a"}
    # Trigger metadata values stay strings ("80"), as the API requires.
    assert documents[-1]["spec"]["triggers"][0]["metadata"]["threshold"] == "80"
    assert "nothing was sent" in err


def test_missing_keda_crds_name_gpuscale_install_and_nothing_is_applied(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    for doc in o.PROMETHEUS_OPERATOR_CRDS:
        fake_kube.put(doc)
    fake_kube.put(o.namespace("gpu-demo"))
    code, _, err = _run(capsys, FIXED)
    assert code == 1
    assert _patches(fake_kube) == []
    assert err.count("\n") == 1
    assert (
        "the cluster has no ScaledObject (keda.sh/v1alpha1): KEDA's CRDs are not installed" in err
    )
    assert "fix: run gpuscale install" in err


def test_missing_prometheus_operator_crds_name_gpuscale_install(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    for doc in o.KEDA_CRDS:
        fake_kube.put(doc)
    fake_kube.put(o.namespace("gpu-demo"))
    code, _, err = _run(capsys, FIXED)
    assert code == 1
    assert "prometheus-operator (kube-prometheus-stack)'s CRDs are not installed" in err
    assert "gpuscale install" in err
    assert _patches(fake_kube) == []


def test_a_missing_namespace_stops_before_anything_is_written(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube)
    code, _, err = _run(capsys, FIXED)
    assert code == 2
    assert "namespace 'gpu-demo' does not exist" in err
    assert "kubectl create namespace gpu-demo" in err
    assert _patches(fake_kube) == []


def _crd_bundle(tmp_path: Path) -> Path:
    """A Namespace, a CRD and an object of its kind, in reverse dependency order."""
    path = tmp_path / "bundle.yaml"
    path.write_text(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: shop}\n"
        "spec: {size: 3}\n---\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\n"
        "spec:\n  group: example.com\n  scope: Namespaced\n"
        "  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n"
        "  versions:\n    - name: v1\n      served: true\n      storage: true\n"
        "      schema:\n"
        "        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"
        "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
        encoding="utf-8",
    )
    return path


def test_namespaces_and_crds_of_the_same_deploy_come_first_and_are_waited_for(
    fake_kube: FakeKube,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(deploy_cmd, "runtime", deploy_cmd.DeployRuntime(lambda: now[0], sleep))
    # The API server serves a new CRD's kind a moment after the CRD is stored.
    fake_kube.hidden_discovery["example.com/v1"] = 3
    code, out, err = _run(capsys, str(_crd_bundle(tmp_path)), "--force")
    assert code == 0, err
    assert out.splitlines() == [
        "namespace/shop created",
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created",
        "widget.example.com/w1 created",
    ]
    assert [p.path for p in _patches(fake_kube)] == [
        "/api/v1/namespaces/shop",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        "/apis/example.com/v1/namespaces/shop/widgets/w1",
    ]
    assert slept == [1.0, 1.0], "discovery is read again until the kind is served"


def test_server_dry_run_skips_what_depends_on_objects_it_cannot_store(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, str(_crd_bundle(tmp_path)), "--force", "--dry-run=server")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "namespace/shop created (server dry run)"
    assert lines[1].startswith("customresourcedefinition.apiextensions.k8s.io/widgets.example.com")
    assert lines[2].startswith("widget.example.com/w1 skipped (server dry run): ")
    assert "created by this deploy" in lines[2]
    assert fake_kube.objects == {}


def test_rejected_credentials_are_one_line_with_the_fix(
    fake_kube: FakeKube,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = fake_kube.write_kubeconfig(tmp_path / "stale", token="expired-token")
    monkeypatch.setenv("KUBECONFIG", str(config))
    code, _, err = _run(capsys, FIXED)
    assert code == 1
    assert err.count("\n") == 1
    assert "the API server rejected the credentials" in err
    assert "gpuscale cluster kubeconfig --merge" in err
    assert "expired-token" not in err


def test_forbidden_patch_fails_that_object_and_the_others_go_on(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    fake_kube.denied[f"PATCH {FIXED_PATHS[1]}"] = 403
    code, out, err = _run(capsys, FIXED)
    assert code == 1
    assert "deployment.apps/go-from-configmap failed" in out
    assert "scaledobject.keda.sh/go-from-configmap created" in out
    assert 'cannot patch resource "deployments"' in err
    assert "may get, create and patch deployments in namespace gpu-demo" in err


def test_a_conflict_suggests_force_conflicts_which_sends_force_true(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    theirs = read_manifests([FIXED]).by_kind("Deployment")[0].body
    theirs = json.loads(
        json.dumps(theirs).replace(
            '"terminationGracePeriodSeconds": 30', '"terminationGracePeriodSeconds": 60'
        )
    )
    fake_kube.applied_as(theirs, "kubectl-client-side-apply")
    code, out, err = _run(capsys, FIXED)
    assert code == 1
    assert "deployment.apps/go-from-configmap failed" in out
    assert (
        'conflict with "kubectl-client-side-apply" using apps/v1 over '
        ".spec.template.spec.terminationGracePeriodSeconds" in err
    )
    assert "--force-conflicts" in err
    fake_kube.seen.clear()
    code, out, err = _run(capsys, FIXED, "--force-conflicts")
    assert code == 0, err
    assert "deployment.apps/go-from-configmap configured" in out
    assert {p.query["force"] for p in _patches(fake_kube)} == {"true"}
    assert (
        fake_kube.objects[FIXED_PATHS[1]]["spec"]["template"]["spec"][
            "terminationGracePeriodSeconds"
        ]
        == 30
    )


def test_an_invalid_object_shows_the_api_servers_message(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    invalid: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'ScaledObject.keda.sh "go-from-configmap" is invalid: spec.maxReplicaCount: '
        "Invalid value: 0: spec.maxReplicaCount in body should be greater than or equal to 1",
        "reason": "Invalid",
        "details": {
            "name": "go-from-configmap",
            "group": "keda.sh",
            "kind": "ScaledObject",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: 0: spec.maxReplicaCount in body should be "
                    "greater than or equal to 1",
                    "field": "spec.maxReplicaCount",
                }
            ],
        },
        "code": 422,
    }
    fake_kube.patch_errors[FIXED_PATHS[3]] = (422, invalid)
    code, out, err = _run(capsys, FIXED)
    assert code == 1
    assert out.splitlines()[-1].startswith("scaledobject.keda.sh/go-from-configmap failed")
    assert "the API server refused it: ScaledObject.keda.sh" in err
    assert "spec.maxReplicaCount in body should be greater than or equal to 1" in err
    assert "examples/tutorial-fixed/resources.yaml:" in err


def test_validation_errors_block_unless_forced(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _stack(fake_kube, "gpu-demo")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (Path(FIXED) / "resources.yaml")
        .read_text()
        .replace("  # No replicas:", "  replicas: one  # No replicas:")
    )
    code, _, err = _run(capsys, str(bad))
    assert code == 2
    assert fake_kube.seen == []
    assert f"gpuscale: error: {bad}:" in err
    assert "gpuscale: note: 1 problem in the manifests; nothing was applied" in err
    assert "--force" in err


def test_an_explicit_namespace_must_agree_with_the_objects(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    code, _, err = _run(capsys, FIXED, "--namespace", "other")
    assert code == 2
    assert "is in namespace 'gpu-demo' but --namespace is 'other'" in err
    assert _patches(fake_kube) == []


def test_json_output_lists_every_object(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "gpu-demo")
    code, out, _ = _run(capsys, FIXED, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert [(d["name"], d["namespace"], d["action"]) for d in doc] == [
        ("service/go-from-configmap", "gpu-demo", "created"),
        ("deployment.apps/go-from-configmap", "gpu-demo", "created"),
        ("servicemonitor.monitoring.coreos.com/go-from-configmap", "gpu-demo", "created"),
        ("scaledobject.keda.sh/go-from-configmap", "gpu-demo", "created"),
    ]


def test_client_dry_run_without_a_kubeconfig_leaves_the_namespace_to_kubectl(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    code, out, err = _run(capsys, TUTORIAL, "--force", "--dry-run=client")
    assert code == 0, err
    documents = list(YAML(typ="safe").load_all(out))
    assert all("namespace" not in d["metadata"] for d in documents)
    assert "note: no kubeconfig; ConfigMap/go-program" in err


def test_lint_errors_block_the_tutorial_and_nothing_is_applied(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(fake_kube, "demo")
    code, out, err = _run(capsys, TUTORIAL, "--namespace", "demo")
    assert code == 2
    assert out == ""
    assert _patches(fake_kube) == []
    lines = err.splitlines()
    assert (
        "gpuscale: error: examples/tutorial/resources.yaml:156: query-divides-by-replicas: "
        in "\n".join(lines)
    )
    assert any("resources.yaml:135: servicemonitor-namespace-mismatch" in line for line in lines)
    assert lines[-1].startswith("gpuscale: note: 2 problems in the manifests; nothing was applied")


SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: app
  labels: {app: app}
spec:
  selector: {app: app}
  ports: [{name: metrics, port: 8080}]
"""


def _monitor(namespace: str) -> str:
    return f"""apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: app
spec:
  selector: {{matchLabels: {{app: app}}}}
  endpoints: [{{port: metrics}}]
  namespaceSelector: {{matchNames: [{namespace}]}}
"""


@pytest.mark.parametrize("mode", ["--dry-run=client", "--dry-run=server", None])
def test_lint_judges_objects_in_the_namespace_they_are_applied_to(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str | None
) -> None:
    # The reviewer's case: the context's namespace is demo (conftest), the objects name
    # none, the ServiceMonitor looks in demo. Lint must judge them in demo, not default.
    _stack(fake_kube, "demo")
    (tmp_path / "sm.yaml").write_text(_monitor("demo"))
    (tmp_path / "svc.yaml").write_text(SERVICE)
    argv = [str(tmp_path / "sm.yaml"), str(tmp_path / "svc.yaml")] + ([mode] if mode else [])
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    assert "servicemonitor-namespace-mismatch" not in err
    if mode == "--dry-run=client":
        assert fake_kube.seen == []
        assert {d["metadata"]["namespace"] for d in YAML(typ="safe").load_all(out)} == {"demo"}
    # Objects that really land elsewhere are still caught: -n other applies them in other.
    code, _, err = _run(capsys, *argv, "-n", "other")
    assert code == 2
    assert "servicemonitor-namespace-mismatch" in err


def test_a_schema_error_is_listed_once_before_connecting_and_warnings_after(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _stack(fake_kube, "gpu-demo")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (Path(FIXED) / "resources.yaml")
        .read_text()
        .replace("  # No replicas:", "  replicas: one  # No replicas:")
        + "---\napiVersion: example.com/v1\nkind: Widget\n"
        + "metadata: {name: w, namespace: gpu-demo}\n"
        + "---\napiVersion: apps/v1\nkind: Deployment\n"
        + "metadata: {name: p, namespace: gpu-demo}\nspec:\n"
        + "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
        + "    spec:\n      containers: [{name: c, image: x, command: [sh, -c, "
        + '"pip install flask && python app.py"]}]\n'
    )
    code, _, err = _run(capsys, str(bad))
    assert code == 2
    lines = err.splitlines()
    replicas = [line for line in lines if "spec.replicas" in line]
    assert [line.split(" (fix:")[0] for line in replicas] == [
        f"gpuscale: error: {bad}:12: schema-invalid: spec.replicas: expected an integer, got 'one'"
    ]
    # the validator refuses before any connection; lint's warnings come once it is valid
    assert not any("compile-at-start" in line for line in lines), err
    # a custom resource of an unknown group is only info, which deploy does not print
    assert not any("Widget" in line for line in lines), err
    assert lines[-1].startswith("gpuscale: note: 1 problem in the manifests")
    assert "the cluster was not contacted" in lines[-1]
    assert fake_kube.seen == []
    bad.write_text(bad.read_text().replace("replicas: one", "replicas: 1"))
    code, _, err = _run(capsys, str(bad), "--dry-run=server")
    assert any(
        line.startswith(f"gpuscale: warning: {bad}:") and "compile-at-start" in line
        for line in err.splitlines()
    ), err
