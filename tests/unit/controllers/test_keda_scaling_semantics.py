"""The KEDA-side numbers of docs/scaling-semantics.md, computed with the model.

Each test replays one worked example of that page (the tutorial's ScaledObject in
``../shared/seed``: threshold 80, pollingInterval 30, cooldownPeriod 30, min 1, max 8) so
the page cannot drift from what the model says. The HPA's arithmetic in the examples
(ceil of usage over target, the 300 s scale-down window) belongs to the HPA model; here
only KEDA's part is checked.
"""

from __future__ import annotations

import math

from gpuscale.controllers.keda import (
    generated_hpa,
    metrics_and_activity,
    parse_prometheus_trigger,
    request_scale,
    scaled_object_warnings,
)

TUTORIAL_QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
TUTORIAL = {
    "scaleTargetRef": {"name": "go-from-configmap"},
    "pollingInterval": 30,
    "cooldownPeriod": 30,
    "minReplicaCount": 1,
    "maxReplicaCount": 8,
    "triggers": [
        {
            "type": "prometheus",
            "metadata": {
                "serverAddress": "http://prometheus-operated.kube-system.svc.cluster.local:9090",
                "metricName": "my_custom_gauge",
                "threshold": "80",
                "query": TUTORIAL_QUERY,
            },
        }
    ],
}


def test_example_1_the_tutorial_generates_an_average_value_target_of_80() -> None:
    hpa = generated_hpa(TUTORIAL, name="go-from-configmap")
    metric = hpa.metrics[0]
    assert (metric.name, metric.target_type, metric.target) == (
        "s0-prometheus",
        "AverageValue",
        80.0,
    )
    assert (hpa.min_replicas, hpa.max_replicas) == (1, 8)


def test_example_1_the_query_halves_when_the_second_replica_exists() -> None:
    """sum(gauge)=160 stays 160 (the new pod exports 0); the query divides it by the replica
    count, and AverageValue divides it again: 160/1 -> ceil(160/80) = 2, then 160/2 = 80 ->
    ceil(80/80) = 1."""
    trigger = parse_prometheus_trigger(TUTORIAL["triggers"][0]["metadata"])
    at_one, _ = metrics_and_activity(trigger, 160 / 1)
    at_two, _ = metrics_and_activity(trigger, 160 / 2)
    assert math.ceil(at_one / trigger.threshold) == 2
    assert math.ceil(at_two / trigger.threshold) == 1


def test_example_1_fix_value_target() -> None:
    fixed = {**TUTORIAL, "triggers": [{**TUTORIAL["triggers"][0], "metricType": "Value"}]}
    assert generated_hpa(fixed, name="go-from-configmap").metrics[0].target_type == "Value"


def test_example_2_min_one_never_reads_cooldown_and_the_webhook_says_so() -> None:
    warnings = scaled_object_warnings(TUTORIAL)
    assert any("CooldownPeriod is configured but is not relevant" in w for w in warnings)
    assert any("PollingInterval is configured but is not relevant" in w for w in warnings)
    for t in (0.0, 30.0, 60.0, 300.0):
        tick = request_scale(
            current_replicas=2,
            is_active=False,
            is_error=False,
            now=t,
            min_replica_count=1,
            cooldown_period=30,
            last_active_time=-30.0,
        )
        assert not tick.scaled


def test_example_2_min_zero_goes_from_two_to_zero_on_the_poll_after_cooldown() -> None:
    """Last active poll at -30 s; polls at 0 and 30 see 0. cooldownPeriod 30: the poll at 0
    is cooling down (-30 + 30 is not before 0), the poll at 30 writes 0 directly."""
    ticks = [
        request_scale(
            current_replicas=2,
            is_active=False,
            is_error=False,
            now=t,
            min_replica_count=0,
            cooldown_period=30,
            last_active_time=-30.0,
        )
        for t in (0.0, 30.0)
    ]
    assert [(t.replicas, t.action) for t in ticks] == [(2, "cooldown"), (0, "deactivate")]


def test_example_2_default_cooldown_is_300_seconds() -> None:
    polls = [float(t) for t in range(0, 331, 30)]
    first = next(
        t
        for t in polls
        if request_scale(
            current_replicas=2,
            is_active=False,
            is_error=False,
            now=t,
            min_replica_count=0,
            last_active_time=-30.0,
        ).scaled
    )
    assert first == 300.0


def test_example_3_activation_and_threshold() -> None:
    trigger = parse_prometheus_trigger(
        {
            "serverAddress": "http://p",
            "query": "sum(my_custom_gauge{})",
            "threshold": "80",
            "activationThreshold": "50",
        }
    )
    assert [metrics_and_activity(trigger, v)[1] for v in (40.0, 50.0, 60.0, 160.0)] == [
        False,
        False,
        True,
        True,
    ]
    from_zero = request_scale(
        current_replicas=0, is_active=True, is_error=False, now=0.0, min_replica_count=0
    )
    assert from_zero.replicas == 1
    stays_at_zero = request_scale(
        current_replicas=0, is_active=False, is_error=False, now=0.0, min_replica_count=0
    )
    assert stays_at_zero.replicas == 0
    dropped = request_scale(
        current_replicas=1,
        is_active=False,
        is_error=False,
        now=400.0,
        min_replica_count=0,
        last_active_time=0.0,
    )
    assert dropped.replicas == 0


def test_example_3_docs_case_threshold_10_activation_50() -> None:
    """KEDA docs: value 40 with threshold 10 would be 4 replicas for the HPA, but is
    inactive, so a min-0 object goes to 0 after the cooldown."""
    trigger = parse_prometheus_trigger(
        {"serverAddress": "http://p", "query": "q", "threshold": "10", "activationThreshold": "50"}
    )
    value, active = metrics_and_activity(trigger, 40.0)
    assert math.ceil(value / trigger.threshold) == 4
    assert not active
