"""KEDA's own end-to-end timing tests (kedacore/keda ``tests/internals/*``), transcribed
as simulations with the default profile's timing (``docs/timing.md``).

Each case keeps its upstream file and test name. Upstream's tests drive a
``metrics-api`` or ``kubernetes-workload`` trigger whose value a Job changes; here the
trigger is ``prometheus`` with a query on ``time()`` that changes at a known instant
(``vector(time() < bool 100)`` is 1 until t = 100 s, then 0), so no scrape phase
stands between the change and KEDA. Each asserts upstream's window (the replica count
held for the time the test holds it, then reached within the time the test waits),
and, where that window is wide, the time a real cluster gives: a cooldown that is a
multiple of ``pollingInterval`` expires *at* that poll (the truncated
``lastActiveTime`` plus the cooldown is before a clock read milliseconds after the
tick); on the exact grid (every latency 0) the tie goes the other way and the scale-in
waits one poll more, which the ``exact`` cases show.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from gpuscale.errors import InputError
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.timing import Latencies
from gpuscale.sim.world import SimulationResult

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
          resources: {{requests: {{cpu: 100m}}}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: app
  namespace: demo
  annotations: {annotations}
spec:
  scaleTargetRef: {{name: app}}
  minReplicaCount: {minimum}
  maxReplicaCount: {maximum}
  pollingInterval: {poll}
  cooldownPeriod: {cooldown}
{extra}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "{threshold}"
        ignoreNullValues: "{ignore_null}"
        query: {query}
"""

PROFILE = """
node_pools:
  - {name: cpu, size: s-4vcpu-8gb, min_nodes: 2, max_nodes: 4}
workloads:
  app: {image_pull_time: 0s, startup_time: 0s}
"""

SEEDS = range(10)


def _inputs(
    *,
    query: str,
    replicas: int = 1,
    minimum: int = 0,
    maximum: int = 5,
    poll: int = 30,
    cooldown: int = 300,
    threshold: str = "1",
    extra: str = "",
    annotations: str = "{}",
    ignore_null: str = "true",
    exact: bool = False,
) -> SimulationInputs:
    text = MANIFESTS.format(
        replicas=replicas,
        minimum=minimum,
        maximum=maximum,
        poll=poll,
        cooldown=cooldown,
        threshold=threshold,
        extra=extra,
        annotations=annotations,
        ignore_null=ignore_null,
        query=json.dumps(query),
    )
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")), load_profile_text(PROFILE, "gpuscale.yaml")
    )
    if exact:
        inputs = replace(inputs, spec=replace(inputs.spec, timing=Latencies()))
    return inputs


def _run(inputs: SimulationInputs, until: float, seed: int = 0) -> SimulationResult:
    return inputs.simulation(seed=seed).run(until)


def _changes(result: SimulationResult) -> list[tuple[float, int, int]]:
    out = []
    last = result.records[0].workloads[0].spec
    for record in result.records:
        spec = record.workloads[0].spec
        if spec != last:
            out.append((record.t, last, spec))
            last = spec
    return out


def _spec_at(result: SimulationResult, t: float) -> int:
    return [r for r in result.records if r.t <= t][-1].workloads[0].spec


def _held(result: SimulationResult, value: int, start: float, seconds: float) -> bool:
    """AssertReplicaCountNotChangeDuringTimePeriod: ``value`` throughout."""
    return (
        all(r.workloads[0].spec == value for r in result.records if start <= r.t <= start + seconds)
        and _spec_at(result, start) == value
    )


def _reached(result: SimulationResult, value: int, after: float) -> float:
    """When the count first became ``value`` at or after ``after``."""
    return next(t for t, _, now in _changes(result) if t >= after and now == value)


def _first_poll(result: SimulationResult) -> float:
    """KEDA's first poll: it always records the ScaledObject's first Active state."""
    return next(r.t for r in result.records for d in r.decisions if d.controller == "keda")


def _last_active_poll(result: SimulationResult, before: float, poll: float) -> float:
    """The last poll before ``before`` (where the query changes): KEDA's lastActiveTime.
    Ticks are ``poll`` apart from the first (start to start); each check reads the clock
    5-15 ms after its tick, so this is within 10 ms of the poll."""
    first = _first_poll(result)
    return first + (math.ceil((before - first) / poll) - 1) * poll


# ------------------------------------------------- polling_cooldown_so / polling_int_cd_period_so


@pytest.mark.parametrize("seed", SEEDS)
def test_polling_cooldown_so_testPollingIntervalUp(seed: int) -> None:
    """``tests/internals/polling_cooldown_so/polling_cooldown_so_test.go``
    ``testPollingIntervalUp``: pollingInterval 60 + 5, the metric goes 0 → 1 just after the
    ScaledObject is (re)applied; the count holds 0 for 60 s, then reaches 1 within 180 s.
    Real cluster: at the poll after the one the (re)start runs, 65 s after it."""
    inputs = _inputs(query="vector(time() > bool 1)", replicas=0, poll=65, cooldown=0)
    result = _run(inputs, 240, seed)
    assert _held(result, 0, 0.0, 60.0)
    up = _reached(result, 1, 0.0)
    assert up <= 180
    first_poll = _first_poll(result)
    # the ticks are 65 s apart; each check reads the clock 5-15 ms after its tick
    assert abs(up - first_poll - 65.0) <= 0.011


@pytest.mark.parametrize("seed", SEEDS)
def test_polling_int_cd_period_so_testPollingIntervalDown(seed: int) -> None:
    """``tests/internals/polling_int_cd_period_so/polling_int_cd_period_so_test.go``
    ``testPollingIntervalDown``: cooldownPeriod 0, pollingInterval 60 + 2, the metric goes
    1 → 0 just after the (re)apply; 1 held for 60 s, then 0 within 180 s. Real cluster: at
    the next poll, 62 s after the first (lastActiveTime + 0 is before its clock)."""
    inputs = _inputs(query="vector(time() < bool 1)", replicas=1, poll=62, cooldown=0)
    result = _run(inputs, 240, seed)
    assert _held(result, 1, 0.0, 60.0)
    down = _reached(result, 0, 0.0)
    assert down <= 180
    assert abs(down - _first_poll(result) - 62.0) <= 0.011


@pytest.mark.parametrize("seed", SEEDS)
def test_polling_int_cd_period_so_testCooldownPeriod(seed: int) -> None:
    """``polling_int_cd_period_so_test.go`` ``testCooldownPeriod``: cooldownPeriod 60 + 2
    (upstream's pollingInterval 0 polls without pause; 1 s here), the metric 1 → 0; 1 held
    for 60 s, then 0 within 180 s. Real cluster: 62–63 s after the last active poll (the
    whole-second truncation of lastActiveTime can bring it up to 1 s earlier, the poll
    grid up to 1 s later)."""
    inputs = _inputs(query="vector(time() < bool 30)", replicas=1, poll=1, cooldown=62)
    result = _run(inputs, 240, seed)
    assert _held(result, 1, 30.0, 60.0)
    down = _reached(result, 0, 30.0)
    assert down - 30.0 <= 180
    assert 60.99 <= down - _last_active_poll(result, 30.0, 1) <= 63.0


@pytest.mark.parametrize("seed", SEEDS)
def test_cooldown_75s_with_a_5s_poll_expires_at_the_poll(seed: int) -> None:
    """The cooldown case of ``polling_cooldown_so_test.go`` (``testCooldownPeriod``) with
    cooldownPeriod 75 and pollingInterval 5, a multiple: the scale-in comes at the poll
    75 s after the last active one (window 75–77 s), not one poll later."""
    inputs = _inputs(query="vector(time() < bool 100)", replicas=1, poll=5, cooldown=75)
    result = _run(inputs, 300, seed)
    down = _reached(result, 0, 100.0)
    assert 74.99 <= down - _last_active_poll(result, 100.0, 5) <= 77.0


def test_cooldown_75s_on_the_exact_grid_waits_one_poll_more() -> None:
    """The same case with every latency 0: lastActiveTime + 75 equals the poll's clock, is
    not before it, and the scale-in waits for the next poll (80 s)."""
    inputs = _inputs(query="vector(time() < bool 100)", replicas=1, poll=5, cooldown=75, exact=True)
    result = _run(inputs, 300)
    down = _reached(result, 0, 100.0)
    assert down - _last_active_poll(result, 100.0, 5) == 80.0


# ------------------------------------------------------------- initial_delay_cooldownperiod

INITIAL = (
    "  initialCooldownPeriod: 120\n"
    "  advanced:\n"
    "    horizontalPodAutoscalerConfig:\n"
    "      behavior: {scaleDown: {stabilizationWindowSeconds: 15}}"
)


@pytest.mark.parametrize("seed", SEEDS)
def test_initial_delay_cooldownperiod_TestScaler(seed: int) -> None:
    """``tests/internals/initial_delay_cooldownperiod/initial_delay_cooldownperiod_test.go``
    ``TestScaler``: cooldownPeriod 5, initialCooldownPeriod 120, a trigger that is never
    active, 1 replica: 1 held for 90 s, then 0 within 120 s. Real cluster: 120–122 s after
    the ScaledObject's creation (the default 30 s poll: the poll at 120 s is after the
    truncated creationTimestamp + 120)."""
    inputs = _inputs(query="vector(0)", replicas=1, cooldown=5, extra=INITIAL)
    result = _run(inputs, 240, seed)
    assert _held(result, 1, 0.0, 90.0)
    down = _reached(result, 0, 0.0)
    assert 120.0 <= down <= 122.0
    (deactivated,) = [
        d for r in result.records for d in r.decisions if d.reason == "KEDAScaleTargetDeactivated"
    ]
    assert "initialCooldownPeriod 120s since creation" in deactivated.detail


def test_initial_cooldown_on_the_exact_grid_waits_one_poll_more() -> None:
    inputs = _inputs(query="vector(0)", replicas=1, cooldown=5, extra=INITIAL, exact=True)
    assert _reached(_run(inputs, 240), 0, 0.0) == 150.0


# ----------------------------------------------------------------------------- idle_replicas

# the monitored Deployment's pod count as the trigger's value: 0, then 2 at 20 s, 4 at
# 100 s, 0 again at 200 s (kubernetes-workload, value '1': one replica per pod)
MONITORED = "vector((time() > bool 20) * 2 + (time() > bool 100) * 2 - (time() > bool 200) * 4)"


@pytest.mark.parametrize("seed", SEEDS)
def test_idle_replicas_TestScaler(seed: int) -> None:
    """``tests/internals/idle_replicas/idle_replicas_test.go`` ``TestScaler``: pollingInterval
    5, idleReplicaCount 0, minReplicaCount 2, maxReplicaCount 4, cooldownPeriod 10. The
    monitored count 2 → the target reaches 2 within 60 s (KEDA at its next poll); 4 → 4
    within 180 s (the HPA); 0 → 0 within 60 s (KEDA, cooldown after the last active poll,
    while the HPA's 300 s window would still hold 4)."""
    inputs = _inputs(
        query=MONITORED,
        replicas=0,
        minimum=2,
        maximum=4,
        poll=5,
        cooldown=10,
        extra="  idleReplicaCount: 0",
    )
    result = _run(inputs, 320, seed)
    assert _held(result, 0, 0.0, 19.0)
    assert _reached(result, 2, 20.0) - 20.0 <= 5.2
    assert _reached(result, 4, 100.0) - 100.0 <= 60.0
    down = _reached(result, 0, 200.0)
    assert down - 200.0 <= 60.0
    assert 9.99 <= down - _last_active_poll(result, 200.0, 5) <= 12.0


# ------------------------------------------------------------------------- pause_scaledobject


@pytest.mark.parametrize("seed", SEEDS)
def test_pause_scaledobject_testPauseAt0(seed: int) -> None:
    """``tests/internals/pause_scaledobject/pause_scaledobject_test.go`` ``testPauseAt0``:
    ``autoscaling.keda.sh/paused-replicas: 0`` while the trigger asks for more: the
    target goes to 0 at KEDA's first poll and holds 0 for 60 s (and longer)."""
    inputs = _inputs(
        query="vector(3)",
        replicas=1,
        annotations='{"autoscaling.keda.sh/paused-replicas": "0"}',
    )
    result = _run(inputs, 200, seed)
    down = _reached(result, 0, 0.0)
    assert down <= 1.0
    assert _held(result, 0, down, 60.0)
    assert result.records[-1].workloads[0].spec == 0


# ---------------------------------------------------------------------------------- fallback


@pytest.mark.parametrize("seed", SEEDS)
def test_fallback_TestFallback(seed: int) -> None:
    """The shape of ``tests/internals/fallback/fallback_test.go`` (``TestFallback``): the
    trigger works (2 per replica against 1: the HPA scales to 2), then its source breaks
    (from 60 s the query answers nothing, an error with ignoreNullValues false); with
    ``fallback: {failureThreshold: 3, replicas: 3}`` the target goes to 3 once more than 3
    reads have failed (every poll and every HPA read counts one), at the HPA's next sync."""
    inputs = _inputs(
        query="vector(2) and on() (vector(time()) < 60)",
        replicas=1,
        minimum=1,
        poll=5,
        ignore_null="false",
        extra="  fallback: {failureThreshold: 3, replicas: 3}",
    )
    result = _run(inputs, 240, seed)
    assert _reached(result, 2, 0.0) <= 60.0
    three = _reached(result, 3, 60.0)
    # four failures: three polls (5 s apart) and at least one HPA read, then a sync
    assert 60.0 + 10.0 <= three <= 60.0 + 4 * 5 + 15 + 1


# ----------------------------------------------------------------------------- cache_metrics

CACHED = (
    "  advanced:\n"
    "    horizontalPodAutoscalerConfig:\n"
    "      behavior: {scaleDown: {stabilizationWindowSeconds: 0}}"
)


def _cache_inputs(cached: bool) -> SimulationInputs:
    inputs = _inputs(
        query="vector(8 - 4 * (time() > bool 100))",
        replicas=1,
        minimum=1,
        maximum=10,
        poll=200,
        threshold="2",
        extra=CACHED,
    )
    if not cached:
        return inputs
    text = MANIFESTS.format(
        replicas=1,
        minimum=1,
        maximum=10,
        poll=200,
        cooldown=300,
        threshold="2",
        extra=CACHED,
        annotations="{}",
        ignore_null="true",
        query=json.dumps("vector(8 - 4 * (time() > bool 100))"),
    ).replace("    - type: prometheus\n", "    - type: prometheus\n      useCachedMetrics: true\n")
    return build_inputs(
        ManifestSet(load_text(text, "app.yaml")), load_profile_text(PROFILE, "gpuscale.yaml")
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_cache_metrics_testCacheMetricsOnPollingInterval(seed: int) -> None:
    """``tests/internals/cache_metrics/cache_metrics_test.go``
    ``testCacheMetricsOnPollingInterval``: useCachedMetrics with a long pollingInterval;
    the metric 8 against a target of 2 → 4 replicas within 60 s; the metric drops to 4 and
    the count holds 4 for 60 s, because the HPA reads the last poll's value (until the
    next poll, at 200 s here, then 2)."""
    result = _run(_cache_inputs(True), 260, seed)
    assert _reached(result, 4, 0.0) <= 60.0
    assert _held(result, 4, 100.0, 60.0)
    assert 200.0 < _reached(result, 2, 100.0) <= 200.2 + 15.1


@pytest.mark.parametrize("seed", SEEDS)
def test_cache_metrics_testDirectQuery(seed: int) -> None:
    """``cache_metrics_test.go`` ``testDirectQuery``: the same without useCachedMetrics:
    4 replicas, then 2 within 120 s of the drop (the HPA's next sync queries live)."""
    result = _run(_cache_inputs(False), 260, seed)
    assert _reached(result, 4, 0.0) <= 60.0
    assert _reached(result, 2, 100.0) - 100.0 <= 15.1


# ------------------------------------------------------------------------- scaling_modifiers


def test_scaling_modifiers_TestScalingModifiers_is_refused_not_guessed() -> None:
    """``tests/internals/scaling_modifiers/scaling_modifiers_test.go``: the simulator does
    not run ``scalingModifiers`` (``docs/simulator.md``), so a ScaledObject with them is
    refused with its file and line rather than simulated without them."""
    modifiers = (
        "  advanced:\n"
        "    scalingModifiers: {formula: 'load + 1', target: '2', metricType: AverageValue}"
    )
    text = MANIFESTS.format(
        replicas=1,
        minimum=0,
        maximum=5,
        poll=30,
        cooldown=300,
        threshold="1",
        extra=modifiers,
        annotations="{}",
        ignore_null="true",
        query=json.dumps("vector(1)"),
    ).replace("    - type: prometheus\n", "    - type: prometheus\n      name: load\n")
    with pytest.raises(InputError, match="scalingModifiers"):
        build_inputs(
            ManifestSet(load_text(text, "app.yaml")), load_profile_text(PROFILE, "gpuscale.yaml")
        )
