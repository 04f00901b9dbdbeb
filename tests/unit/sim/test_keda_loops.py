"""KEDA's poll and the generated HPA as simulator loops (gpuscale.sim.keda).

- ``trigger_value`` reads a vector answer directly; a property checks it against KEDA's
  own response handling (``parse_prometheus_response`` on the JSON the answer would be).
- The loops on a hand-built world: the HPA's arithmetic and reasons in the timeline,
  KEDA's activation from zero, fallback after failures, pause annotations.
- A poll that repeats an active poll's reads at the same count (``_active_poll``) answers
  as the full poll, on random sequences of values, counts and times.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.controllers.keda import (
    PrometheusQueryError,
    generated_hpa,
    parse_prometheus_response,
    parse_prometheus_trigger,
)
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.promql import PromQLError, Result, Sample, ScalarResult, VectorResult
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.keda import ScaledObjectLoops, ScaledObjectSource, trigger_value
from gpuscale.sim.scalers import ScaleView
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.world import LoadSpec


class _Answer:
    """A backend that answers every query with a fixed result (or error)."""

    def __init__(self, result: Result | PromQLError) -> None:
        self.result = result

    def instant(self, query: str, t_ms: int) -> Result:
        if isinstance(self.result, PromQLError):
            raise self.result
        return self.result


def _slow(result: Result, ignore_null: bool, query: str) -> tuple[float | None, str | None]:
    try:
        body = json.dumps(result.to_api_json())
        return parse_prometheus_response(body, ignore_null_values=ignore_null, query=query), None
    except PrometheusQueryError as error:
        return None, str(error)


def _trigger(ignore_null: bool) -> object:
    return parse_prometheus_trigger(
        {
            "serverAddress": "http://prometheus:9090",
            "query": "sum(x)",
            "threshold": "80",
            "ignoreNullValues": "true" if ignore_null else "false",
        }
    )


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-7, 1e21, 160.0, -5.0, 2.5e-300]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=3), st.booleans())
def test_the_vector_fast_path_is_keda_response_handling(samples: list[float], ignore: bool) -> None:
    result = VectorResult(
        tuple(Sample((("pod", f"p{i}"),), v) for i, v in enumerate(samples)), 90_000
    )
    trigger = _trigger(ignore)
    fast = trigger_value(_Answer(result), trigger, 90_000)  # type: ignore[arg-type]
    slow = _slow(result, ignore, "sum(x)")
    assert fast[1] == slow[1]
    if fast[0] is None or slow[0] is None:
        assert fast[0] is slow[0]
    else:
        assert fast[0] == slow[0] or (math.isnan(fast[0]) and math.isnan(slow[0]))
        assert math.copysign(1.0, fast[0]) == math.copysign(1.0, slow[0])


def test_a_scalar_answer_is_an_error_for_keda() -> None:
    value, error = trigger_value(_Answer(ScalarResult(3.0, 0)), _trigger(True), 0)  # type: ignore[arg-type]
    assert value is None
    assert error is not None


def test_a_query_prometheus_fails_is_an_http_error_for_keda() -> None:
    failed = PromQLError("many-to-many matching not allowed")
    assert trigger_value(_Answer(failed), _trigger(True), 0) == (  # type: ignore[arg-type]
        None,
        "prometheus query api returned error. status: 422",
    )
    unparsable = PromQLError("cannot parse PromQL: unexpected end")
    assert trigger_value(_Answer(unparsable), _trigger(True), 0)[1] == (  # type: ignore[arg-type]
        "prometheus query api returned error. status: 400"
    )


# --------------------------------------------------------------------------- in a world

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: demo, labels: {{app: app}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
      containers:
        - name: app
          image: app:1
          ports: [{{name: metrics, containerPort: 8080}}]
          resources: {{requests: {{cpu: 500m}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: app, namespace: demo, labels: {{app: app}}}}
spec:
  selector: {{app: app}}
  ports: [{{name: metrics, port: 8080}}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: app, namespace: demo, labels: {{release: prometheus}}}}
spec:
  selector: {{matchLabels: {{app: app}}}}
  endpoints: [{{port: metrics, interval: 15s}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: app
  namespace: demo
  annotations: {annotations}
spec:
  scaleTargetRef: {{name: app}}
  minReplicaCount: {min}
  maxReplicaCount: 5
  pollingInterval: 30
  cooldownPeriod: 60
{extra}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "10"
        query: {query}
"""

PROFILE = """
node_pools:
  - name: cpu
    size: s-4vcpu-8gb
    min_nodes: 1
    max_nodes: 4
    provisioning_time: 1m
workloads:
  app: {image_pull_time: 0s, startup_time: 0s}
# the exact grid: these tests assert sync times as multiples of the periods
timing: {hpa_reconcile: 0s, keda_start: 0s, keda_poll: 0s, autoscaler_run_once: 0s, pod_start: 0s}
"""


def _run(
    *,
    steps: str,
    until: float,
    replicas: int = 1,
    minimum: int = 1,
    query: str = 'sum(load{namespace="demo"})',
    extra: str = "",
    annotations: str = "{}",
):  # type: ignore[no-untyped-def]
    text = MANIFESTS.format(
        replicas=replicas,
        min=minimum,
        query=json.dumps(query),
        extra=extra,
        annotations=annotations,
    )
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    scenario = parse_scenario(f"workload: app\nsteps:\n{steps}", source="s.yaml")
    sim = inputs.simulation(load=LoadSpec(scenario=scenario), seed=3)
    return sim.run(until)


def _decisions(result, controller: str):  # type: ignore[no-untyped-def]
    return [(r.t, d) for r in result.records for d in r.decisions if d.controller == controller]


def _spec(result, t: float) -> int:  # type: ignore[no-untyped-def]
    return [r for r in result.records if r.t <= t][-1].workloads[0].spec


def test_the_hpa_scales_with_upstream_reasons_and_arithmetic() -> None:
    result = _run(steps="  - at: 20s\n    set_gauge: {name: load, value: 35, pods: 1}\n", until=300)
    scales = [(t, d) for t, d in _decisions(result, "hpa") if d.action == "scale"]
    t, first = scales[0]
    assert first.reason == "SuccessfulRescale"
    assert first.detail.startswith("New size: 4; reason: external metric s0-prometheus above")
    assert "35 / target 10 (AverageValue) -> desired 4" in first.detail
    assert t % 15 == 0
    assert _spec(result, t) == 4
    state = next(r for r in result.records if r.t == t).workloads[0]
    assert state.metrics["hpa:s0-prometheus"] == 35.0
    assert state.desired == 4


def test_keda_activates_from_zero_and_deactivates_after_the_cooldown() -> None:
    result = _run(
        minimum=0,
        replicas=0,
        query="vector(7)",
        steps="  - at: 1s\n    set_gauge: {name: load, value: 1, pods: 1}\n",
        until=120,
    )
    keda = [(t, d) for t, d in _decisions(result, "keda") if d.action == "scale"]
    assert keda[0][1].reason == "KEDAScaleTargetActivated"
    assert "from 0 to 1, triggered by s0-prometheus" in keda[0][1].detail
    assert keda[0][0] == 0.0


def test_scale_to_zero_waits_for_the_cooldown_after_the_last_activity() -> None:
    result = _run(
        minimum=0,
        steps=(
            "  - at: 5s\n    set_gauge: {name: load, value: 3, pods: 1}\n"
            "  - at: 100s\n    set_gauge: {name: load, value: 0, pods: all}\n"
        ),
        until=400,
    )
    keda = _decisions(result, "keda")
    deactivated = [t for t, d in keda if d.reason == "KEDAScaleTargetDeactivated"]
    polls = range(0, 400, 30)

    def seen(t: float) -> float:
        state = [r for r in result.records if r.t <= t][-1].workloads[0]
        return state.metrics.get("query:s0-prometheus") or 0.0

    assert deactivated
    # the last poll that saw the trigger active, plus cooldownPeriod (60 s), then the next
    # poll strictly after (polls every 30 s from 0)
    last_active = max(t for t in polls if seen(t) > 0)
    assert deactivated[0] == min(t for t in polls if t > last_active + 60)
    assert _spec(result, deactivated[0]) == 0


def test_paused_replicas_annotation_sets_the_count_and_stops_scaling() -> None:
    result = _run(
        annotations='{"autoscaling.keda.sh/paused-replicas": "3"}',
        steps="  - at: 20s\n    set_gauge: {name: load, value: 50, pods: 1}\n",
        until=200,
    )
    assert _decisions(result, "hpa") == []
    assert {r.workloads[0].spec for r in result.records if r.t > 0} == {3}


def test_fallback_replaces_a_failing_trigger_after_the_threshold() -> None:
    text = MANIFESTS.format(
        replicas=1,
        min=1,
        query=json.dumps('sum(load{namespace="nowhere"})'),
        extra="  fallback: {failureThreshold: 2, replicas: 3}",
        annotations="{}",
    ).replace('threshold: "10"', 'threshold: "10"\n        ignoreNullValues: "false"')
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    result = inputs.simulation(seed=1).run(200.0)
    hpa = _decisions(result, "hpa")
    # every poll and every HPA read counts a failure; after more than 2 the fallback
    # metric (3 replicas' worth: 3 × 10 = 30) reaches the HPA, which scales to 3
    assert hpa[0][1].reason == "FailedGetExternalMetric"
    scaled = [(t, d) for t, d in hpa if d.action == "scale"]
    assert scaled
    assert "New size: 3" in scaled[0][1].detail
    assert _spec(result, 200) == 3


def test_generated_hpa_shape_for_the_tutorial_threshold() -> None:
    spec = {
        "scaleTargetRef": {"name": "go"},
        "minReplicaCount": 1,
        "maxReplicaCount": 8,
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {"serverAddress": "http://p:9090", "query": "x", "threshold": "80"},
            }
        ],
    }
    hpa = generated_hpa(spec, name="go")
    assert [(m.name, m.target_type, m.target) for m in hpa.metrics] == [
        ("s0-prometheus", "AverageValue", 80.0)
    ]


@pytest.mark.parametrize("ignore", [True, False])
def test_an_empty_answer_follows_ignore_null_values(ignore: bool) -> None:
    value, error = trigger_value(_Answer(VectorResult((), 0)), _trigger(ignore), 0)  # type: ignore[arg-type]
    assert (value, error is None) == ((0.0, True) if ignore else (None, False))


def test_without_fallback_a_failing_trigger_is_the_hpa_metric_error() -> None:
    text = MANIFESTS.format(
        replicas=2,
        min=1,
        query=json.dumps('sum(load{namespace="nowhere"})'),
        extra="",
        annotations="{}",
    ).replace('threshold: "10"', 'threshold: "10"\n        ignoreNullValues: "false"')
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    result = inputs.simulation(seed=1).run(120.0)
    hpa = _decisions(result, "hpa")
    assert [d.reason for _, d in hpa] == ["FailedGetExternalMetric"]
    assert "metric:s0-prometheus encountered error" in hpa[0][1].detail
    keda = _decisions(result, "keda")
    assert keda[0][1].reason == "TriggerError"
    assert "the result is empty" in keda[0][1].detail
    assert _spec(result, 120) == 2  # an error without fallback freezes the count


def _source(minimum: int) -> ScaledObjectSource:
    text = MANIFESTS.format(
        replicas=1, min=minimum, query=json.dumps("sum(load)"), extra="", annotations="{}"
    )
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    return inputs.scaled_objects[0]


polls = st.lists(
    st.tuples(
        st.sampled_from([0.0, 5.0, 50.0, 50.0, 50.0, -0.0]),
        st.sampled_from([0, 1, 1, 1, 2, 6]),
        st.sampled_from([30.0, 30.0, 31.5, 90.0, 400.0]),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=100, deadline=None)
@given(polls, st.sampled_from([0, 1]))
def test_a_repeated_active_poll_answers_as_the_full_poll(
    steps: list[tuple[float, int, float]], minimum: int
) -> None:
    source = _source(minimum)
    fast, full = ScaledObjectLoops(source), ScaledObjectLoops(source)
    now = 0.0
    for value, replicas, delta in steps:
        now += delta
        answer = _Answer(VectorResult((Sample((), value),), round(now * 1000)))
        view = ScaleView(now, "demo", "app", replicas, replicas, replicas, replicas, answer, 0.3)  # type: ignore[arg-type]
        full._active_poll = None  # the full poll every time
        assert fast.check(view) == full.check(view)
        assert fast.last_active_time == full.last_active_time
        assert fast._poll_state == full._poll_state


def test_a_steady_active_poll_is_repeated() -> None:
    loops = ScaledObjectLoops(_source(1))
    for step in range(3):
        answer = _Answer(VectorResult((Sample((), 50.0),), 30_000 * step))
        loops.check(ScaleView(30.0 * step, "demo", "app", 1, 1, 1, 1, answer))  # type: ignore[arg-type]
        assert loops._active_poll == (1, [(50.0, None)])
        assert loops.last_active_time == 30.0 * step
