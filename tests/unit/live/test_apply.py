"""The pure half of ``gpuscale deploy``: order, namespaces, results, errors, discovery."""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.errors import InputError, ManifestError, RetryableError, UnavailableError
from gpuscale.inputs import read_manifests
from gpuscale.live.apply import (
    apply_action,
    apply_body,
    apply_error,
    apply_order,
    apply_query,
    client_objects,
    crd_resources,
    display_name,
    missing_kind_error,
    target_namespace,
)
from gpuscale.live.discovery import Resource, parse_resource_list
from gpuscale.manifests import Manifest, load_text

# GET /apis/apps/v1 from a v1.33 API server, shortened to two kinds (shape: metav1.APIResourceList).
APPS_V1 = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "apps/v1",
    "resources": [
        {
            "name": "deployments",
            "singularName": "deployment",
            "namespaced": True,
            "kind": "Deployment",
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                      "watch"],
            "shortNames": ["deploy"],
            "categories": ["all"],
            "storageVersionHash": "8aSe+NMegvE=",
        },
        {
            "name": "deployments/scale",
            "singularName": "",
            "namespaced": True,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "deployments/status",
            "singularName": "",
            "namespaced": True,
            "kind": "Deployment",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "controllerrevisions",
            "singularName": "controllerrevision",
            "namespaced": True,
            "kind": "ControllerRevision",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        },
    ],
}  # fmt: skip


def _one(text: str) -> Manifest:
    return load_text(text, "m.yaml")[0]


def test_discovery_reads_plurals_and_scope_and_skips_subresources() -> None:
    found = parse_resource_list(APPS_V1, "apps/v1")
    assert set(found) == {"Deployment", "ControllerRevision"}
    deployment = found["Deployment"]
    assert deployment.plural == "deployments"
    assert deployment.namespaced
    assert deployment.object_path("web", "shop") == "/apis/apps/v1/namespaces/shop/deployments/web"
    assert deployment.display == "deployment.apps"
    namespaces = Resource("v1", "Namespace", "namespaces", False)
    assert namespaces.object_path("shop", "ignored") == "/api/v1/namespaces/shop"
    assert Resource("v1", "Service", "services", True).display == "service"


def test_apply_order_follows_helm_with_crds_first_and_keeps_file_order_within_a_kind() -> None:
    text = "\n---\n".join(
        f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}"
        for api, kind, name in [
            ("keda.sh/v1alpha1", "ScaledObject", "so"),
            ("example.com/v1", "Widget", "w"),
            ("monitoring.coreos.com/v1", "ServiceMonitor", "sm"),
            ("apps/v1", "Deployment", "b"),
            ("apps/v1", "Deployment", "a"),
            ("v1", "Service", "svc"),
            ("keda.sh/v1alpha1", "TriggerAuthentication", "ta"),
            ("v1", "ConfigMap", "cm"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "crd"),
            ("v1", "Namespace", "ns"),
            ("v1", "ServiceAccount", "sa"),
        ]
    )
    order = [f"{m.kind}/{m.name}" for m in apply_order(load_text(text, "all.yaml"))]
    assert order == [
        "Namespace/ns",
        "CustomResourceDefinition/crd",
        "ServiceAccount/sa",
        "ConfigMap/cm",
        "Service/svc",
        "Deployment/b",
        "Deployment/a",
        "TriggerAuthentication/ta",
        "ServiceMonitor/sm",
        "ScaledObject/so",
        "Widget/w",
    ]


@pytest.mark.parametrize(
    ("written", "namespaced", "flag", "context", "expected"),
    [
        ("shop", True, None, "default", "shop"),
        ("shop", True, "shop", "default", "shop"),
        (None, True, "team", "default", "team"),
        (None, True, None, "ctx", "ctx"),
        (None, False, "team", "ctx", None),
        ("shop", False, "team", "ctx", None),
    ],
)
def test_namespace_comes_from_the_object_then_the_flag_then_the_context(
    written: str | None,
    namespaced: bool,
    flag: str | None,
    context: str,
    expected: str | None,
) -> None:
    meta = f"{{name: x, namespace: {written}}}" if written else "{name: x}"
    manifest = _one(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {meta}\n")
    assert target_namespace(manifest, namespaced=namespaced, flag=flag, context=context) == expected


def test_a_flag_that_contradicts_the_object_is_refused_like_kubectl() -> None:
    manifest = _one("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: shop\n")
    with pytest.raises(InputError, match="is in namespace 'shop' but --namespace is 'team'") as e:
        target_namespace(manifest, namespaced=True, flag="team", context=None)
    assert e.value.where == "m.yaml:5"


def test_the_body_is_the_manifest_with_its_namespace_filled_in() -> None:
    manifest = _one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: '1'}\n")
    body = apply_body(manifest, "shop")
    assert body == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "shop"},
        "data": {"a": "1"},
    }
    assert "namespace" not in manifest.body["metadata"], "the manifest itself is not changed"
    assert apply_body(manifest, None) == manifest.body


def test_query_parameters() -> None:
    assert apply_query(dry_run=False, force_conflicts=False) == {"fieldManager": "gpuscale"}
    assert apply_query(dry_run=True, force_conflicts=True) == {
        "fieldManager": "gpuscale",
        "force": "true",
        "dryRun": "All",
    }


def _obj(version: str, replicas: int = 1, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "x", "resourceVersion": version, "managedFields": [], **meta},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas},
    }


@pytest.mark.parametrize(
    ("status", "before", "after", "dry_run", "action"),
    [
        (201, None, _obj("5"), False, "created"),
        (200, None, _obj("5"), False, "created"),
        (200, _obj("5"), _obj("5"), False, "unchanged"),
        (200, _obj("5"), _obj("6", 2), False, "configured"),
        # A label-only change moves the resourceVersion but not the generation.
        (200, _obj("5"), _obj("6", labels={"a": "b"}), False, "configured"),
        # Server dry run: the version does not move; the objects are compared.
        (200, _obj("5"), _obj("5", 2), True, "configured"),
        (200, _obj("5"), {**_obj("5"), "status": {"replicas": 9}}, True, "unchanged"),
        (201, None, _obj("5"), True, "created"),
    ],
)
def test_results_like_kubectl(
    status: int, before: Any, after: Any, dry_run: bool, action: str
) -> None:
    assert apply_action(status, before, after, dry_run=dry_run) == action


def test_names_are_printed_the_kubectl_way() -> None:
    assert display_name("apps/v1", "Deployment", "web") == "deployment.apps/web"
    assert display_name("v1", "Service", "web") == "service/web"
    assert display_name("keda.sh/v1alpha1", "ScaledObject", "so") == "scaledobject.keda.sh/so"


DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"


def _status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                           "status": "Failure", "message": message, "reason": reason,
                           "code": code}  # fmt: skip
    if details:
        doc["details"] = details
    return doc


# (status, Status body) -> (error class, words in the message, words in the fix)
ERRORS = [
    (401, _status(401, "Unauthorized", "Unauthorized"), UnavailableError,
     "rejected the credentials", "gpuscale cluster kubeconfig --merge"),
    (403, _status(403, "Forbidden", 'deployments.apps "web" is forbidden: User "dev" cannot patch '
                  'resource "deployments" in API group "apps" in the namespace "shop"'),
     UnavailableError, "cannot patch resource",
     "get, create and patch deployments in namespace shop"),
    (404, _status(404, "NotFound", 'namespaces "shop" not found'), InputError,
     "the namespace does not exist", "kubectl create namespace shop"),
    (404, _status(404, "NotFound", "the server could not find the requested resource"),
     UnavailableError, "not found", "CustomResourceDefinition"),
    (409, _status(409, "Conflict", 'Apply failed with 1 conflict: conflict with "helm" using '
                  "apps/v1: .spec.replicas",
                  causes=[{"reason": "FieldManagerConflict", "field": ".spec.replicas",
                           "message": 'conflict with "helm" using apps/v1'}]),
     Exception, 'conflict with "helm" using apps/v1 over .spec.replicas', "--force-conflicts"),
    (422, _status(422, "Invalid", 'Deployment.apps "web" is invalid: spec.template.spec.'
                  "containers[0].image: Required value",
                  causes=[{"reason": "FieldValueRequired", "message": "Required value",
                           "field": "spec.template.spec.containers[0].image"}]),
     ManifestError, "containers[0].image: Required value", "change the manifest"),
    (429, _status(429, "TooManyRequests", "too many requests"), RetryableError,
     "answered 429", "again in a moment"),
    (500, "<html>bad gateway</html>", RetryableError, "bad gateway", "again"),
]  # fmt: skip


@pytest.mark.parametrize(("status", "body", "kind", "said", "fix"), ERRORS)
def test_each_error_class_is_one_line_with_its_fix(
    status: int, body: Any, kind: type[Exception], said: str, fix: str
) -> None:
    error = apply_error(
        status,
        body,
        manifest=_one(DEPLOYMENT),
        name="deployment.apps/web",
        namespace="shop",
        resource="deployments",
    )
    assert isinstance(error, kind)
    line = error.one_line()
    assert "\n" not in line
    assert said in line
    assert fix in (error.fix or "")
    assert line.startswith("m.yaml:1")


def test_missing_crds_name_gpuscale_install_for_keda_and_prometheus_operator() -> None:
    manifests = read_manifests(["examples/tutorial-fixed"])
    scaled = [m for m in manifests if m.kind in ("ScaledObject", "ServiceMonitor")]
    error = missing_kind_error(list(reversed(scaled)))
    assert "no ScaledObject (keda.sh/v1alpha1): KEDA's CRDs are not installed" in error.message
    assert "(and 1 more object of kinds it lacks)" in error.message
    assert error.fix is not None
    assert error.fix.startswith("run gpuscale install")
    other = missing_kind_error([_one("apiVersion: example.com/v1\nkind: Widget\nmetadata: {}\n")])
    assert "gpuscale install" not in (other.fix or "")


def test_crds_in_the_manifests_define_their_kinds() -> None:
    crd = _one(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\n"
        "spec:\n  group: example.com\n  scope: Cluster\n  names: {kind: Widget, plural: widgets}\n"
        "  versions: [{name: v1, served: true}, {name: v0, served: false}]\n"
    )
    assert crd_resources([crd]) == {
        ("example.com/v1", "Widget"): ("widgets.example.com", "widgets", False)
    }


def test_client_objects_guess_scope_from_known_cluster_kinds() -> None:
    text = (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    )
    objects = client_objects(load_text(text, "x.yaml"), flag="shop", context=None)
    assert objects[0]["metadata"] == {"name": "shop"}
    assert objects[1]["metadata"] == {"name": "w", "namespace": "shop"}


@pytest.mark.parametrize("status", [401, 403, 429, 500, 503, 418])
def test_deploy_and_the_other_live_commands_map_a_status_to_one_error_class(status: int) -> None:
    # One mapping (gpuscale.live.kube.status_error); deploy words some fixes, and 404,
    # 409 and 422 (a missing namespace, a conflict, a rejected field), itself.
    from gpuscale.live.kube import status_error

    body = _status(status, "Reason", "the API server's words")
    shared = status_error(status, body, "deployment.apps/web")
    applied = apply_error(
        status,
        body,
        manifest=_one(DEPLOYMENT),
        name="deployment.apps/web",
        namespace="shop",
        resource="deployments",
    )
    assert type(applied) is type(shared)
    assert "the API server's words" in applied.message
    assert applied.message == shared.message
