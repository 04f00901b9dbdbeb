"""The scheduler's filter plugins, scoring and FailedScheduling message.

``TestTaintTolerationFilter`` cases are transcribed from kubernetes/kubernetes
``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go`` (same names).
The message cases follow ``framework.FitError.Error`` and the default preemption
post-filter text as the scheduler prints them in ``kubectl describe pod``.
"""

from __future__ import annotations

import random

import pytest

from gpuscale.controllers.scheduler import (
    NodeView,
    PodRequirements,
    filter_node,
    quantities,
    schedule_pod,
)
from gpuscale.kube import NodeSelectorTerm, Requirement, Taint, Toleration


def _node(name: str = "nodeA", *, taints: tuple[Taint, ...] = (), labels=None, **alloc: float):
    allocatable = quantities({"cpu": 8, "memory": 32 * 2**30, "pods": 110, **alloc})
    return NodeView(name=name, labels=labels or {}, taints=taints, allocatable=allocatable)


TAINT_CASES = [
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        (),
        (Taint("dedicated", "user1", "NoSchedule"),),
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        (Toleration("dedicated", "Equal", "user1", "NoSchedule"),),
        (Taint("dedicated", "user1", "NoSchedule"),),
        None,
    ),
    (
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
        "NoSchedule",
        (Toleration("dedicated", "Equal", "user2", "NoSchedule"),),
        (Taint("dedicated", "user1", "NoSchedule"),),
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "A pod can be scheduled onto the node, with a toleration uses operator Exists that "
        "tolerates the taints on the node",
        (Toleration("foo", "Exists", "", "NoSchedule"),),
        (Taint("foo", "bar", "NoSchedule"),),
        None,
    ),
    (
        "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
        "pod can be scheduled onto the node",
        (
            Toleration("dedicated", "Equal", "user2", "NoSchedule"),
            Toleration("foo", "Exists", "", "NoSchedule"),
        ),
        (Taint("dedicated", "user2", "NoSchedule"), Taint("foo", "bar", "NoSchedule")),
        None,
    ),
    (
        "A pod has a toleration that keys and values match the taint on the node, but "
        "(non-empty) effect doesn't match, can't be scheduled onto the node",
        (Toleration("foo", "Equal", "bar", "PreferNoSchedule"),),
        (Taint("foo", "bar", "NoSchedule"),),
        "node(s) had untolerated taint {foo: bar}",
    ),
    (
        "The pod has a toleration that keys and values match the taint on the node, the effect "
        "of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled "
        "onto the node",
        (Toleration("foo", "Equal", "bar"),),
        (Taint("foo", "bar", "NoSchedule"),),
        None,
    ),
    (
        "The pod has a toleration that key and value don't match the taint on the node, but "
        "the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        (Toleration("dedicated", "Equal", "user2", "NoSchedule"),),
        (Taint("dedicated", "user1", "PreferNoSchedule"),),
        None,
    ),
    (
        "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod "
        "can be scheduled onto the node",
        (),
        (Taint("dedicated", "user1", "PreferNoSchedule"),),
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "tolerations", "taints", "reason"), TAINT_CASES, ids=[c[0] for c in TAINT_CASES]
)
def test_TestTaintTolerationFilter(
    name: str, tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...], reason: str | None
) -> None:
    reasons, resolvable = filter_node(
        PodRequirements(tolerations=tolerations), _node(taints=taints)
    )
    assert reasons == (() if reason is None else (reason,))
    assert not resolvable


@pytest.mark.parametrize(
    ("requirement", "labels", "fits"),
    [
        (Requirement("zone", "In", ("a", "b")), {"zone": "a"}, True),
        (Requirement("zone", "In", ("a", "b")), {"zone": "c"}, False),
        (Requirement("zone", "NotIn", ("a",)), {}, True),
        (Requirement("zone", "NotIn", ("a",)), {"zone": "a"}, False),
        (Requirement("gpu", "Exists"), {"gpu": ""}, True),
        (Requirement("gpu", "DoesNotExist"), {"gpu": ""}, False),
        (Requirement("gpus", "Gt", ("4",)), {"gpus": "8"}, True),
        (Requirement("gpus", "Lt", ("4",)), {"gpus": "8"}, False),
        (Requirement("gpus", "Gt", ("4",)), {"gpus": "eight"}, False),
    ],
)
def test_required_node_affinity_operators(
    requirement: Requirement, labels: dict[str, str], fits: bool
) -> None:
    pod = PodRequirements(required_terms=(NodeSelectorTerm((requirement,)),))
    reasons, _ = filter_node(pod, _node(labels=labels))
    assert (reasons == ()) is fits


def test_empty_term_matches_nothing_and_terms_are_ored() -> None:
    assert filter_node(PodRequirements(required_terms=(NodeSelectorTerm(),)), _node())[0]
    either = PodRequirements(
        required_terms=(
            NodeSelectorTerm((Requirement("a", "Exists"),)),
            NodeSelectorTerm((Requirement("b", "Exists"),)),
        )
    )
    assert filter_node(either, _node(labels={"b": "1"}))[0] == ()


def test_node_selector_placeholder_domain_matches_no_doks_node() -> None:
    # the tutorial's literal selector key is not the label DOKS puts on GPU nodes
    pod = PodRequirements(node_selector={"doks.<provider-domain>/gpu-brand": "amd"})
    node = _node(labels={"doks.digitalocean.com/gpu-brand": "amd"})
    assert filter_node(pod, node) == (("node(s) didn't match Pod's node affinity/selector",), False)


def test_resources_report_every_shortage_and_are_resolvable() -> None:
    pod = PodRequirements(requests=quantities({"cpu": 16, "amd.com/gpu": 1}))
    reasons, resolvable = filter_node(pod, _node())
    assert reasons == ("Insufficient cpu", "Insufficient amd.com/gpu")
    assert resolvable
    full = NodeView("n", {}, (), quantities({"pods": 2}), pod_count=2)
    assert filter_node(PodRequirements(), full)[0] == ("Too many pods",)


def test_taint_is_reported_before_resources() -> None:
    pod = PodRequirements(requests={"amd.com/gpu": 1})
    node = _node(taints=(Taint("amd.com/gpu"),))
    assert filter_node(pod, node)[0] == ("node(s) had untolerated taint {amd.com/gpu: }",)


def test_failed_scheduling_message_for_a_gpu_pod_on_a_busy_cluster() -> None:
    gpu_pod = PodRequirements(
        requests={"amd.com/gpu": 1},
        tolerations=(Toleration("amd.com/gpu", "Exists"),),
    )
    busy_gpu = NodeView(
        "gpu-1",
        {},
        (Taint("amd.com/gpu"),),
        {"amd.com/gpu": 1, "pods": 110},
        requested={"amd.com/gpu": 1},
        pod_count=1,
    )
    cpu_nodes = [_node(f"cpu-{i}", taints=(Taint("CriticalAddonsOnly", "true"),)) for i in (1, 2)]
    result = schedule_pod(gpu_pod, [busy_gpu, *cpu_nodes], random.Random(0))
    assert result.node is None
    assert result.message == (
        "0/3 nodes are available: 1 Insufficient amd.com/gpu, "
        "2 node(s) had untolerated taint {CriticalAddonsOnly: true}. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert schedule_pod(gpu_pod, [], random.Random(0)).message == (
        "no nodes available to schedule pods"
    )


def test_least_allocated_prefers_the_emptier_node() -> None:
    pod = PodRequirements(requests=quantities({"cpu": 1, "memory": 2**30}))
    busy = NodeView(
        "busy",
        {},
        (),
        quantities({"cpu": 8, "memory": 32 * 2**30, "pods": 110}),
        requested=quantities({"cpu": 6, "memory": 24 * 2**30}),
        nonzero_requested=quantities({"cpu": 6, "memory": 24 * 2**30}),
        pod_count=3,
    )
    idle = _node("idle")
    for seed in range(5):
        assert schedule_pod(pod, [busy, idle], random.Random(seed)).node == "idle"


def test_ties_are_broken_at_random_but_deterministically_per_seed() -> None:
    nodes = [_node(f"n{i}") for i in range(4)]
    picks = {schedule_pod(PodRequirements(), nodes, random.Random(s)).node for s in range(40)}
    assert len(picks) > 1
    assert (
        schedule_pod(PodRequirements(), nodes, random.Random(7)).node
        == schedule_pod(PodRequirements(), nodes, random.Random(7)).node
    )


def test_quantities_round_up_and_reject_negatives() -> None:
    assert quantities({"cpu": 0.0001, "memory": 1.5}) == {"cpu": 1, "memory": 2}
    with pytest.raises(ValueError, match="non-negative"):
        quantities({"cpu": -1})
