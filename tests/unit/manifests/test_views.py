"""Typed views: workload, Service and ServiceMonitor read from manifests, with API defaults,
templated values as None, and wrong types as one-line errors naming file:line."""

from __future__ import annotations

import textwrap

import pytest

from gpuscale.errors import ManifestError
from gpuscale.inputs import read_manifests
from gpuscale.kube import Taint, Toleration
from gpuscale.manifests import Service, ServiceMonitor, Workload, load_text

DEPLOYMENT = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: app
      namespace: ml
    spec:
      replicas: 3
      selector:
        matchLabels: {app: app}
      template:
        metadata:
          labels: {app: app, tier: gpu}
        spec:
          nodeSelector:
            doks.digitalocean.com/gpu-brand: nvidia
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions:
                      - {key: doks.digitalocean.com/gpu-model, operator: In, values: [h100]}
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              effect: NoSchedule
            - key: dedicated
              value: ml
          terminationGracePeriodSeconds: 45
          initContainers:
            - name: fetch
              image: busybox
              resources: {requests: {cpu: "2", memory: 1Gi}}
          containers:
            - name: server
              image: vllm/vllm-openai:v0.6
              command: [python, -m, vllm]
              args: [--port, "8000"]
              ports:
                - {name: http, containerPort: 8000}
              readinessProbe:
                httpGet: {path: /health, port: http}
                periodSeconds: 5
              resources:
                requests: {cpu: 500m, memory: 8Gi}
                limits: {nvidia.com/gpu: 2, memory: 16Gi}
            - name: sidecar
              image: exporter
              resources: {requests: {cpu: 100m}}
    """
)


def test_workload_view_reads_everything_a_model_needs() -> None:
    (manifest,) = load_text(DEPLOYMENT, "d.yaml")
    workload = Workload.from_manifest(manifest)
    assert (workload.kind, workload.name, workload.namespace, workload.replicas) == (
        "Deployment",
        "app",
        "ml",
        3,
    )
    assert workload.selector.matches(workload.template_labels)
    assert workload.node_selector == {"doks.digitalocean.com/gpu-brand": "nvidia"}
    assert workload.required_node_affinity[0].matches({"doks.digitalocean.com/gpu-model": "h100"})
    assert workload.termination_grace_period_seconds == 45
    server = workload.containers[0]
    assert server.image == "vllm/vllm-openai:v0.6"
    assert server.command == ("python", "-m", "vllm")
    assert server.args == ("--port", "8000")
    assert server.requests == {"cpu": 0.5, "memory": 8 * 1024**3}
    assert server.limits == {"nvidia.com/gpu": 2.0, "memory": 16 * 1024**3}
    assert server.effective_requests["nvidia.com/gpu"] == 2.0  # defaulted from the limit
    assert server.effective_requests["memory"] == 8 * 1024**3  # the request wins
    assert server.gpus == {"nvidia.com/gpu": 2.0}
    assert server.readiness_probe is not None
    assert (server.readiness_probe.handler, server.readiness_probe.path) == ("httpGet", "/health")
    assert server.readiness_probe.period_seconds == 5
    assert server.readiness_probe.failure_threshold == 3
    assert server.ports[0].name == "http"
    assert server.location.line == 34
    # pod requests: containers summed (0.5 + 0.1 cpu), raised to the init container's 2 cpu
    assert workload.pod_requests["cpu"] == 2.0
    assert workload.pod_requests["memory"] == 8 * 1024**3
    assert workload.gpus_per_pod == {"nvidia.com/gpu": 2.0}


def test_tolerations_match_taints_as_kubernetes_does() -> None:
    (manifest,) = load_text(DEPLOYMENT, "d.yaml")
    gpu, dedicated = Workload.from_manifest(manifest).tolerations
    assert gpu.tolerates(Taint("nvidia.com/gpu", effect="NoSchedule"))
    assert gpu.tolerates(Taint("nvidia.com/gpu", value="present", effect="NoSchedule"))
    assert not gpu.tolerates(Taint("nvidia.com/gpu", effect="NoExecute"))
    assert not gpu.tolerates(Taint("amd.com/gpu", effect="NoSchedule"))
    assert dedicated.operator == "Equal"
    assert dedicated.tolerates(Taint("dedicated", value="ml", effect="NoExecute"))
    assert not dedicated.tolerates(Taint("dedicated", value="web", effect="NoSchedule"))
    assert Toleration(operator="Exists").tolerates(Taint("anything", effect="NoSchedule"))


def test_defaults_when_fields_are_missing() -> None:
    (manifest,) = load_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\n", "s.yaml"
    )
    workload = Workload.from_manifest(manifest)
    assert workload.replicas == 1
    assert workload.termination_grace_period_seconds == 30
    assert workload.containers == ()
    assert workload.selector.is_empty


def test_templated_values_read_as_none() -> None:
    text = DEPLOYMENT.replace("replicas: 3", "replicas: ${replicas}").replace(
        "limits: {nvidia.com/gpu: 2,", 'limits: {nvidia.com/gpu: "{{ .Values.gpus }}",'
    )
    workload = Workload.from_manifest(load_text(text, "d.yaml")[0])
    assert workload.replicas is None
    assert "nvidia.com/gpu" not in workload.containers[0].limits


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("replicas: 3", "replicas: three", 7, "spec.replicas must be an integer"),
        ("limits: {nvidia.com/gpu: 2,", "limits: {nvidia.com/gpu: two,", 45, "a quantity"),
        ("terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 4.5", 28, "integer"),
        ("gpu-brand: nvidia", "gpu-brand: [nvidia]", 15, "must be a string"),
    ],
)
def test_wrong_types_name_file_and_line(old: str, new: str, line: int, words: str) -> None:
    (manifest,) = load_text(DEPLOYMENT.replace(old, new, 1), "d.yaml")
    with pytest.raises(ManifestError) as caught:
        Workload.from_manifest(manifest)
    text = str(caught.value)
    assert text.startswith(f"d.yaml:{line}: ")
    assert words in text
    assert "fix:" in text


def test_workload_view_rejects_other_kinds() -> None:
    (manifest,) = load_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "s.yaml")
    with pytest.raises(ManifestError, match="not a workload"):
        Workload.from_manifest(manifest)


def test_service_and_service_monitor_views_on_the_tutorial() -> None:
    loaded = read_manifests(["examples/tutorial/resources.yaml"])
    service = Service.from_manifest(loaded.by_kind("Service")[0])
    assert service.selector == {"app": "go-from-configmap"}
    assert service.selects({"app": "go-from-configmap", "pod-template-hash": "x"})
    assert not service.selects({"app": "other"})
    port = service.port_named("metrics")
    assert port is not None
    assert (port.port, port.target_port) == (8080, 8080)
    monitor = ServiceMonitor.from_manifest(loaded.by_kind("ServiceMonitor")[0])
    assert monitor.labels == {"release": "prometheus"}
    assert monitor.selector.matches(service.labels)
    assert monitor.namespace_selector.match_names == ("kube-system",)
    assert not monitor.namespace_selector.covers("gpu-demo", own_namespace="gpu-demo")
    assert monitor.namespace_selector.covers("kube-system", own_namespace="gpu-demo")
    (endpoint,) = monitor.endpoints
    assert (endpoint.port, endpoint.path, endpoint.interval, endpoint.honor_labels) == (
        "metrics",
        "/metrics",
        30.0,
        False,
    )


def test_service_monitor_namespace_selector_forms() -> None:
    base = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\n"
    own = ServiceMonitor.from_manifest(load_text(base + "spec: {selector: {}}\n", "m.yaml")[0])
    assert own.namespace_selector.covers("a", own_namespace="a")
    assert not own.namespace_selector.covers("b", own_namespace="a")
    anywhere = ServiceMonitor.from_manifest(
        load_text(base + "spec: {selector: {}, namespaceSelector: {any: true}}\n", "m.yaml")[0]
    )
    assert anywhere.namespace_selector.covers("b", own_namespace="a")
    bad = load_text(base + "spec:\n  endpoints:\n    - {port: m, interval: often}\n", "m.yaml")[0]
    with pytest.raises(ManifestError, match=r"^m\.yaml:6: .*a duration"):
        ServiceMonitor.from_manifest(bad)


def test_service_without_selector() -> None:
    (manifest,) = load_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "s.yaml")
    service = Service.from_manifest(manifest)
    assert service.selector is None
    assert not service.selects({"app": "x"})
    assert service.type == "ClusterIP"
