"""The scaffold ``gpuscale init`` writes: valid, loadable, and corrected where the tutorial
is wrong (the same points examples/tutorial/README.md lists)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuscale.errors import InputError
from gpuscale.manifests import (
    Service,
    ServiceMonitor,
    Workload,
    load_text,
    validate,
)
from gpuscale.manifests.scaffold import ScaffoldOptions, scaffold
from gpuscale.profile import load_profile_text

CASES = [
    ScaffoldOptions(name="llm", namespace="ml", gpu=gpu, provider=provider)
    for gpu in ("amd", "nvidia")
    for provider in ("doks", "generic")
]


@pytest.mark.parametrize("options", CASES, ids=lambda o: f"{o.gpu}-{o.provider}")
def test_scaffold_validates_and_is_corrected(options: ScaffoldOptions) -> None:
    files = {f.name: f for f in scaffold(options)}
    assert set(files) == {
        "manifests/deployment.yaml",
        "manifests/service.yaml",
        "manifests/servicemonitor.yaml",
        "manifests/scaledobject.yaml",
        "gpuscale.yaml",
    }
    manifests = [m for f in files.values() if f.manifest for m in load_text(f.text, f.name)]
    assert validate(manifests) == []
    by_kind = {m.kind: m for m in manifests}
    resource = "amd.com/gpu" if options.gpu == "amd" else "nvidia.com/gpu"

    workload = Workload.from_manifest(by_kind["Deployment"])
    (container,) = workload.containers
    assert container.requests[resource] == container.limits[resource] == 1.0
    assert container.readiness_probe is not None
    assert container.readiness_probe.path == "/readyz"
    assert [t.key for t in workload.tolerations] == [resource]
    if options.provider == "doks":
        assert workload.node_selector == {"doks.digitalocean.com/gpu-brand": options.gpu}
    else:
        assert workload.node_selector == {}

    service = Service.from_manifest(by_kind["Service"])
    assert service.selects(workload.template_labels)
    monitor = ServiceMonitor.from_manifest(by_kind["ServiceMonitor"])
    assert monitor.labels["release"] == "prometheus"
    assert monitor.selector.matches(service.labels)
    assert monitor.namespace_selector.covers("ml", own_namespace="ml")
    assert service.port_named(monitor.endpoints[0].port or "") is not None

    spec = by_kind["ScaledObject"].body["spec"]
    assert "cooldownPeriod" not in spec
    assert spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    (trigger,) = spec["triggers"]
    assert trigger["metricType"] == "AverageValue"
    assert trigger["metadata"]["query"] == 'sum(my_custom_gauge{namespace="ml", service="llm"})'
    assert trigger["metadata"]["ignoreNullValues"] == "false"
    assert "monitoring" in trigger["metadata"]["serverAddress"]

    profile = load_profile_text(files["gpuscale.yaml"].text, "gpuscale.yaml")
    assert profile.cluster.provider == options.provider
    (gpu_pool,) = profile.gpu_pools
    assert gpu_pool.gpu == options.gpu
    assert gpu_pool.max_nodes == 8
    assert profile.workload("llm").startup_time == 5.0
    assert all(t.tolerates(taint) for taint in gpu_pool.node_taints for t in workload.tolerations)
    assert all(gpu_pool.labels.get(k) == v for k, v in workload.node_selector.items())


@pytest.mark.parametrize(
    ("change", "flag"),
    [
        ({"name": "Bad_Name"}, "--name"),
        ({"namespace": "-ns"}, "--namespace"),
        ({"min_replicas": 0}, "--min-replicas"),
        ({"max_replicas": 0}, "--max-replicas"),
        ({"threshold": 0.0}, "--threshold"),
        ({"metric": "9lives"}, "--metric"),
        ({"prometheus_namespace": "Mon"}, "--prometheus-namespace"),
        ({"scrape_interval": "soon"}, "--scrape-interval"),
        ({"scrape_interval": "500ms"}, "--scrape-interval"),
    ],
)
def test_bad_options_name_the_flag(change: dict[str, object], flag: str) -> None:
    options = replace(ScaffoldOptions(name="app", namespace="ns"), **change)  # type: ignore[arg-type]
    with pytest.raises(InputError) as caught:
        scaffold(options)
    assert str(caught.value).startswith(f"{flag}: ")
    assert "fix:" in str(caught.value)


# The name is the Service's too, so it follows ValidateServiceName (DNS-1035 label, in
# kubernetes pkg/apis/core/validation); namespaces follow ValidateNamespaceName (DNS-1123).
@pytest.mark.parametrize(
    ("change", "flag", "accepted"),
    [
        ({"name": "app-1"}, "--name", True),
        ({"name": "a" * 63}, "--name", True),
        ({"name": "1app"}, "--name", False),
        ({"name": "a" * 64}, "--name", False),
        ({"name": "app-"}, "--name", False),
        ({"namespace": "1ml"}, "--namespace", True),
        ({"namespace": "ml.prod"}, "--namespace", False),
        ({"namespace": "n" * 64}, "--namespace", False),
    ],
)
def test_names_follow_the_api_servers_rules(
    change: dict[str, str], flag: str, accepted: bool
) -> None:
    options = replace(ScaffoldOptions(name="app", namespace="ns"), **change)  # type: ignore[arg-type]
    if accepted:
        assert scaffold(options)
        return
    with pytest.raises(InputError) as caught:
        scaffold(options)
    text = str(caught.value)
    assert text.startswith(f"{flag}: ")
    assert "\n" not in text
    assert ("DNS-1035" if flag == "--name" else "DNS-1123 label") in text
    if flag == "--name":
        assert "ending with a letter or digit" in text
        assert "starting with a letter" in text


def test_threshold_and_bounds_flow_into_the_scaled_object() -> None:
    options = ScaffoldOptions(
        name="a", namespace="b", threshold=2.5, min_replicas=2, max_replicas=3
    )
    text = next(f.text for f in scaffold(options) if f.name.endswith("scaledobject.yaml"))
    spec = load_text(text, "s.yaml")[0].body["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 3)
    assert spec["triggers"][0]["metadata"]["threshold"] == "2.5"


def test_the_hpa_owns_replicas_and_keda_keeps_its_default_polling() -> None:
    """No Deployment ``spec.replicas`` (server-side apply would fight the HPA over it) and
    no ``pollingInterval`` (KEDA's default 30s is right; lint notes that with
    minReplicaCount >= 1 it does not pace scaling)."""
    files = {f.name: f.text for f in scaffold(ScaffoldOptions(name="a", namespace="b"))}
    deployment = load_text(files["manifests/deployment.yaml"], "d.yaml")[0]
    scaled = load_text(files["manifests/scaledobject.yaml"], "s.yaml")[0]
    assert "replicas" not in deployment.body["spec"]
    assert "pollingInterval" not in scaled.body["spec"]
    assert "owns the count" in files["manifests/deployment.yaml"]


@pytest.mark.parametrize(
    ("given", "written", "seconds"),
    [("15s", "15s", 15.0), ("1m", "1m", 60.0), ("90s", "1m30s", 90.0), ("1.5s", "1500ms", 1.5)],
)
def test_the_servicemonitor_scrapes_at_the_profiles_interval(
    given: str, written: str, seconds: float
) -> None:
    files = {
        f.name: f.text
        for f in scaffold(ScaffoldOptions(name="a", namespace="b", scrape_interval=given))
    }
    monitor = ServiceMonitor.from_manifest(
        load_text(files["manifests/servicemonitor.yaml"], "m.yaml")[0]
    )
    profile = load_profile_text(files["gpuscale.yaml"], "gpuscale.yaml")
    assert [e.interval for e in monitor.endpoints] == [seconds]
    assert profile.prometheus.scrape_interval == seconds
    assert f"interval: {written}\n" in files["manifests/servicemonitor.yaml"]
