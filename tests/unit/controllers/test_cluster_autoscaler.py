"""One cluster-autoscaler iteration: scale-up timing, options, limits and scale-down.

The timing cases follow kubernetes/autoscaler ``core/static_autoscaler.go``
(``allPodsAreNew``: 2 s, 30 s for GPU pods; ``isScaleDownInCooldown``) and
``core/scaledown/unneeded/nodes.go`` (``RemovableAt``: strictly longer than the unneeded
time, min size kept); messages follow ``processors/status/eventing_scale_up_processor.go``.
"""

from __future__ import annotations

import random

import pytest

from gpuscale.controllers.cluster_autoscaler import (
    AutoscalerState,
    AutoscalingOptions,
    ClusterSnapshot,
    NodeGroup,
    NodeSnapshot,
    PodSnapshot,
    node_utilization,
    run_once,
)
from gpuscale.controllers.scheduler import NodeView, PodRequirements, quantities
from gpuscale.kube import Taint, Toleration

GPU_LABELS = {"doks.digitalocean.com/gpu-brand": "amd"}
GPU_TAINT = Taint("amd.com/gpu")
GPU_POD = PodRequirements(
    requests={"amd.com/gpu": 1},
    node_selector=GPU_LABELS,
    tolerations=(Toleration("amd.com/gpu", "Exists"),),
)
CPU_POD = PodRequirements(requests=quantities({"cpu": 1, "memory": 2**30}))


def _gpu_template(gpus: int = 1) -> NodeView:
    return NodeView(
        "template-gpu",
        GPU_LABELS,
        (GPU_TAINT,),
        quantities({"cpu": 20, "memory": 240 * 2**30, "pods": 110, "amd.com/gpu": gpus}),
    )


def _cpu_template(cpu: float = 4, name: str = "template-cpu") -> NodeView:
    return NodeView(name, {}, (), quantities({"cpu": cpu, "memory": 8 * 2**30, "pods": 110}))


def _group(gid: str, template: NodeView, target: int, *, lo: int = 0, hi: int = 5, price=1.0):
    return NodeGroup(gid, lo, hi, target, template, price)


def _pending(key: str, req: PodRequirements, created: float) -> PodSnapshot:
    return PodSnapshot(key, "default", "ReplicaSet/default/app", created, req, None, True)


def _node(name: str, group: str, template: NodeView, pods: list[PodSnapshot], created=0.0):
    requested: dict[str, int] = {}
    for pod in pods:
        for r, v in pod.requirements.requests.items():
            requested[r] = requested.get(r, 0) + v
    view = NodeView(
        name, template.labels, template.taints, template.allocatable, requested, pod_count=len(pods)
    )
    return NodeSnapshot(view, group, tuple(p.key for p in pods), created_at=created)


def _run(snapshot, now, state=None, **options):
    return run_once(
        snapshot, state or AutoscalerState(), AutoscalingOptions(**options), now, random.Random(1)
    )


def test_gpu_pod_waits_30_seconds_then_triggers_scale_up() -> None:
    pod = _pending("default/app-1", GPU_POD, created=65.0)
    snap = ClusterSnapshot((_group("gpu", _gpu_template(), 1),), (), {pod.key: pod})
    # at its creation instant the pod is too young to count at all (filterOutYoungPods)
    assert _run(snap, 65.0)[0].scale_up_status == "ScaleUpNotNeeded"
    for now in (65.5, 75.0, 85.0, 94.9):
        result, state = _run(snap, now)
        assert result.scale_up_status == "ScaleUpInCooldown"
        assert not result.productive
    result, state = _run(snap, 95.0)
    assert result.scale_up_status == "ScaleUpSuccessful"
    assert result.scale_ups == (("gpu", 1),)
    assert result.pods_triggered == (pod.key,)
    assert result.decisions[0].target == "pool/gpu"
    assert "1 -> 2 (max: 5)" in result.decisions[0].detail
    assert state.last_scale_up == 95.0


def test_releases_that_only_knew_nvidia_treat_amd_pods_as_cpu_pods() -> None:
    pod = _pending("default/app-1", GPU_POD, created=0.0)
    snap = ClusterSnapshot((_group("gpu", _gpu_template(), 0),), (), {pod.key: pod})
    assert _run(snap, 3.0)[0].scale_up_status == "ScaleUpInCooldown"
    old = _run(snap, 3.0, gpu_resource_names=("nvidia.com/gpu",))[0]
    assert old.scale_up_status == "ScaleUpSuccessful"


def test_cpu_pod_waits_two_seconds() -> None:
    pod = _pending("default/web-1", CPU_POD, created=0.0)
    snap = ClusterSnapshot((_group("cpu", _cpu_template(), 0),), (), {pod.key: pod})
    assert _run(snap, 1.9)[0].scale_up_status == "ScaleUpInCooldown"
    assert _run(snap, 2.0)[0].scale_ups == (("cpu", 1),)


def test_pods_that_fit_an_upcoming_node_do_not_trigger_another_scale_up() -> None:
    pod = _pending("default/app-1", GPU_POD, created=0.0)
    snap = ClusterSnapshot(
        (_group("gpu", _gpu_template(), 2),), (), {pod.key: pod}, upcoming={"gpu": 1}
    )
    assert _run(snap, 100.0)[0].scale_up_status == "ScaleUpNotNeeded"


def test_binpacking_estimate_and_scale_from_zero() -> None:
    pods = {f"default/app-{i}": _pending(f"default/app-{i}", GPU_POD, 0.0) for i in range(3)}
    snap = ClusterSnapshot((_group("gpu2", _gpu_template(gpus=2), 0),), (), pods)
    result, _ = _run(snap, 60.0)
    assert result.scale_ups == (("gpu2", 2),)


def test_group_max_caps_the_scale_up() -> None:
    pods = {f"default/app-{i}": _pending(f"default/app-{i}", GPU_POD, 0.0) for i in range(4)}
    snap = ClusterSnapshot((_group("gpu", _gpu_template(), 1, hi=3),), (), pods)
    assert _run(snap, 60.0)[0].scale_ups == (("gpu", 2),)


@pytest.mark.parametrize(
    ("group", "message"),
    [
        (_group("gpu", _gpu_template(), 3, hi=3), "1 max node group size reached"),
        (_group("cpu", _cpu_template(), 0), "1 node(s) didn't match Pod's node affinity/selector"),
    ],
)
def test_not_triggered_scale_up_gives_upstream_reasons(group: NodeGroup, message: str) -> None:
    pod = _pending("default/app-1", GPU_POD, created=0.0)
    result, state = _run(ClusterSnapshot((group,), (), {pod.key: pod}), 60.0)
    assert result.scale_up_status == "ScaleUpNoOptionsAvailable"
    assert result.not_triggered == {pod.key: f"pod didn't trigger scale-up: {message}"}
    assert state.last_scale_up == AutoscalerState().last_scale_up


def test_template_without_gpus_cannot_scale_from_zero() -> None:
    # the upstream DigitalOcean provider's template carries cpu, memory and pods only
    no_gpu = NodeView(
        "template-gpu", GPU_LABELS, (GPU_TAINT,), quantities({"cpu": 20, "pods": 110})
    )
    pod = _pending("default/app-1", GPU_POD, created=0.0)
    result, _ = _run(ClusterSnapshot((_group("gpu", no_gpu, 0),), (), {pod.key: pod}), 60.0)
    assert (
        result.not_triggered[pod.key] == "pod didn't trigger scale-up: 1 Insufficient amd.com/gpu"
    )


def test_expanders_pick_as_upstream() -> None:
    pod = _pending("default/web-1", CPU_POD, created=0.0)
    big = _group("big", _cpu_template(16, "template-big"), 0, price=4.0)
    small = _group("small", _cpu_template(2, "template-small"), 0, price=1.0)
    snap = ClusterSnapshot((big, small), (), {pod.key: pod})
    assert _run(snap, 10.0, expander="least-waste")[0].scale_ups == (("small", 1),)
    assert _run(snap, 10.0, expander="price")[0].scale_ups == (("small", 1),)
    chosen = _run(snap, 10.0, expander="priority", expander_priorities={10: ("big",), 1: (".*",)})
    assert chosen[0].scale_ups == (("big", 1),)
    with pytest.raises(ValueError, match="unknown expander"):
        AutoscalingOptions(expander="cheapest")


def test_max_nodes_total_blocks_scale_up() -> None:
    pod = _pending("default/web-1", CPU_POD, created=0.0)
    tpl = _cpu_template()
    existing = _node("cpu-1", "cpu", tpl, [])
    snap = ClusterSnapshot((_group("cpu", tpl, 1),), (existing,), {pod.key: pod})
    # the existing node fits it, so nothing is pending for the autoscaler
    assert _run(snap, 10.0, max_nodes_total=1)[0].scale_up_status == "ScaleUpNotNeeded"
    big = PodRequirements(requests=quantities({"cpu": 3.5}))
    hog = _pending("default/hog", big, 0.0)
    full = _node("cpu-1", "cpu", tpl, [PodSnapshot("default/x", "default", "o", 0.0, big, "cpu-1")])
    snap = ClusterSnapshot((_group("cpu", tpl, 1),), (full,), {hog.key: hog})
    assert _run(snap, 10.0, max_nodes_total=1)[0].scale_up_status == "ScaleUpNoOptionsAvailable"


def test_utilization_is_gpu_on_gpu_nodes_and_max_cpu_memory_elsewhere() -> None:
    gpu_pod = PodSnapshot("default/g", "default", "o", 0.0, GPU_POD, "gpu-1")
    node = _node("gpu-1", "gpu", _gpu_template(gpus=2), [gpu_pod])
    assert node_utilization(node.view) == (0.5, "amd.com/gpu")
    cpu = _node(
        "cpu-1", "cpu", _cpu_template(), [PodSnapshot("d/c", "d", "o", 0, CPU_POD, "cpu-1")]
    )
    assert node_utilization(cpu.view) == (0.25, "cpu")


def _empty_gpu_cluster(target: int, lo: int = 0):
    tpl = _gpu_template()
    nodes = tuple(_node(f"gpu-{i}", "gpu", tpl, []) for i in range(target))
    return ClusterSnapshot((_group("gpu", tpl, target, lo=lo),), nodes, {})


def test_empty_node_is_removed_after_the_unneeded_time_not_within_delay_after_add() -> None:
    snap = _empty_gpu_cluster(2, lo=1)
    state = AutoscalerState(last_scale_up=0.0)
    result, state = _run(snap, 10.0, state=state)
    assert result.scale_down_status == "ScaleDownInCooldown"
    assert state.unneeded_since == {"gpu-0": 10.0, "gpu-1": 10.0}
    result, state = _run(snap, 599.0, state=state)
    assert result.scale_down_status == "ScaleDownInCooldown"
    result, state = _run(snap, 610.0, state=state)
    assert result.scale_down_status == "ScaleDownNoNodeDeleted"  # 10 + 600 is not before 610
    result, state = _run(snap, 610.5, state=state)
    assert result.scale_down_status == "ScaleDownNodeDeleteStarted"
    assert [d.node for d in result.deletions] == ["gpu-0"]  # min size 1 keeps the other
    assert result.deletions[0].empty
    assert result.decisions[0].reason == "ScaleDownEmpty"
    assert state.last_scale_down_delete == 610.5
    assert result.unremovable["gpu-1"] == "NodeGroupMinSizeReached"


def test_busy_gpu_node_is_not_underutilized() -> None:
    tpl = _gpu_template()
    pod = PodSnapshot("default/g", "default", "o", 0.0, GPU_POD, "gpu-0")
    snap = ClusterSnapshot(
        (_group("gpu", tpl, 1),), (_node("gpu-0", "gpu", tpl, [pod]),), {pod.key: pod}
    )
    result, state = _run(snap, 5000.0)
    assert result.unremovable == {"gpu-0": "NotUnderutilized"}
    assert state.unneeded_since == {}


def test_a_node_whose_pods_cannot_move_stays_and_is_rechecked_later() -> None:
    tpl = _cpu_template()
    small = PodSnapshot("default/a", "default", "o", 0.0, CPU_POD, "cpu-0")
    big_req = PodRequirements(requests=quantities({"cpu": 3.5}))
    big = PodSnapshot("default/b", "default", "o", 0.0, big_req, "cpu-1")
    nodes = (_node("cpu-0", "cpu", tpl, [small]), _node("cpu-1", "cpu", tpl, [big]))
    pods = {small.key: small, big.key: big}
    snap = ClusterSnapshot((_group("cpu", tpl, 2),), nodes, pods)
    result, state = _run(snap, 1000.0)
    assert result.unremovable["cpu-0"] == "NoPlaceToMovePods"
    assert result.unremovable["cpu-1"] == "NotUnderutilized"
    assert state.unremovable_until["cpu-0"] == 1300.0
    assert _run(snap, 1100.0, state=state)[0].unremovable["cpu-0"] == "RecentlyUnremovable"


def test_a_node_whose_pods_fit_elsewhere_is_drained() -> None:
    tpl = _cpu_template()
    pod = PodSnapshot("default/a", "default", "ReplicaSet/default/app", 0.0, CPU_POD, "cpu-0")
    nodes = (_node("cpu-0", "cpu", tpl, [pod]), _node("cpu-1", "cpu", tpl, []))
    snap = ClusterSnapshot((_group("cpu", tpl, 2),), nodes, {pod.key: pod})
    _, state = _run(snap, 0.0)
    result, _ = _run(snap, 601.0, state=state)
    # cpu-0's pod moves onto cpu-1 in the persisted simulation, so cpu-1 then holds a pod
    # with nowhere to go: exactly one node goes, drained
    assert [(d.node, d.empty) for d in result.deletions] == [("cpu-0", False)]
    assert result.unremovable["cpu-1"] == "NoPlaceToMovePods"
    other = PodSnapshot("default/z", "default", "o", 0, CPU_POD, "cpu-1")
    lone = ClusterSnapshot(
        (_group("cpu", tpl, 2),),
        (nodes[0], _node("cpu-1", "cpu", tpl, [other])),
        {pod.key: pod},
    )
    _, state = _run(lone, 0.0)
    result, _ = _run(lone, 601.0, state=state)
    assert {(d.node, d.empty, d.pods) for d in result.deletions} == {
        ("cpu-0", False, ("default/a",))
    }


@pytest.mark.parametrize(
    ("pod", "reason"),
    [
        (PodSnapshot("default/bare", "default", "", 0.0, CPU_POD, "cpu-0"), "NotReplicated"),
        (
            PodSnapshot("default/s", "default", "o", 0.0, CPU_POD, "cpu-0", local_storage=True),
            "LocalStorageRequested",
        ),
        (
            PodSnapshot("kube-system/d", "kube-system", "o", 0.0, CPU_POD, "cpu-0"),
            "UnmovableKubeSystemPod",
        ),
    ],
)
def test_drain_rules_block_removal(pod: PodSnapshot, reason: str) -> None:
    tpl = _cpu_template()
    nodes = (_node("cpu-0", "cpu", tpl, [pod]), _node("cpu-1", "cpu", tpl, []))
    result, _ = _run(ClusterSnapshot((_group("cpu", tpl, 2),), nodes, {pod.key: pod}), 0.0)
    assert result.unremovable["cpu-0"] == reason


def test_new_pods_disable_scale_down_for_the_loop() -> None:
    snap = _empty_gpu_cluster(2)
    _, state = _run(snap, 0.0)
    pod = _pending("default/app-1", GPU_POD, created=650.0)
    busy = ClusterSnapshot(snap.groups, snap.nodes, {pod.key: pod})
    # the pending pod fits one of the empty nodes, so it is not pending for the autoscaler
    assert _run(busy, 660.0, state=state)[0].scale_down_status == "ScaleDownNodeDeleteStarted"
    nofit = _pending(
        "default/big",
        PodRequirements(
            requests={"amd.com/gpu": 4}, node_selector=GPU_LABELS, tolerations=GPU_POD.tolerations
        ),
        created=650.0,
    )
    busy = ClusterSnapshot(snap.groups, snap.nodes, {nofit.key: nofit})
    result, _ = _run(busy, 660.0, state=state)
    assert result.scale_up_status == "ScaleUpInCooldown"
    assert result.scale_down_status == "ScaleDownInCooldown"


def test_options_reject_bad_values() -> None:
    with pytest.raises(ValueError, match="scan_interval_s"):
        AutoscalingOptions(scan_interval_s=0)
    with pytest.raises(ValueError, match="non-negative"):
        AutoscalingOptions(scale_down_unneeded_time_s=-1)
    with pytest.raises(ValueError, match="within"):
        AutoscalingOptions(scale_down_utilization_threshold=1.5)


@pytest.mark.parametrize("seed", range(12))
def test_next_change_bounds_when_an_iteration_can_decide_differently(seed: int) -> None:
    # the simulator skips iterations before next_change while the cluster is unchanged
    from gpuscale.controllers.cluster_autoscaler import next_change

    rng = random.Random(seed)
    tpl = _gpu_template()
    nodes = tuple(_node(f"gpu-{i}", "gpu", tpl, []) for i in range(rng.randint(1, 3)))
    pods = {}
    for i in range(rng.randint(0, 2)):
        pod = _pending(f"default/app-{i}", GPU_POD, created=rng.uniform(0, 100))
        pods[pod.key] = pod
    snap = ClusterSnapshot((_group("gpu", tpl, len(nodes), hi=len(nodes)),), nodes, pods)
    state = AutoscalerState(last_scale_up=rng.uniform(-700, 100))
    options = AutoscalingOptions()
    now = rng.uniform(0, 120)
    result, after = run_once(snap, state, options, now, random.Random(0))
    horizon = next_change(snap, after, options, now)
    assert horizon >= now
    for _ in range(5):
        later = rng.uniform(now, min(horizon, now + 2000))
        if later >= horizon:
            continue
        again, again_state = run_once(snap, after, options, later, random.Random(0))
        assert (again.scale_up_status, again.scale_down_status) == (
            result.scale_up_status,
            result.scale_down_status,
        )
        assert again.deletions == result.deletions
        assert again_state.unneeded_since == after.unneeded_since
