"""The simulator's speed-ups change nothing: runs with them and without them give the same
timeline record by record (and the same request log).

- Storing only the series the queries can select (``scrape_only``), and not running the
  scrape loops of targets with none of them (``gpuscale.sim.scrape``).
- Answering a repeated query at the same instant from memory when nothing was written
  since, and reusing the previous answer of a value-only query whose selectors pick the
  same values (``PromQLBackend``).
- The HPA's repeated sync (``HorizontalPodAutoscaler._resync``) and KEDA's repeated
  active poll (``ScaledObjectLoops._active_poll``), against runs that take neither.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.controllers.hpa import HorizontalPodAutoscaler
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.promql import Result, VectorResult
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.keda import ScaledObjectLoops, ScaledObjectSource
from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import encode_record

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"

LLM = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ai, labels: {app: llm}}
spec:
  replicas: 1
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      nodeSelector: {doks.digitalocean.com/gpu-brand: amd}
      tolerations: [{key: amd.com/gpu, operator: Exists}]
      containers:
        - name: server
          image: "vllm:1"
          ports: [{name: http, containerPort: 8000}]
          readinessProbe: {httpGet: {path: /health, port: http}, periodSeconds: 5}
          resources: {limits: {amd.com/gpu: "1"}}
---
apiVersion: v1
kind: Service
metadata: {name: llm, namespace: ai, labels: {app: llm}}
spec: {selector: {app: llm}, ports: [{name: http, port: 8000}]}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: llm, namespace: ai, labels: {release: prometheus}}
spec:
  selector: {matchLabels: {app: llm}}
  endpoints: [{port: http, interval: 15s}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: llm, namespace: ai}
spec:
  scaleTargetRef: {name: llm}
  minReplicaCount: 1
  maxReplicaCount: 6
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "4"
        query: QUERY
"""

LLM_PROFILE = """
node_pools:
  - {name: gpu, size: gpu-mi300x1-192gb, min_nodes: 1, max_nodes: 6, provisioning_time: 3m}
workloads:
  llm: {image_pull_time: 30s, startup_time: 40s, concurrency: 4, service_time: 2s,
        latency_target: 5s, request_timeout: 30s}
"""


def _both(
    inputs: SimulationInputs, load: LoadSpec, until: float
) -> tuple[SimulationResult, SimulationResult]:
    fast = inputs.simulation(load=load, seed=5).run(until)
    full = Simulation(
        inputs.spec,
        metrics=inputs.prometheus.backend(reuse_values=False),
        seed=5,
        scalers=inputs.scalers(),
        load=load,
        scrape_only=None,
    ).run(until)
    return fast, full


def _same(fast: SimulationResult, full: SimulationResult) -> None:
    assert [encode_record(r) for r in fast.records] == [encode_record(r) for r in full.records]
    assert fast.requests.keys() == full.requests.keys()
    for key, log in fast.requests.items():
        other = full.requests[key]
        assert np.array_equal(log.outcomes, other.outcomes)
        assert np.array_equal(log.latencies, other.latencies, equal_nan=True)


@pytest.mark.parametrize(
    ("folder", "namespace"), [("tutorial", "kube-system"), ("tutorial-fixed", "default")]
)
def test_storing_only_queried_series_changes_nothing_in_the_tutorial(
    folder: str, namespace: str
) -> None:
    path = ROOT / "examples" / folder
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace=namespace,
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    assert inputs.scrape_only is not None
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    fast, full = _both(inputs, LoadSpec(scenario=scenario), 3600.0)
    _same(fast, full)
    assert fast.scrapes < full.scrapes


@pytest.mark.parametrize(
    ("query", "scales"),
    [
        (
            'sum(gpuscale_requests_in_flight{namespace="ai"})'
            ' + sum(gpuscale_requests_queued{namespace="ai"})',
            True,
        ),
        ('avg(gpu_gfx_activity{namespace="ai"}) / 5', True),
        ('sum(rate(gpuscale_request_duration_seconds_count{service="llm"}[2m])) * 4', True),
        ('count(up{namespace="ai"} == 1)', False),
        ('sum({__name__="gpuscale_requests_queued"})', True),
    ],
)
def test_storing_only_queried_series_changes_nothing_for_requests(query: str, scales: bool) -> None:
    text = LLM.replace("QUERY", repr(query))
    inputs = build_inputs(
        ManifestSet(load_text(text, "llm.yaml")), load_profile_text(LLM_PROFILE, "gpuscale.yaml")
    )
    scenario = parse_scenario(
        "steps:\n  - {at: 0s, request_rate: 1}\n  - {at: 10m, ramp: {from: 1, to: 9, over: 20m}}\n"
        "  - {at: 45m, request_rate: 0.5}\n",
        source="s.yaml",
    )
    fast, full = _both(inputs, LoadSpec(scenario=scenario), 4200.0)
    _same(fast, full)
    changes = sum(1 for r in fast.records for d in r.decisions if d.action == "scale")
    assert (changes >= 2) == scales


def test_a_repeated_query_at_the_same_instant_is_the_same_answer() -> None:
    backend = PromQLBackend()
    ref = backend.series_ref({"__name__": "x", "pod": "a"})
    backend.append_scrape([ref], 1_000, [3.0])
    first: Result = backend.instant("sum(x)", 2_000)
    assert backend.instant("sum(x)", 2_000) is first
    assert backend.evaluations == 1
    backend.append_scrape([ref], 2_000, [5.0])
    again = backend.instant("sum(x)", 2_000)
    assert again is not first
    assert isinstance(again, VectorResult)
    assert again.samples[0].value == 5.0
    assert backend.evaluations == 2


QUERIES = [
    'sum(g{job="a"})',
    "sum(g) / sum(h)",
    "max by (pod) (g) > bool 2",
    "count(g != 0)",
    "clamp_min(avg(g), 1) * 3",
    "scalar(sum(h)) + 1",
    'abs(-sum(g{pod!="p1"}))',
    # not value-only: always evaluated, must still agree
    "sum(rate(g[1m]))",
    'sum(g{pod=~"p."})',
    "timestamp(h)",
]


def _answer(result: Result) -> object:
    if isinstance(result, VectorResult):
        return (
            result.t_ms,
            [(s.labels, "nan" if s.value != s.value else s.value) for s in result.samples],
        )
    return result.to_api_json()


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["2", "3"]),
    st.lists(
        st.tuples(
            st.integers(1, 40_000),
            st.sampled_from(["g", "h"]),
            st.sampled_from(["p1", "p2"]),
            st.sampled_from([0.0, 1.0, 3.0, math.nan, None]),
        ),
        max_size=60,
    ),
    st.lists(st.integers(0, 45_000), min_size=1, max_size=40),
)
def test_reused_values_are_the_engine_answers(version: str, writes, times) -> None:  # type: ignore[no-untyped-def]
    fast = PromQLBackend(lookback_ms=10_000, version=version)  # type: ignore[arg-type]
    slow = PromQLBackend(lookback_ms=10_000, version=version, reuse_values=False)  # type: ignore[arg-type]
    events = sorted(
        [(t, 0, w) for t, *w in writes] + [(t, 1, None) for t in times], key=lambda e: e[:2]
    )
    last: dict[tuple[str, str], int] = {}
    for t, kind, write in events:
        if kind == 0:
            name, pod, value = write
            if last.get((name, pod), -1) >= t:
                continue
            last[(name, pod)] = t
            for backend in (fast, slow):
                labels = {"__name__": name, "job": "a", "pod": pod}
                if value is None:
                    backend.mark_stale(labels, t)
                else:
                    backend.append_scrape([backend.series_ref(labels)], t, [value])
            continue
        for query in QUERIES:
            assert _answer(fast.instant(query, t)) == _answer(slow.instant(query, t)), query
    assert slow.reused == 0


def test_a_steady_gauge_reuses_answers() -> None:
    backend = PromQLBackend()
    ref = backend.series_ref({"__name__": "g", "pod": "a"})
    for step in range(20):
        backend.append_scrape([ref], step * 30_000, [160.0])
        for t in (step * 30_000 + 1, step * 30_000 + 15_000):
            result = backend.instant("sum(g) / 2", t)
            assert isinstance(result, VectorResult)
            assert result.samples[0].value == 80.0
            assert result.t_ms == t
    assert backend.reused >= 30
    assert backend.evaluations <= 10


def test_kube_state_metrics_answers_from_its_last_scrape_only_when_nothing_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpuscale.sim.targets import KubeStateMetrics

    path = ROOT / "examples" / "tutorial"
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    fast = inputs.simulation(load=LoadSpec(scenario=scenario), seed=2).run(3600.0)
    original = KubeStateMetrics.collect

    def always(self: KubeStateMetrics, now: float):  # type: ignore[no-untyped-def]
        self._seen = -2
        return original(self, now)

    monkeypatch.setattr(KubeStateMetrics, "collect", always)
    full = inputs.simulation(load=LoadSpec(scenario=scenario), seed=2).run(3600.0)
    _same(fast, full)


def test_repeated_hpa_syncs_and_keda_polls_change_nothing_in_the_tutorial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = ROOT / "examples" / "tutorial"
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    load = LoadSpec(scenario=parse_scenario(SCENARIO.read_text(), source=str(SCENARIO)))
    fast = inputs.simulation(load=load, seed=3).run(7200.0)
    monkeypatch.setattr(HorizontalPodAutoscaler, "_resync", lambda self, now, repeat: None)
    build = ScaledObjectLoops.__init__

    def never_repeating(self: ScaledObjectLoops, source: ScaledObjectSource) -> None:
        build(self, source)
        self._repeatable = False

    monkeypatch.setattr(ScaledObjectLoops, "__init__", never_repeating)
    full = inputs.simulation(load=load, seed=3).run(7200.0)
    _same(fast, full)
    # the tutorial flaps: the HPA scales 2 <-> 1 again and again
    assert sum(1 for r in fast.records for d in r.decisions if d.reason == "SuccessfulRescale") > 10
