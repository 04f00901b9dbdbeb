"""Summary statistics computed from hand-made timelines, so each number is checkable."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuscale.report.summary import summarize, summary_table
from gpuscale.sim.requests import DROPPED, SERVED, TIMED_OUT, UNFINISHED, RequestLog
from gpuscale.timeline import Decision, Record, WorkloadState

W = "gpu/app"
POOLS = {"gpu": {"price_per_hour": 2.0, "gpus_per_node": 1}}


def _rec(
    t: float,
    spec: int,
    ready: int,
    *,
    pending: int = 0,
    nodes: int = 1,
    busy: int = 1,
    decisions: tuple[Decision, ...] = (),
    load: dict[str, float] | None = None,
) -> Record:
    pods = {"Ready": ready} | ({"Pending": pending} if pending else {})
    return Record(
        t=t,
        workloads=(WorkloadState(W, spec, spec, ready, spec, pods),),
        nodes={"gpu": {"ready": nodes}},
        load=load or {},
        decisions=decisions,
        gpus={"gpu": {"total": nodes, "busy": busy}},
    )


def test_replicas_reactions_pending_and_pools() -> None:
    gauge = Decision("load", "set_gauge", "Scenario", "deployment/gpu/app", "g=160 on app-x")
    failed = Decision(
        "scheduler",
        "fail",
        "FailedScheduling",
        "pod/gpu/app-h-b",
        "0/1 nodes are available: 1 Insufficient amd.com/gpu. preemption: ...",
    )
    bound = Decision("scheduler", "bind", "Scheduled", "pod/gpu/app-h-b", "node n2")
    records = [
        _rec(0.0, 1, 1),
        _rec(60.0, 1, 1, decisions=(gauge,), load={"g": 160.0}),
        _rec(75.0, 2, 1, pending=1, decisions=(failed,), load={"g": 160.0}),
        _rec(105.0, 2, 1, pending=1, nodes=2, load={"g": 160.0}),
        _rec(225.0, 2, 1, nodes=2, decisions=(bound,), load={"g": 160.0}),
        _rec(315.0, 2, 2, nodes=2, busy=2, load={"g": 160.0}),
        _rec(615.0, 1, 1, nodes=2, busy=1, load={"g": 160.0}),
        _rec(630.0, 2, 1, nodes=2, busy=1, load={"g": 160.0}),
        _rec(1200.0, 2, 2, nodes=1, busy=1, load={"g": 160.0}),
    ]
    summary = summarize(records, until=1800.0, pools=POOLS)
    (replicas,) = summary.replicas
    assert (replicas.min_spec, replicas.max_spec, replicas.changes, replicas.flaps) == (1, 2, 3, 2)
    assert replicas.mean_spec == pytest.approx((75 * 1 + 540 * 2 + 15 * 1 + 1170 * 2) / 1800)
    (reaction,) = summary.reactions
    assert (reaction.at, reaction.change, reaction.desired) == (60.0, "g=160", 2)
    assert (reaction.to_desired_s, reaction.to_ready_s) == (15.0, 255.0)
    (pending,) = summary.pending
    assert pending.pod_seconds == 150.0
    assert pending.by_reason == {"0/1 nodes are available: 1 Insufficient amd.com/gpu": 150.0}
    (pool,) = summary.pools
    assert (pool.added, pool.removed) == (1, 1)
    node_seconds = 105 + 2 * (1200 - 105) + 600
    assert pool.node_hours == pytest.approx(node_seconds / 3600)
    assert pool.dollars == pytest.approx(node_seconds / 3600 * 2.0)
    idle_seconds = (225 - 105) + (315 - 225) + (1200 - 615)
    assert pool.idle_gpu_hours == pytest.approx(idle_seconds / 3600)
    assert summary.idle_dollars == pytest.approx(idle_seconds / 3600 * 2.0)
    assert summary.as_dict()["pools"][0]["added"] == 1


def test_rate_changes_are_load_changes_but_measured_rates_are_not() -> None:
    records = [
        _rec(0.0, 1, 1, load={"request_rate:app": 1.0, "arrival_rate:app": 0.9}),
        _rec(60.0, 1, 1, load={"request_rate:app": 1.0, "arrival_rate:app": 1.1}),
        _rec(120.0, 1, 1, load={"request_rate:app": 5.0, "arrival_rate:app": 1.1}),
        _rec(150.0, 3, 1, load={"request_rate:app": 5.0}),
    ]
    reactions = summarize(records, until=200.0, pools={}).reactions
    assert [(r.at, r.change) for r in reactions] == [
        (0.0, "request_rate=1"),
        (120.0, "request_rate=5"),
    ]
    assert reactions[0].desired is None
    assert (reactions[1].to_desired_s, reactions[1].to_ready_s) == (30.0, None)


def test_request_statistics() -> None:
    log = RequestLog(
        np.arange(6, dtype=np.float64),
        np.array([1.0, 2.0, 10.0, math.nan, math.nan, math.nan]),
        np.array([SERVED, SERVED, SERVED, TIMED_OUT, DROPPED, UNFINISHED], dtype=np.int8),
    )
    (stats,) = summarize(
        [_rec(0.0, 1, 1)], until=10.0, pools={}, requests={W: log}, latency_targets={"app": 5.0}
    ).requests
    assert (
        stats.total,
        stats.served,
        stats.late,
        stats.timed_out,
        stats.dropped,
        stats.unfinished,
    ) == (6, 3, 1, 1, 1, 1)
    assert stats.p50_s == 2.0
    assert stats.max_s == 10.0


def test_no_records_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one record"):
        summarize([], until=1.0, pools={})


def test_the_flap_period_is_the_median_gap_and_its_range_is_shown() -> None:
    # scale-ups at 0+30, 360.5, 691, 1036.5: gaps 330.5, 330.5, 345.5 (the drift carried
    # one sync past a scrape)
    times = [(0.0, 1), (30.0, 2), (330.0, 1), (360.5, 2), (660.0, 1), (691.0, 2)]
    times += [(1000.0, 1), (1036.5, 2)]
    records = [_rec(t, spec, spec) for t, spec in times]
    summary = summarize(records, until=1200.0, pools=POOLS)
    (replicas,) = summary.replicas
    assert replicas.flap_period_s == 330.5
    assert replicas.flap_period_range_s == (330.5, 345.5)
    rows = [row for section in summary_table(summary).sections for row in section.rows]
    (period,) = [row for row in rows if row.label == "flap period"]
    assert period.value == "5m30s"
    assert period.note == "median between scale-ups; 5m30s–5m46s in this run"
