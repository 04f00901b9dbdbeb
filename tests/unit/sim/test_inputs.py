"""From manifests and a profile to a simulation (gpuscale.sim.inputs): what is read from
where, what is refused with ``file:line``, and what is only a warning."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpuscale.controllers.cluster_autoscaler import (
    AutoscalerState,
    AutoscalingOptions,
    ClusterSnapshot,
    NodeGroup,
    NodeSnapshot,
    run_once,
)
from gpuscale.controllers.kubelet import ReadinessProbe
from gpuscale.controllers.scheduler import NodeView, quantities
from gpuscale.errors import InputError
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import build_inputs, gauges_of, needs_capacity
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.traces import parse_trace

ROOT = Path(__file__).resolve().parents[3]
TUTORIAL = ROOT / "examples" / "tutorial"
FIXED = ROOT / "examples" / "tutorial-fixed"


def _tutorial(namespace: str = "kube-system"):  # type: ignore[no-untyped-def]
    return build_inputs(
        read_manifests([TUTORIAL]),
        read_profile(TUTORIAL / "gpuscale.yaml"),
        namespace=namespace,
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )


def test_the_tutorial_workload_comes_from_its_deployment_and_profile() -> None:
    inputs = _tutorial()
    (workload,) = inputs.spec.workloads
    assert workload.key == "kube-system/go-from-configmap"
    assert workload.replicas == 1
    assert workload.requests == {"amd.com/gpu": 1.0}
    assert workload.node_selector == {"doks.digitalocean.com/gpu-brand": "amd"}
    assert [t.key for t in workload.tolerations] == ["CriticalAddonsOnly", "amd.com/gpu"]
    assert workload.image == "python:3.12-slim"
    assert (workload.image_pull_s, workload.startup_s) == (15.0, 30.0)
    assert workload.readiness == "started"  # no readiness probe: Ready when it starts
    assert workload.local_storage  # the emptyDir app-dir
    assert workload.gauges == ("my_custom_gauge",)
    # scraped through ServiceMonitor go-from-configmap: endpoint "metrics", 30 s
    assert workload.scraped
    assert (workload.scrape_interval_s, workload.metrics_port, workload.container) == (
        30.0,
        8080,
        "go-runner",
    )


def test_the_tutorial_pools_and_timings_come_from_its_profile() -> None:
    inputs = _tutorial()
    pools = {p.name: p for p in inputs.spec.pools}
    gpu = pools["gpu"]
    assert (gpu.min_nodes, gpu.max_nodes, gpu.price_per_hour) == (0, 8, 1.99)
    assert gpu.provisioning_s == 600.0
    assert gpu.allocatable["amd.com/gpu"] == 1
    assert gpu.labels["doks.digitalocean.com/gpu-brand"] == "amd"
    assert [t.key for t in gpu.taints] == ["amd.com/gpu"]
    # the running Deployment's one replica needs one GPU node at the start
    assert gpu.initial_nodes == 1
    assert (pools["general"].min_nodes, pools["general"].max_nodes) == (2, 2)
    assert inputs.spec.autoscaler.unschedulable_pod_with_gpu_time_buffer_s == 30.0
    assert inputs.spec.autoscaler.expander == "random"  # DOKS' default
    assert inputs.spec.control_plane.hpa.sync_period_s == 15.0
    assert inputs.spec.prometheus.scrape_interval_s == 30.0
    assert inputs.prometheus.lookback_ms == 300_000
    assert inputs.prometheus.version == "3"


def test_the_scaled_object_becomes_keda_and_its_hpa() -> None:
    inputs = _tutorial()
    (source,) = inputs.scaled_objects
    assert (source.namespace, source.target) == ("kube-system", "go-from-configmap")
    assert source.spec.polling_interval == 30
    assert (source.hpa.min_replicas, source.hpa.max_replicas) == (1, 8)
    assert source.hpa.behavior is None
    assert inputs.thresholds() == {"query:s0-prometheus": 80.0, "hpa:s0-prometheus": 80.0}
    assert [s.name for s in inputs.scalers()["kube-system/go-from-configmap"]] == ["keda", "hpa"]
    assert any("CooldownPeriod is configured but is not relevant" in w for w in inputs.warnings)


def test_in_another_namespace_the_tutorial_is_not_scraped_and_says_why() -> None:
    inputs = _tutorial("default")
    assert not inputs.spec.workloads[0].scraped
    (warning,) = [w for w in inputs.warnings if "not scraped" in w]
    assert "namespaceSelector covers kube-system" in warning
    assert f"ServiceMonitor go-from-configmap ({TUTORIAL / 'resources.yaml'}:" in warning


def test_the_fixed_example_reads_its_probe_interval_and_behavior() -> None:
    inputs = build_inputs(read_manifests([FIXED]), read_profile(FIXED / "gpuscale.yaml"))
    (workload,) = inputs.spec.workloads
    assert workload.namespace == "gpu-demo"
    assert workload.readiness == ReadinessProbe(period_s=5.0)
    assert workload.scrape_interval_s == 15.0
    assert workload.requests["cpu"] == pytest.approx(0.1)
    (source,) = inputs.scaled_objects
    assert source.hpa.behavior is not None
    assert source.hpa.behavior["scaleDown"]["stabilizationWindowSeconds"] == 600  # type: ignore[index]


BASE = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: "app:1"}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: so}
spec:
  scaleTargetRef: {name: TARGET}
  triggers:
    - type: TYPE
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "5"
        query: QUERY
"""


def _build(target: str = "app", kind: str = "prometheus", query: str = "sum(x)") -> object:
    text = BASE.replace("TARGET", target).replace("TYPE", kind).replace("QUERY", query)
    return build_inputs(ManifestSet(load_text(text, "app.yaml")), load_profile_text("", "p.yaml"))


@pytest.mark.parametrize(
    ("changes", "where", "message"),
    [
        ({"target": "other"}, "app.yaml:17", "scales Deployment default/other, which is not"),
        ({"kind": "kafka"}, "app.yaml:19", "trigger type 'kafka' is not simulated"),
        ({"query": "sort_by_label(x)"}, "app.yaml:23", "sort_by_label"),
        ({"query": "sum(x"}, "app.yaml:23", "cannot parse PromQL"),
    ],
)
def test_what_cannot_be_simulated_is_one_line_naming_the_line(
    changes: dict[str, str], where: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        _build(**changes)
    assert caught.value.where is not None
    assert caught.value.where == where
    assert message in caught.value.message
    assert "\n" not in caught.value.one_line()


def test_an_hpa_manifest_is_a_warning_not_a_model() -> None:
    text = (
        BASE.replace("TARGET", "app").replace("TYPE", "prometheus").replace("QUERY", "sum(x)")
        + "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n"
        "spec: {scaleTargetRef: {name: app}, maxReplicas: 3}\n"
    )
    inputs = build_inputs(ManifestSet(load_text(text, "a.yaml")), load_profile_text("", "p"))
    (warning,) = [w for w in inputs.warnings if "HorizontalPodAutoscaler" in w]
    assert "is not simulated (a ScaledObject scales it too)" in warning


def test_requests_to_a_workload_without_capacity_name_the_profile_key() -> None:
    inputs = _tutorial()
    scenario = parse_scenario("steps:\n  - at: 0s\n    request_rate: 3\n", source="s.yaml")
    with pytest.raises(InputError) as caught:
        needs_capacity(scenario, {}, inputs)
    assert caught.value.where == "the profile"
    assert "workloads.go-from-configmap" in caught.value.message
    profile = TUTORIAL / "gpuscale.yaml"
    locate = load_profile_text(profile.read_text(), str(profile)).where
    with pytest.raises(InputError) as caught:
        needs_capacity(scenario, {}, inputs, locate=locate)
    line = _line_of(profile, "  go-from-configmap:")
    assert caught.value.where == f"{profile}:{line}"
    assert "workloads.go-from-configmap.service_time" in (caught.value.fix or "")


def _line_of(path: Path, prefix: str) -> int:
    lines = path.read_text().splitlines()
    return next(n for n, text in enumerate(lines, start=1) if text.startswith(prefix))


TOKENS_ONLY = (
    "workloads:\n  go-from-configmap:\n    concurrency: 4\n"
    "    prefill_tokens_per_second: 8000\n    decode_tokens_per_second: 60\n"
)


@pytest.mark.parametrize(
    ("scenario", "trace", "reason"),
    [
        (None, "timestamp\n0\n1\n", "the trace t.csv, which has no token columns"),
        ("steps:\n  - {at: 0s, request_rate: 2}\n", None, "request steps (s.yaml:2)"),
        ("steps:\n  - {at: 0s, ramp: {from: 0, to: 2, over: 1m}}\n", None, "(s.yaml:2)"),
    ],
)
def test_token_rates_alone_cannot_serve_requests_without_tokens(
    scenario: str | None, trace: str | None, reason: str
) -> None:
    inputs = build_inputs(
        read_manifests([TUTORIAL]),
        load_profile_text(TOKENS_ONLY, "p.yaml"),
        namespace="kube-system",
    )
    parsed = None if scenario is None else parse_scenario(scenario, source="s.yaml")
    traces = {} if trace is None else {"go-from-configmap": parse_trace(trace, source="t.csv")}
    with pytest.raises(InputError) as caught:
        needs_capacity(
            parsed, traces, inputs, locate=load_profile_text(TOKENS_ONLY, "p.yaml").where
        )
    assert caught.value.where == "p.yaml:4"
    assert reason in caught.value.message
    assert "workloads.go-from-configmap.service_time" in (caught.value.fix or "")
    assert "\n" not in caught.value.one_line()


@pytest.mark.parametrize("extra", ["    service_time: 2s\n", "    requests_per_second: 2\n"])
def test_token_rates_with_a_service_time_serve_requests_without_tokens(extra: str) -> None:
    text = TOKENS_ONLY + extra
    inputs = build_inputs(
        read_manifests([TUTORIAL]), load_profile_text(text, "p.yaml"), namespace="kube-system"
    )
    trace = parse_trace("timestamp\n0\n1\n", source="t.csv")
    needs_capacity(None, {"go-from-configmap": trace}, inputs)
    tokens = parse_trace("timestamp,prompt_tokens,output_tokens\n0,10,10\n", source="t.csv")
    token_inputs = build_inputs(
        read_manifests([TUTORIAL]),
        load_profile_text(TOKENS_ONLY, "p.yaml"),
        namespace="kube-system",
    )
    needs_capacity(None, {"go-from-configmap": tokens}, token_inputs)


def test_gauges_of_a_scenario_per_workload() -> None:
    scenario = parse_scenario(
        "steps:\n  - {at: 0s, set_gauge: {name: a, value: 1}}\n"
        "  - {at: 1s, set_gauge: {name: b, value: 1}, workload: w2}\n",
        source="s.yaml",
    )
    assert gauges_of(scenario, ["w1"]) == {"w1": ("a",), "w2": ("b",)}
    assert gauges_of(scenario, ["w1", "w2"]) == {"w2": ("b",)}


# The profile's autoscaler keys and the model option each must reach
# (docs/profile.md's autoscaler table; kubernetes/autoscaler FAQ.md flag names).
AUTOSCALER_KEYS = [
    ("scan_interval", "13s", "scan_interval_s", 13.0),
    ("scale_up_delay", "7s", "unschedulable_pod_time_buffer_s", 7.0),
    ("scale_up_delay_gpu", "45s", "unschedulable_pod_with_gpu_time_buffer_s", 45.0),
    ("new_pod_scale_up_delay", "5s", "new_pod_scale_up_delay_s", 5.0),
    ("scale_down_unneeded_time", "4m", "scale_down_unneeded_time_s", 240.0),
    ("scale_down_delay_after_add", "2m", "scale_down_delay_after_add_s", 120.0),
    ("scale_down_delay_after_delete", "1m", "scale_down_delay_after_delete_s", 60.0),
    ("scale_down_delay_after_failure", "7m", "scale_down_delay_after_failure_s", 420.0),
]


def _with_autoscaler(setting: str):  # type: ignore[no-untyped-def]
    return build_inputs(
        read_manifests([TUTORIAL]),
        load_profile_text(
            (TUTORIAL / "gpuscale.yaml").read_text() + f"autoscaler: {{{setting}}}\n", "p.yaml"
        ),
        namespace="kube-system",
    )


@pytest.mark.parametrize(("key", "value", "option", "seconds"), AUTOSCALER_KEYS)
def test_each_autoscaler_timing_of_the_profile_reaches_the_model(
    key: str, value: str, option: str, seconds: float
) -> None:
    default = getattr(_tutorial().spec.autoscaler, option)
    assert default != seconds  # the case tests a change
    options = _with_autoscaler(f"{key}: {value}").spec.autoscaler
    assert getattr(options, option) == seconds


def test_the_profiles_delay_after_failure_holds_scale_down_back_that_long() -> None:
    """``isScaleDownInCooldown`` (core/static_autoscaler.go): after a failed scale-down at
    t=0 an empty node above the pool's minimum is removable at 300 s with the default 3m
    delay, and still in cooldown with the profile's 7m."""
    pool = NodeView("template", {}, (), quantities({"cpu": 4, "memory": 2**33, "pods": 110}))
    node = NodeSnapshot(NodeView("cpu-0", {}, (), pool.allocatable), "cpu", ())
    snapshot = ClusterSnapshot((NodeGroup("cpu", 0, 2, 1, pool, 1.0),), (node,), {})
    failed = AutoscalerState(last_scale_down_fail=0.0, unneeded_since={"cpu-0": -1000.0})

    def status(options: AutoscalingOptions) -> str:
        result, _ = run_once(snapshot, failed, options, 300.0, random.Random(0))
        return result.scale_down_status

    assert status(_tutorial().spec.autoscaler) == "ScaleDownNodeDeleteStarted"
    later = _with_autoscaler("scale_down_delay_after_failure: 7m").spec.autoscaler
    assert status(later) == "ScaleDownInCooldown"
