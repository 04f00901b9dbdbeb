"""The search space: derived from the ScaledObject and the profile, overridable by the
profile's tune: section, and never proposing a ScaledObject the validator refuses."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.errors import GpuscaleError
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


_WRITTEN = st.fixed_dictionaries(
    {},
    optional={
        "min_replicas": st.tuples(st.integers(0, 6), st.integers(0, 6)).map(sorted),
        "max_replicas": st.tuples(st.integers(1, 8), st.integers(1, 8)).map(sorted),
        "gpu_min_nodes": st.tuples(st.integers(0, 12), st.integers(7, 12)).map(sorted),
        "threshold": st.tuples(st.floats(0.01, 50), st.floats(0.01, 50)).map(sorted),
        "scale_up_pods": st.tuples(st.integers(1, 9), st.integers(1, 9)).map(sorted),
        "polling_interval": st.tuples(st.integers(1, 90), st.integers(1, 90)).map(sorted),
    },
)


@settings(max_examples=100, deadline=None)
@given(_WRITTEN, st.data())
def test_every_configuration_stays_inside_the_written_bounds(
    written: dict[str, list[float]], data: st.DataObject
) -> None:
    """Whatever bounds ``tune:`` writes, the space either refuses them in one line (the
    lowest minReplicaCount above the highest maxReplicaCount, warm nodes above the GPU
    pool's 8) or every configuration it yields, repairs made, lies inside each of them."""
    ranges = "".join(f"  {k}: [{v[0]}, {v[1]}]\n" for k, v in written.items())
    text = PROFILE + "tune:\n" + (ranges or "  keep: []\n")
    max_high = written.get("max_replicas", [0, 16])[1]  # derived: 1 to twice the current 8
    min_low = written.get("min_replicas", [0])[0]
    contradictory = min_low > max_high or written.get("gpu_min_nodes", [0])[0] > 8
    if contradictory:
        with pytest.raises(GpuscaleError) as caught:
            _space(text)
        line = caught.value.one_line()
        assert "gpuscale.yaml:" in line
        assert "(fix: " in line
        return
    space, _, _, _ = _space(text)
    threshold = next(p for p in space.params if p.name == "threshold")
    assert threshold.log or threshold.kind == "choice"  # kept above 0: the log scale holds
    chosen = space.sample(_Fixed(data))
    for name, (low, high) in written.items():
        value = getattr(chosen, name)
        # (a threshold is written with 4 significant digits, as KEDA reads it)
        assert low * (1 - 1e-3) <= value <= high * (1 + 1e-3), (name, value, low, high)


def test_bounds_no_repair_can_meet_are_refused_at_their_key() -> None:
    refused = {
        "  min_replicas: [20, 20]\n": "the lowest minReplicaCount of the search, 20, is above "
        "the highest maxReplicaCount, 16",
        "  gpu_min_nodes: [9, 10]\n": "tune.gpu_min_nodes: low 9 is above the gpu pool's "
        "max_nodes 8",
    }
    for written, message in refused.items():
        with pytest.raises(GpuscaleError) as caught:
            _space(PROFILE + "tune:\n" + written)
        line = caught.value.one_line()
        assert f"gpuscale.yaml:{PROFILE.count(chr(10)) + 2}: " in line, line
        assert message in line, line


def test_a_max_replica_count_raised_to_the_min_stays_in_its_bounds() -> None:
    space, _, _, _ = _space(PROFILE + "tune:\n  min_replicas: [3, 4]\n  max_replicas: [1, 3]\n")
    chosen = space.settings({"min_replicas": 4, "max_replicas": 1})
    assert (chosen.min_replicas, chosen.max_replicas) == (3, 3)


def test_a_written_range_that_leaves_out_the_current_value_is_named() -> None:
    text = PROFILE + "tune:\n  max_replicas: [1, 2]\n  threshold: [3, 9]\n"
    space, _, _, profile = _space(text)
    assert space.outside(profile.tune) == [
        "tune.max_replicas [1, 2] leaves out the current value 8: the search will not try it "
        "(widen the range to include it)"
    ]
