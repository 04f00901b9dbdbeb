"""The checks of ``gpuscale verify``: pure functions of API documents and Prometheus answers.

The documents are shaped like the real answers (``tests/integration/live/objects.py``
names the API references); the whole-chain cases are the tutorial's system, broken and
fixed (``tests/integration/live/chain.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console

from gpuscale.cli.verify_cmd import checks_table
from gpuscale.controllers.keda import parse_prometheus_trigger
from gpuscale.inputs import read_manifests
from gpuscale.kube import Taint
from gpuscale.live.verify import (
    Facts,
    HttpAnswer,
    PoolCapacity,
    PromFacts,
    check_deployment_ready,
    check_external_metrics_api,
    check_gpu_capacity,
    check_hpa,
    check_keda_crds,
    check_kube_state_metrics,
    check_pending_pods,
    check_prometheus,
    check_query,
    check_scaled_object_active,
    check_scaled_object_ready,
    check_service_monitor_selected,
    check_service_monitor_targets,
    doks_pool,
    query_params,
    summary,
    verify_checks,
)
from gpuscale.profile import Profile
from tests.integration.live import chain as c
from tests.integration.live import objects as o

QUERY = "sum(my_custom_gauge{namespace='gpu-demo'})"


def _trigger(**extra: str) -> Any:
    return parse_prometheus_trigger(
        {"serverAddress": "http://prometheus-operated.monitoring.svc:9090", "query": QUERY,
         "threshold": "80", **extra}
    )  # fmt: skip


def facts_of(
    state: c.Chain,
    *,
    pools: tuple[PoolCapacity, ...] | None = None,
    pools_source: str = "no profile given",
    answers: dict[str, str] | None = None,
) -> Facts:
    """Facts as the verifier would gather them from ``state``'s cluster and Prometheus."""
    objects: dict[str, Any] = {}
    lists: dict[str, list[Any]] = {
        "nodes": [],
        "prometheuses": [],
        f"pods/{c.APP_NS}/{c.APP}": [],
        f"events/{c.APP_NS}": [],
    }
    for doc in state.objects:
        meta = doc["metadata"]
        if doc["kind"] == "Node":
            lists["nodes"].append(doc)
        elif doc["kind"] == "Prometheus":
            lists["prometheuses"].append(doc)
        elif doc["kind"] == "Pod" and meta["labels"].get("app") == c.APP:
            lists[f"pods/{c.APP_NS}/{c.APP}"].append(doc)
        objects[f"{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"] = doc
    said = answers or c.prometheus_answers(state)
    prom = PromFacts(
        source=f"service/{state.prom_ns}/prometheus-operated:9090 via port-forward",
        buildinfo=HttpAnswer(200, said["buildinfo"]),
        queries={
            k[len("query:") :]: HttpAnswer(200, v) for k, v in said.items() if k[:6] == "query:"
        },
        targets=HttpAnswer(200, said["targets"]),
    )
    return Facts(
        context_namespace=c.APP_NS,
        keda_namespace=state.keda_ns,
        objects=objects,
        lists=lists,
        prometheus={state.server_address: prom},
        pools=pools,
        pools_source=pools_source,
    )


def test_the_tutorials_chain_fails_exactly_the_links_it_breaks() -> None:
    state = c.chain(fixed=False)
    checks = verify_checks(read_manifests([state.path]), facts_of(state))
    assert [(x.name, x.subject, x.status) for x in checks] == [
        ("KEDA CRDs", "", "pass"),
        ("KEDA operator", "deployment/default/keda-operator", "pass"),
        ("KEDA metrics server", "deployment/default/keda-operator-metrics-apiserver", "pass"),
        ("external metrics API", "apiservice/v1beta1.external.metrics.k8s.io", "pass"),
        ("ScaledObject Ready", "scaledobject/gpu-demo/go-from-configmap", "pass"),
        ("ScaledObject Active", "scaledobject/gpu-demo/go-from-configmap", "warn"),
        ("HPA", "hpa/gpu-demo/keda-hpa-go-from-configmap", "pass"),
        ("Prometheus", "scaledobject/gpu-demo/go-from-configmap", "pass"),
        ("trigger query", "scaledobject/gpu-demo/go-from-configmap", "fail"),
        ("ServiceMonitor selected", "servicemonitor/gpu-demo/go-from-configmap", "pass"),
        ("ServiceMonitor target", "servicemonitor/gpu-demo/go-from-configmap", "fail"),
        ("kube-state-metrics", "deployment/gpu-demo/go-from-configmap", "pass"),
        ("GPU capacity", "deployment/gpu-demo/go-from-configmap", "pass"),
        ("Pending pods", "deployment/gpu-demo/go-from-configmap", "pass"),
    ]
    by_name = {x.name: x for x in checks}
    query = by_name["trigger query"]
    assert query.evidence == "no series (ignoreNullValues: true): KEDA reads 0"
    assert 'ignoreNullValues: "false"' in query.fix
    target = by_name["ServiceMonitor target"]
    assert target.evidence == (
        "no target: it selects Services labelled app=go-from-configmap in namespace kube-system; "
        "service/gpu-demo/go-from-configmap has the labels but is in gpu-demo, so nothing is "
        "scraped"
    )
    assert target.fix.startswith("set spec.namespaceSelector.matchNames to [gpu-demo]")
    assert (
        "serviceMonitorSelector: release=prometheus" in by_name["ServiceMonitor selected"].evidence
    )
    assert "s0-prometheus = 0 (target AverageValue 80)" in by_name["HPA"].evidence


def test_the_fixed_chain_passes_every_check() -> None:
    state = c.chain(fixed=True)
    checks = verify_checks(read_manifests([state.path]), facts_of(state))
    assert {x.status for x in checks} == {"pass"}, [x for x in checks if x.status != "pass"]
    by_name = {x.name: x for x in checks}
    assert by_name["trigger query"].evidence == "1 series, value 40; KEDA reads 40 (threshold 80)"
    assert by_name["ServiceMonitor target"].evidence == "1/1 up: http://10.244.0.12:8080/metrics"
    assert by_name["ServiceMonitor selected"].evidence.endswith(
        "(serviceMonitorSelector: everything)"
    )
    assert summary(checks) == "14 checks: 14 pass, 0 fail, 0 warn, 0 skip"


def test_the_table_has_check_status_evidence_and_fix() -> None:
    state = c.chain(fixed=False)
    checks = verify_checks(read_manifests([state.path]), facts_of(state))
    console = Console(width=200, record=True, color_system=None)
    console.print(checks_table(checks))
    text = console.export_text()
    assert [cell.strip() for cell in text.splitlines()[1].split("┃")[1:5]] == [
        "CHECK",
        "STATUS",
        "EVIDENCE",
        "FIX",
    ]
    assert "│ fail   │ no series (ignoreNullValues: true): KEDA reads 0" in text


def test_keda_crds() -> None:
    crds = {d["metadata"]["name"]: d for d in o.KEDA_CRDS}
    assert check_keda_crds(crds).status == "pass"
    missing = check_keda_crds({k: v for k, v in crds.items() if "trigger" not in k})
    assert missing.status == "fail"
    assert missing.evidence == (
        "missing: triggerauthentications.keda.sh, clustertriggerauthentications.keda.sh"
    )
    assert missing.fix.startswith("run gpuscale install")
    unsettled = json.loads(json.dumps(crds))
    unsettled["scaledobjects.keda.sh"]["status"]["conditions"][1]["status"] = "False"
    assert check_keda_crds(unsettled).evidence == "not Established: scaledobjects.keda.sh"


def test_stack_deployments() -> None:
    ok = check_deployment_ready(
        "KEDA operator", "keda", "keda-operator", o.deployment("keda-operator", ns="keda")
    )
    assert (ok.status, ok.evidence) == ("pass", "1/1 ready, Available True")
    down = check_deployment_ready(
        "KEDA operator", "keda", "keda-operator", o.deployment("keda-operator", ns="keda", ready=0)
    )
    assert down.status == "fail"
    assert down.evidence == (
        "0/1 ready, Available False (MinimumReplicasUnavailable: Deployment does not have "
        "minimum availability.)"
    )
    gone = check_deployment_ready("KEDA operator", "keda", "keda-operator", None)
    assert (gone.status, gone.evidence) == ("fail", "not found")


def test_external_metrics_api() -> None:
    assert check_external_metrics_api(o.apiservice()).evidence == (
        "Available, served by service/keda/keda-operator-metrics-apiserver"
    )
    down = check_external_metrics_api(o.apiservice(available=False))
    assert down.status == "fail"
    assert "FailedDiscoveryCheck: failing or missing response" in down.evidence
    other = check_external_metrics_api(o.apiservice(ns="monitoring", service="prometheus-adapter"))
    assert other.status == "warn"
    assert "only one server may serve external.metrics.k8s.io" in other.fix
    assert check_external_metrics_api(None).status == "fail"


def test_scaled_object_conditions() -> None:
    subject = "scaledobject/demo/app"
    ready = check_scaled_object_ready(subject, o.scaled_object())
    assert ready.evidence == (
        "ScaledObjectReady: ScaledObject is defined correctly and is ready for scaling"
    )
    broken = check_scaled_object_ready(subject, o.scaled_object(ready=False))
    assert broken.status == "fail"
    assert broken.evidence == (
        "Ready False: ScaledObjectCheckFailed: ScaledObject doesn't have correct "
        "scaleTargetRef specification"
    )
    assert check_scaled_object_ready(subject, None).fix == "apply the manifests: gpuscale deploy"
    idle = check_scaled_object_active(subject, o.scaled_object(active=False), 1)
    assert idle.status == "warn"
    assert "the HPA still scales between minReplicaCount (1)" in idle.evidence
    zero = check_scaled_object_active(subject, o.scaled_object(active=False), 0)
    assert "holds the target at 0 replicas" in zero.evidence
    assert check_scaled_object_active(subject, o.scaled_object(), 1).status == "pass"


def test_hpa() -> None:
    ok = check_hpa("demo", "keda-hpa-app", o.hpa(value="160", current=1, desired=2))
    assert ok.status == "pass"
    assert ok.evidence == (
        "keda-hpa-app: s0-prometheus = 160 (target AverageValue 80); current 1, desired 2"
    )
    assert check_hpa("demo", "keda-hpa-app", o.hpa(value=None)).status == "warn"
    failing = o.hpa()
    failing["status"]["conditions"][1] = {
        "type": "ScalingActive", "status": "False", "reason": "FailedGetExternalMetric",
        "message": 'the HPA was unable to compute the replica count: unable to get external '
        'metric demo/s0-prometheus/&LabelSelector{MatchLabels:map[string]string{scaledobject.'
        'keda.sh/name: app,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch '
        'metrics from external metrics API: the server is currently unable to handle the request',
    }  # fmt: skip
    bad = check_hpa("demo", "keda-hpa-app", failing)
    assert bad.status == "fail"
    assert "ScalingActive False: FailedGetExternalMetric: the HPA was unable" in bad.evidence
    gone = check_hpa("demo", "keda-hpa-app", None)
    assert (gone.subject, gone.status) == ("hpa/demo/keda-hpa-app", "fail")


BUILD = json.dumps({"status": "success", "data": {"version": "2.42.0", "revision": "x"}})


def test_prometheus_reachability() -> None:
    ok = check_prometheus("so", PromFacts("http://127.0.0.1:9090", HttpAnswer(200, BUILD)), "a")
    assert (ok.status, ok.evidence) == ("pass", "http://127.0.0.1:9090: Prometheus 2.42.0")
    down = check_prometheus(
        "so", PromFacts("service/monitoring/p:9090 via port-forward",
                        HttpAnswer(None, "", "no ready pod behind the Service")), "a"
    )  # fmt: skip
    assert down.status == "fail"
    assert down.evidence.endswith("no ready pod behind the Service")
    assert check_prometheus("so", None, "http://prom.example.com").status == "skip"


# (answer body, ignoreNullValues) -> (status, evidence); KEDA's words from prometheus_scaler.go.
QUERY_CASES = [
    (o.vector(({}, "160")), "true", "pass", "1 series, value 160; KEDA reads 160 (threshold 80)"),
    (o.vector(), "true", "fail", "no series (ignoreNullValues: true): KEDA reads 0"),
    (o.vector(), "false", "fail", "no series (ignoreNullValues: false): KEDA fails: prometheus "
     "metrics 'prometheus' target may be lost, the result is empty"),
    (o.vector(({"pod": "a"}, "1"), ({"pod": "b"}, "2")), "true", "fail",
     f"2 series: KEDA fails: prometheus query {QUERY} returned multiple elements"),
    (o.vector(({}, "NaN")), "true", "fail",
     "prometheus query returns NaN (ignoreNullValues: true): KEDA reads 0"),
    (o.vector(({}, "+Inf")), "false", "fail",
     "prometheus query returns +Inf (ignoreNullValues: false): KEDA fails: prometheus query "
     "returns +Inf"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "null", "status", "evidence"), QUERY_CASES)
def test_the_query_verdict_is_kedas(body: str, null: str, status: str, evidence: str) -> None:
    check = check_query("so", _trigger(ignoreNullValues=null), HttpAnswer(200, body))
    assert (check.status, check.evidence) == (status, evidence)


def test_a_bad_query_answer_is_shown() -> None:
    body = json.dumps({"status": "error", "errorType": "bad_data",
                       "error": 'invalid parameter "query": 1:5: parse error'})  # fmt: skip
    check = check_query("so", _trigger(), HttpAnswer(400, body))
    assert check.status == "fail"
    assert "prometheus query api returned error. status: 400" in check.evidence


def test_keda_query_parameters() -> None:
    trigger = _trigger(namespace="tenant-a", queryParameters="dedup=false,partial=true")
    assert query_params(trigger) == {
        "query": QUERY,
        "namespace": "tenant-a",
        "dedup": "false",
        "partial": "true",
    }


def _monitor(labels: dict[str, str], ns: str = "gpu-demo", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "app", "namespace": ns, "labels": labels},
        "spec": {"selector": {"matchLabels": {"app": "app"}},
                 "endpoints": [{"port": "metrics"}], **spec},
    }  # fmt: skip


def test_service_monitor_selection_by_labels_and_namespace() -> None:
    release = o.prometheus_cr(selector={"matchLabels": {"release": "prometheus"}},
                              namespace_selector={})  # fmt: skip
    ok = check_service_monitor_selected("sm", _monitor({"release": "prometheus"}), [release], None)
    assert ok.status == "pass"
    unlabelled = check_service_monitor_selected("sm", _monitor({}), [release], None)
    assert unlabelled.status == "fail"
    assert unlabelled.evidence == (
        "prometheus monitoring/prometheus-kube-prometheus-prometheus wants labels "
        "release=prometheus; the ServiceMonitor has (none)"
    )
    null = o.prometheus_cr(selector=None, namespace_selector={})
    assert "selects no ServiceMonitors (serviceMonitorSelector is null)" in (
        check_service_monitor_selected("sm", _monitor({}), [null], None).evidence
    )
    own_only = o.prometheus_cr(selector={}, namespace_selector=None)
    elsewhere = check_service_monitor_selected("sm", _monitor({}), [own_only], None)
    assert elsewhere.evidence.endswith("looks for ServiceMonitors in monitoring only")
    by_label = o.prometheus_cr(
        selector={}, namespace_selector={"matchLabels": {"monitoring": "on"}}
    )
    labels = {"kubernetes.io/metadata.name": "gpu-demo", "monitoring": "on"}
    assert check_service_monitor_selected("sm", _monitor({}), [by_label], labels).status == "pass"
    assert check_service_monitor_selected("sm", _monitor({}), None, None).fix.startswith(
        "run gpuscale install"
    )


SERVICE = o.service("app", ns="gpu-demo")


def test_service_monitor_targets() -> None:
    pool = "serviceMonitor/gpu-demo/app/0"
    up = HttpAnswer(200, o.targets(o.target(pool, "http://10.244.0.12:8080/metrics")))
    assert check_service_monitor_targets("sm", _monitor({}), up, [SERVICE]).status == "pass"
    down = HttpAnswer(200, o.targets(o.target(
        pool, "http://10.244.0.12:8080/metrics", up=False,
        error='Get "http://10.244.0.12:8080/metrics": dial tcp 10.244.0.12:8080: connect: '
        "connection refused")))  # fmt: skip
    check = check_service_monitor_targets("sm", _monitor({}), down, [SERVICE])
    assert check.status == "fail"
    assert check.evidence.startswith("0/1 up; http://10.244.0.12:8080/metrics: down (Get ")
    none = HttpAnswer(200, o.targets())
    wrong_port = _monitor({}, endpoints=[{"port": "http-metrics"}])
    assert "endpoint port 'http-metrics' is not a port name of service/gpu-demo/app" in (
        check_service_monitor_targets("sm", wrong_port, none, [SERVICE]).evidence
    )
    other_labels = check_service_monitor_targets(
        "sm", _monitor({}, selector={"matchLabels": {"app": "other"}}), none, [SERVICE]
    )
    assert other_labels.evidence == "no target: no Service has the labels it selects (app=other)"


def _deployment(selector: dict[str, str] | None = None) -> dict[str, Any]:
    doc = o.deployment()
    if selector is not None:
        doc["spec"]["template"]["spec"]["nodeSelector"] = selector
    return doc


def test_gpu_capacity_on_a_ready_node() -> None:
    nodes = [o.node("gpu-node-1"), o.node("general-1", pool="general", gpus=0)]
    check = check_gpu_capacity("d", _deployment(), nodes, None, "no profile given")
    assert check.status == "pass"
    assert check.evidence == (
        "node gpu-node-1 has 1 amd.com/gpu allocatable (pods already using it not counted); "
        "a pod needs 1 amd.com/gpu"
    )
    not_ready = check_gpu_capacity(
        "d", _deployment(), [o.node("gpu-node-1", ready=False)], None, "x"
    )
    assert not_ready.status == "warn"
    assert not_ready.evidence.startswith("node gpu-node-1 is not Ready; node pools unknown")


def _pool(**kw: Any) -> PoolCapacity:
    base: dict[str, Any] = {
        "name": "gpu", "gpu_resource": "amd.com/gpu", "gpus_per_node": 1,
        "labels": {"doks.digitalocean.com/node-pool": "gpu",
                   "doks.digitalocean.com/gpu-brand": "amd"},
        "taints": (Taint("amd.com/gpu", effect="NoSchedule"),), "nodes": 0, "max_nodes": 2,
        "autoscaled": True,
    }  # fmt: skip
    base.update(kw)
    return PoolCapacity(**base)


def test_gpu_capacity_from_a_pool_that_can_grow() -> None:
    general = [o.node("general-1", pool="general", gpus=0)]
    doks = check_gpu_capacity("d", _deployment(), general, (_pool(),), "DigitalOcean")
    assert doks.status == "pass"
    assert doks.evidence == (
        "no Ready node has 1 amd.com/gpu allocatable; pool gpu can grow 0 -> 2 nodes of 1 "
        "amd.com/gpu (DigitalOcean)"
    )
    profile = check_gpu_capacity("d", _deployment(), general, (_pool(),), "the profile p.yaml")
    assert profile.status == "warn"
    full = check_gpu_capacity("d", _deployment(), general, (_pool(nodes=2),), "DigitalOcean")
    assert full.status == "fail"
    assert "pool gpu is at its maximum (2 nodes)" in full.evidence
    # The tutorial's mangled label domain matches no GPU node and no pool.
    mangled = _deployment({"doks.example.com/gpu-brand": "amd"})
    check = check_gpu_capacity("d", mangled, [o.node("gpu-node-1")], (_pool(),), "DigitalOcean")
    assert check.status == "fail"
    assert "node gpu-node-1: nodeSelector doks.example.com/gpu-brand=amd does not match" in (
        check.evidence
    )
    untolerated = _deployment()
    untolerated["spec"]["template"]["spec"]["tolerations"] = []
    check = check_gpu_capacity("d", untolerated, [o.node("gpu-node-1")], None, "x")
    assert "taint amd.com/gpu:NoSchedule is not tolerated" in check.evidence
    cpu = o.deployment()
    cpu["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    assert check_gpu_capacity("d", cpu, [], None, "x").status == "skip"


def test_doks_pools_get_gpus_labels_and_taints_from_the_size() -> None:
    pool = doks_pool("gpu", "gpu-mi300x1-192gb", auto_scale=True, min_nodes=0, max_nodes=3,
                     count=0, nodes=0)  # fmt: skip
    assert (pool.gpu_resource, pool.gpus_per_node, pool.max_nodes) == ("amd.com/gpu", 1, 3)
    assert pool.labels["doks.digitalocean.com/gpu-brand"] == "amd"
    assert pool.taints == (Taint("amd.com/gpu", effect="NoSchedule"),)
    unknown = doks_pool("x", "gpu-unknown-1gb", auto_scale=False, min_nodes=0, max_nodes=0,
                        count=2, nodes=2)  # fmt: skip
    assert (unknown.gpu_resource, unknown.max_nodes) == (None, 2)
    assert Profile.default().node_pools  # the catalogue the pools come from


def test_pending_pods_with_scheduler_and_autoscaler_events() -> None:
    name = "go-from-configmap-7d9f8-b2"
    why = "0/2 nodes are available: 1 Insufficient amd.com/gpu"
    pending = o.pod(name, node=None, phase="Pending", ready=False, unschedulable=why)
    running = o.pod("go-from-configmap-7d9f8-a1")
    assert check_pending_pods("d", [running], []).evidence == "none (1 pods, all bound)"
    scheduling = o.event("e1", reason="FailedScheduling", kind="Pod", obj=name,
                         type_="Warning", component="default-scheduler",
                         message="0/2 nodes are available: 1 Insufficient amd.com/gpu, 1 node(s) "
                         "had untolerated taint {node.kubernetes.io/unreachable: }.")  # fmt: skip
    waiting = check_pending_pods("d", [running, pending], [scheduling])
    assert waiting.status == "warn"
    assert "FailedScheduling: 0/2 nodes are available" in waiting.evidence
    assert "no cluster autoscaler event yet" in waiting.evidence
    triggered = o.event("e2", reason="TriggeredScaleUp", kind="Pod", obj=name,
                        component="cluster-autoscaler", at="2026-11-30T10:00:30Z",
                        message="pod triggered scale-up: [{gpu 1->2 (max: 2)}]")  # fmt: skip
    growing = check_pending_pods("d", [pending], [scheduling, triggered])
    assert growing.status == "warn"
    assert "TriggeredScaleUp: pod triggered scale-up: [{gpu 1->2 (max: 2)}]" in growing.evidence
    refused = o.event("e3", reason="NotTriggerScaleUp", kind="Pod", obj=name,
                      component="cluster-autoscaler", at="2026-11-30T10:00:30Z",
                      message="pod didn't trigger scale-up: 1 max node group size "
                      "reached")  # fmt: skip
    stuck = check_pending_pods("d", [pending], [scheduling, refused])
    assert stuck.status == "fail"
    assert "NotTriggerScaleUp: pod didn't trigger scale-up: 1 max node group size reached" in (
        stuck.evidence
    )


def test_kube_state_metrics_matters_when_the_query_reads_it() -> None:
    query = 'kube_deployment_status_replicas{deployment="app", namespace="demo"}'
    series = HttpAnswer(200, o.vector(({"deployment": "app"}, "2")))
    assert check_kube_state_metrics("d", series, query=query, needed=True).evidence == (
        f"{query} = 2"
    )
    empty = HttpAnswer(200, o.vector())
    assert check_kube_state_metrics("d", empty, query=query, needed=True).status == "fail"
    assert check_kube_state_metrics("d", empty, query=query, needed=False).status == "warn"


def test_a_read_that_failed_is_an_error_with_the_reason() -> None:
    state = c.chain(fixed=True)
    facts = facts_of(state)
    failed = Facts(
        **{**facts.__dict__, "errors": {"nodes": "nodes: not allowed (nodes is forbidden)"}}
    )
    checks = {x.name: x for x in verify_checks(read_manifests([state.path]), failed)}
    assert checks["GPU capacity"].status == "error"
    assert (
        checks["GPU capacity"].evidence == "could not read: nodes: not allowed (nodes is forbidden)"
    )


def test_without_a_scaled_object_the_targets_come_from_the_prometheus_that_answered() -> None:
    state = c.chain(fixed=True)
    manifests = read_manifests([state.path])
    only_monitoring = type(manifests)(
        [m for m in manifests if m.kind in ("Service", "ServiceMonitor")]
    )
    checks = verify_checks(only_monitoring, facts_of(state))
    by_name = {x.name: x for x in checks}
    assert "trigger query" not in by_name
    assert by_name["ServiceMonitor target"].status == "pass"


def _unreadable(facts: Facts, error: str) -> Facts:
    """``facts`` as :func:`gpuscale.live.verifier.gather` leaves them when every Kubernetes
    read failed with ``error``: nothing read, every key in ``errors``, and Prometheus' Service
    unread, so Prometheus not asked."""
    keys = [*facts.objects, *facts.lists]
    return Facts(
        context_namespace=facts.context_namespace,
        keda_namespace=facts.keda_namespace,
        errors=dict.fromkeys(keys, error),
        prometheus={
            address: PromFacts(prom.source, HttpAnswer(None, "", error), unread=error)
            for address, prom in facts.prometheus.items()
        },
    )


@pytest.mark.parametrize(
    "error",
    [
        # The error lines live.kube builds for each failure class (kube_error, status_error).
        "x: cannot reach the Kubernetes API server https://127.0.0.1:1 (NewConnectionError)",
        "x: the API server rejected the credentials (Unauthorized)",
        "x: not allowed (forbidden)",
        "x: the API server answered 503 (etcdserver: request timed out)",
    ],
)
def test_reads_that_failed_judge_nothing(error: str) -> None:
    state = c.chain(fixed=True)
    checks = verify_checks(read_manifests([state.path]), _unreadable(facts_of(state), error))
    judged = [(x.name, x.status, x.evidence) for x in checks if x.status in ("pass", "fail")]
    assert judged == [], judged
    kube_checks = [x for x in checks if x.name not in _PROMETHEUS_CHECKS]
    assert {x.evidence for x in kube_checks} == {f"could not read: {error}"}
    assert {x.status for x in kube_checks} == {"error"}
    assert not any("gpuscale install" in x.fix or "gpuscale deploy" in x.fix for x in checks)


_PROMETHEUS_CHECKS = {"trigger query", "kube-state-metrics"}


def test_pending_pods_of_a_deployment_not_in_the_cluster_is_not_a_pass() -> None:
    state = c.chain(fixed=True)
    facts = facts_of(state)
    key = f"Deployment/{c.APP_NS}/{c.APP}"
    gone = Facts(
        **{**facts.__dict__, "objects": {k: v for k, v in facts.objects.items() if k != key}}
    )
    checks = {x.name: x for x in verify_checks(read_manifests([state.path]), gone)}
    assert (checks["Pending pods"].status, checks["Pending pods"].evidence) == (
        "skip",
        "the Deployment is not in the cluster",
    )
