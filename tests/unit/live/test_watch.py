"""The watch's pure half: API documents → snapshot → timeline records, and the view.

The scenario test replays the tutorial's scale-up as the API server would show it tick
by tick and compares the records with a stored snapshot
(``snapshots/tutorial_scale_up.jsonl``), checked by hand against the scenario below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from gpuscale.live.events import decision_for, event_views, related_to
from gpuscale.live.watch import (
    QueryAnswer,
    Snapshot,
    WatchState,
    advance,
    build_snapshot,
    node_pool,
    node_state,
    pod_phase,
    pools_from_profile,
    render,
)
from gpuscale.profile import load_profile_text
from gpuscale.timeline import decode_lines, encode_record
from tests.integration.live import objects as o

SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.mark.parametrize(
    ("pod", "phase"),
    [
        (o.pod("p", node=None, phase="Pending", ready=False,
               unschedulable="0/2 nodes are available: 2 Insufficient amd.com/gpu."), "Pending"),
        (o.pod("p", phase="Pending", ready=False), "Starting"),
        (o.pod("p", phase="Running", ready=False), "Starting"),
        (o.pod("p"), "Ready"),
        (o.pod("p", deleting=True), "Terminating"),
    ],
)  # fmt: skip
def test_pod_phase(pod: dict[str, Any], phase: str) -> None:
    assert pod_phase(pod) == phase


@pytest.mark.parametrize(
    ("node", "state"),
    [
        (o.node("n"), "ready"),
        (o.node("n", ready=False), "provisioning"),
        ({"metadata": {"name": "n"}, "status": {}}, "provisioning"),
        (o.node("n", deleting=True), "deleting"),
        (o.node("n", to_be_deleted=True), "deleting"),
    ],
)
def test_node_state(node: dict[str, Any], state: str) -> None:
    assert node_state(node) == state


def test_node_pool_reads_provider_labels() -> None:
    assert node_pool(o.node("n", pool="gpu")) == "gpu"
    gke = {"metadata": {"labels": {"cloud.google.com/gke-nodepool": "pool-1"}}}
    assert node_pool(gke) == "pool-1"
    assert node_pool({"metadata": {"labels": {}}}) == "default"


def test_hpa_values_are_read_as_quantities() -> None:
    hpa = o.hpa(value="80500m", target="80")
    snap = build_snapshot(
        t=0, namespace=o.NS, deployment=o.deployment(), pods=[], nodes=[],
        scaled_objects=[o.scaled_object()], hpas=[hpa],
    )  # fmt: skip
    assert snap.hpa is not None
    assert (snap.hpa.metric, snap.hpa.value, snap.hpa.target) == ("s0-prometheus", 80.5, 80.0)
    assert snap.hpa.target_type == "AverageValue"
    assert snap.query == o.QUERY
    assert snap.scaled_object == o.APP


def test_events_map_to_decisions_with_upstream_reasons() -> None:
    views = event_views([
        o.event("e1", reason="SuccessfulRescale", kind="HorizontalPodAutoscaler",
                obj="keda-hpa-go-from-configmap", component="horizontal-pod-autoscaler",
                message="New size: 2; reason: external metric s0-prometheus above target"),
        o.event("e2", reason="TriggeredScaleUp", kind="Pod", obj="go-from-configmap-7d9f8-x2",
                component="cluster-autoscaler",
                message="pod triggered scale-up: [{gpu 1->2 (max: 2)}]"),
        o.event("e3", reason="Pulling", kind="Pod", obj="go-from-configmap-7d9f8-x2",
                component="kubelet", message="Pulling image"),
        o.event("e4", reason="SuccessfulRescale", kind="HorizontalPodAutoscaler",
                obj="other-hpa", message="New size: 3"),
    ])  # fmt: skip
    related = related_to(views, o.APP, ["keda-hpa-go-from-configmap"])
    assert [v.key for v in related] == ["e1#1", "e2#1", "e3#1"]
    decisions = [decision_for(v) for v in related]
    assert decisions[0] is not None
    assert (decisions[0].controller, decisions[0].action, decisions[0].target) == (
        "hpa",
        "scale",
        "hpa/demo/keda-hpa-go-from-configmap",
    )
    assert decisions[1] is not None
    assert (decisions[1].controller, decisions[1].action) == ("cluster-autoscaler", "scale-up")
    assert decisions[2] is None


def _cluster(t: float, **kw: Any) -> Snapshot:
    """The tutorial's cluster at ``t``: parameters say what differs from the start."""
    spec, ready = kw.get("spec", 1), kw.get("ready", 1)
    pods = [o.pod("go-from-configmap-7d9f8-a1", created="2026-11-30T10:00:00Z")]
    if spec > 1:
        second = kw.get("second", "Pending")
        if second == "Pending":
            pods.append(
                o.pod(
                    "go-from-configmap-7d9f8-b2",
                    node=None,
                    phase="Pending",
                    ready=False,
                    unschedulable="0/3 nodes are available: 1 Insufficient amd.com/gpu.",
                )
            )
        else:
            pods.append(
                o.pod("go-from-configmap-7d9f8-b2", node="gpu-node-2", ready=second == "Ready")
            )
    nodes = [
        o.node("general-1", pool="general", gpus=0),
        o.node("general-2", pool="general", gpus=0),
        o.node("gpu-node-1"),
    ]
    if kw.get("gpu2"):
        nodes.append(o.node("gpu-node-2", ready=kw["gpu2"] == "ready"))
    return build_snapshot(
        t=t, namespace=o.NS,
        deployment=o.deployment(spec=spec, status=len(pods), ready=ready),
        pods=pods, nodes=nodes, scaled_objects=[o.scaled_object()],
        hpas=[o.hpa(current=kw.get("current", 1), desired=kw.get("desired", 1),
                    value=kw.get("hpa_value", "80"))],
        events=kw.get("events", []),
        answer=QueryAnswer(kw.get("query", 80.0), 1, None, "test"),
    )  # fmt: skip


RESCALE = o.event(
    "keda-hpa-go-from-configmap.1",
    reason="SuccessfulRescale",
    kind="HorizontalPodAutoscaler",
    obj="keda-hpa-go-from-configmap",
    component="horizontal-pod-autoscaler",
    message="New size: 2; reason: external metric s0-prometheus(&LabelSelector{MatchLabels:"
    "map[string]string{scaledobject.keda.sh/name: go-from-configmap,},MatchExpressions:"
    "[]LabelSelectorRequirement{},}) above target",
    at="2026-11-30T10:00:30Z",
)
UNSCHEDULABLE = o.event(
    "go-from-configmap-7d9f8-b2.1",
    reason="FailedScheduling",
    kind="Pod",
    obj="go-from-configmap-7d9f8-b2",
    type_="Warning",
    component="default-scheduler",
    message="0/3 nodes are available: 1 Insufficient amd.com/gpu.",
    at="2026-11-30T10:00:31Z",
)
SCALE_UP = o.event(
    "go-from-configmap-7d9f8-b2.2",
    reason="TriggeredScaleUp",
    kind="Pod",
    obj="go-from-configmap-7d9f8-b2",
    component="cluster-autoscaler",
    message="pod triggered scale-up: [{gpu 1->2 (max: 2)}]",
    at="2026-11-30T10:01:02Z",
)
OLD = o.event(
    "go-from-configmap.old",
    reason="ScalingReplicaSet",
    kind="Deployment",
    obj=o.APP,
    message="Scaled up replica set go-from-configmap-7d9f8 to 1",
    at="2026-11-30T09:00:00Z",
)


def _scenario() -> list[Snapshot]:
    """The tutorial's step 6: gauge set to 160 at ~t=20, HPA asks for 2 at t=30, the pod
    waits for a GPU node that boots for ~6 minutes, then runs."""
    e1, e2, e3 = [OLD], [OLD, RESCALE, UNSCHEDULABLE], [OLD, RESCALE, UNSCHEDULABLE, SCALE_UP]
    return [
        _cluster(0, events=e1),
        _cluster(2, events=e1),  # nothing changed: no record
        _cluster(20, events=e1, query=160.0),
        _cluster(30, events=e2, query=160.0, hpa_value="160", desired=2, spec=2),
        _cluster(62, events=e3, query=160.0, hpa_value="160", desired=2, current=2, spec=2),
        _cluster(300, events=e3, query=160.0, hpa_value="160", desired=2, current=2, spec=2,
                 gpu2="provisioning"),
        _cluster(420, events=e3, query=160.0, hpa_value="160", desired=2, current=2, spec=2,
                 gpu2="ready", second="Starting"),
        _cluster(480, events=e3, query=80.0, hpa_value="80", desired=2, current=2, spec=2,
                 gpu2="ready", second="Ready", ready=2),
    ]  # fmt: skip


def test_tutorial_scale_up_becomes_the_stored_timeline() -> None:
    state = WatchState(prices={"gpu": 1.99, "general": 0.07143})
    lines: list[str] = []
    for snap in _scenario():
        state, record = advance(state, snap)
        if record is not None:
            lines.append(encode_record(record))
    expected = (SNAPSHOTS / "tutorial_scale_up.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == expected
    header = '{"format":"gpuscale-timeline","version":1,"world":"live"}'
    timeline = decode_lines([header, *lines])
    assert [r.t for r in timeline.records] == [0, 20, 30, 62, 300, 420, 480]


def test_unchanged_ticks_write_nothing_and_cost_keeps_accruing() -> None:
    state = WatchState(prices={"gpu": 1.99, "general": 0.07143})
    state, first = advance(state, _cluster(0))
    assert first is not None
    state, second = advance(state, _cluster(3600))
    assert second is None
    assert state.cost == pytest.approx(1.99 + 2 * 0.07143)
    state, third = advance(state, _cluster(3601, ready=0))
    assert third is not None
    assert third.cost_usd == pytest.approx(
        1.99 + 2 * 0.07143 + (1.99 + 2 * 0.07143) / 3600, abs=1e-6
    )


def test_pools_without_a_price_are_remembered() -> None:
    state, _ = advance(WatchState(prices={"gpu": 1.99}), _cluster(0))
    assert state.unpriced == {"general"}


def test_render_shows_every_link_of_the_chain() -> None:
    snap = _scenario()[4]
    console = Console(width=200, record=True, color_system=None)
    console.print(render(snap, WatchState(cost=0.12)))
    text = console.export_text()
    assert (
        "deployment/demo/go-from-configmap  spec 2  status 2  ready 1  HPA desired 2  t+1m2s"
        in text
    )
    assert "$0.12 so far" in text
    assert "pods: Pending 1  Ready 1" in text
    assert "nodes: general: ready 2 | gpu: ready 1" in text
    assert ("scaledobject/go-from-configmap: Ready=True (ScaledObjectReady), Active=True "
            "(ScalerActive), Fallback=False (NoFallbackFound)") in text  # fmt: skip
    assert ("hpa/keda-hpa-go-from-configmap: current 2 desired 2; s0-prometheus 160 / target 80 "
            "(AverageValue)") in text  # fmt: skip
    assert "query = 160  [test]" in text
    assert "TriggeredScaleUp" in text
    assert "pod/demo/go-from-configmap-7d9f8-b2" in text


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (QueryAnswer(None, 0), "query = empty result (KEDA reads 0 with ignoreNullValues)"),
        (QueryAnswer(None, 3), "query = 3 series (KEDA needs exactly one)"),
        (QueryAnswer(None, 1), "query = NaN or ±Inf (KEDA reads 0 with ignoreNullValues)"),
        (
            QueryAnswer(None, 0, "cannot reach Prometheus (ConnectError)"),
            "query = error: cannot reach",
        ),
        (None, "query = not read (pass --prometheus URL)"),
    ],
)
def test_render_explains_what_keda_would_read(answer: QueryAnswer | None, shown: str) -> None:
    base = _cluster(0)
    snap = Snapshot(
        **{**{f: getattr(base, f) for f in base.__dataclass_fields__}, "answer": answer}
    )
    console = Console(width=200, record=True, color_system=None)
    console.print(render(snap))
    assert shown in console.export_text()


def test_pools_from_profile_reads_prices_from_the_typed_profile() -> None:
    profile = load_profile_text(
        "node_pools:\n"
        "  - {name: gpu, size: gpu-mi300x1-192gb, max_nodes: 2}\n"
        "  - {name: general, size: s-4vcpu-8gb, count: 2, price_per_hour: 0.5}\n",
        "p.yaml",
    )
    pools = pools_from_profile(profile)
    # gpu: the catalogue's price for the size; general: the profile's own.
    assert pools == {
        "gpu": {"price_per_hour": 1.99, "gpus_per_node": 1.0},
        "general": {"price_per_hour": 0.5, "gpus_per_node": 0.0},
    }


def test_snapshot_file_is_valid_json() -> None:
    for line in (SNAPSHOTS / "tutorial_scale_up.jsonl").read_text().splitlines():
        json.loads(line)
