"""The search space: derived from the ScaledObject and the profile, overridable by the
profile's tune: section, and never proposing a ScaledObject the validator refuses."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.manifests import load_text, validate
from gpuscale.manifests._model import ManifestSet
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import build_inputs
from gpuscale.tune.space import (
    DELETE,
    Space,
    apply,
    derive_space,
    edits,
    format_number,
    starting_with,
)
from tests.unit.tune.fixtures import PROFILE, RESOURCES


def _space(profile_text: str = PROFILE, resources: str = RESOURCES) -> tuple[Space, Any, Any, Any]:
    manifests = ManifestSet(load_text(resources, "resources.yaml"))
    profile = load_profile_text(profile_text, "gpuscale.yaml")
    workload = build_inputs(manifests, profile, namespace="default").spec.workload(
        "go-from-configmap"
    )
    space, so = derive_space(manifests, profile, workload)
    return space, so, manifests, profile


def test_defaults_come_from_the_scaled_object_and_the_pool() -> None:
    space, _, _, _ = _space()
    current = space.current
    assert (current.threshold, current.min_replicas, current.max_replicas) == (6.0, 1, 8)
    assert (current.scale_up_pods, current.scale_up_period) == (2, 60)
    assert (current.scale_down_pods, current.scale_down_period) == (1, 120)
    assert current.scale_down_stabilization == 600
    ranges = {p.name: p for p in space.params}
    assert (ranges["threshold"].low, ranges["threshold"].high, ranges["threshold"].log) == (
        1.5,
        24.0,
        True,
    )
    # The GPU pool holds 8 single-GPU nodes; the search may double it (max_nodes 16).
    assert (space.room, space.pods_per_node, space.gpu_pool_max) == (8, 1, 8)
    assert ranges["max_replicas"].high == 16
    assert space.replica_ceiling == 16
    assert [space.fewest_at_start(n) for n in (0, 3)] == [0, 1]  # maxReplicaCount from 1
    kept, _, _, _ = _space(PROFILE + "tune:\n  max_replicas: [3, 3]\n")
    assert (kept.fewest_at_start(5), kept.replica_ceiling) == (3, 8)
    assert ranges["gpu_min_nodes"].high == 2
    assert "metric_type" not in ranges  # the query is a sum: AverageValue only
    assert space.gpu_pool == "gpu"


def test_the_profile_overrides_bounds_and_keeps_settings() -> None:
    text = PROFILE + "tune:\n  threshold: [3, 9]\n  keep: [polling_interval, select_policy]\n"
    space, _, _, _ = _space(text)
    names = {p.name: p for p in space.params}
    assert (names["threshold"].low, names["threshold"].high) == (3.0, 9.0)
    assert "polling_interval" not in names
    assert "select_policy" not in names


def test_edits_touch_only_changed_keys_and_policies_in_place() -> None:
    space, _, _, _ = _space()
    same = space.settings({})
    assert edits(space, same) == {}
    changed = space.settings({"threshold": 12.345, "scale_down_pods": 2, "idle_replicas": 0})
    out = edits(space, changed)
    behavior = ("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
    assert out == {
        ("spec", "triggers", 0, "metadata", "threshold"): "12.35",
        (*behavior, "scaleDown", "policies", 0, "value"): 2,
        (*behavior, "scaleDown", "policies", 0, "periodSeconds"): 120,
        ("spec", "idleReplicaCount"): 0,
    }
    assert DELETE not in out.values()


def test_format_number_never_writes_exponents() -> None:
    assert [format_number(v) for v in (1200.0, 12.345, 0.003141, 80.0, 0.0)] == [
        "1200",
        "12.35",
        "0.003141",
        "80",
        "0",
    ]


class _Fixed:
    """A Suggester that proposes what hypothesis drew, inside each parameter's range."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def suggest_float(self, name: str, low: float, high: float, *, log: bool = False) -> float:
        return self.data.draw(st.floats(low, high), label=name)

    def suggest_int(self, name: str, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high), label=name)

    def suggest_categorical(self, name: str, choices: Any) -> Any:
        return self.data.draw(st.sampled_from(list(choices)), label=name)


SPACE, SO, MANIFESTS, PROFILE_MODEL = _space()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_point_of_the_space_is_a_scaled_object_the_validator_admits(
    data: st.DataObject,
) -> None:
    chosen = SPACE.sample(_Fixed(data))
    manifests, edited, profile = apply(SPACE, chosen, MANIFESTS, SO, PROFILE_MODEL)
    problems = [p for p in validate([edited]) if p.severity == "error"]
    assert problems == [], problems
    assert chosen.max_replicas >= max(chosen.min_replicas, 1)
    if chosen.idle_replicas is not None:
        assert chosen.idle_replicas < chosen.min_replicas
    pool = profile.pool("gpu")
    assert pool is not None
    assert pool.min_nodes == chosen.gpu_min_nodes <= pool.highest
    # The pool holds maxReplicaCount, growing past the user's 8 nodes only for it.
    assert pool.highest == max(8, chosen.max_replicas)
    build_inputs(manifests, profile)  # the simulator reads it too


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(0, 20))
def test_every_run_starts_with_the_replicas_the_configuration_keeps(
    data: st.DataObject, start: int
) -> None:
    begun = starting_with(MANIFESTS, "go-from-configmap", start)
    chosen = SPACE.sample(_Fixed(data))
    manifests, _, _ = apply(SPACE, chosen, begun, SO, PROFILE_MODEL)
    (after,) = (m for m in manifests if m.kind == "Deployment")
    replicas = after.get(("spec", "replicas"))
    assert chosen.min_replicas <= replicas <= chosen.max_replicas
    assert replicas == start or replicas in (chosen.min_replicas, chosen.max_replicas)


def test_a_max_replica_count_beyond_the_pool_raises_its_max_nodes_only() -> None:
    space, so, manifests, profile = _space()
    wide = space.settings({"max_replicas": 13, "gpu_min_nodes": 2})
    assert space.gpu_max_nodes(wide) == 13
    assert space.gpu_max_nodes(space.settings({"max_replicas": 5})) == 8
    _, _, edited = apply(space, wide, manifests, so, profile)
    pool = edited.pool("gpu")
    assert pool is not None
    assert (pool.min_nodes, pool.max_nodes) == (2, 13)
    assert [p.name for p in edited.node_pools] == [p.name for p in profile.node_pools]
    held = space.settings({"max_replicas": 4})
    assert apply(space, held, manifests, so, profile)[2] is profile  # nothing to edit


def test_a_configuration_maps_into_the_space_only_exactly() -> None:
    space, _, _, _ = _space()
    point = space.point(space.current)
    assert point is not None
    assert space.settings(point) == space.current
    assert set(point) == {p.name for p in space.params}
    # KEDA's maxReplicaCount 100 is above the space's ceiling (16): not in the space.
    assert space.point(replace(space.current, max_replicas=100)) is None
    # A threshold the repair would round (4 significant digits) is not held exactly.
    assert space.point(replace(space.current, threshold=6.00001)) is None
    narrowed, _, _, _ = _space(PROFILE + "tune:\n  threshold: [7, 9]\n")
    assert narrowed.point(narrowed.current) is None  # the user's 6 is outside [7, 9]
