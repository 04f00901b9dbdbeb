"""steady_load_flap's speed-ups change no verdict: each case is simulated with them and
without them (``stop_early=False`` runs every simulation to its end; building the inputs
once is compared with reading them a second time with the scenario's gauges, as before).

Cases: the tutorial (flaps) and its fix (holds 2), from examples/, with and without their
profile, and near misses of the tutorial's ScaledObject: other queries (the fix's ``sum``,
``avg``, long range windows, offsets, subqueries, a clock function), metricType Value,
HPA behaviors with short and long windows, scale to zero with and without an idle count,
a fallback, an activation threshold, a target whose pods fit no node pool (lint's
1,000-manifest benchmark has 34 of those) and one that fits only after a scale-up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import Profile
from gpuscale.sim import flap
from gpuscale.sim.flap import FlapVerdict, steady_load_flap
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[3]
TUTORIAL = ROOT / "examples" / "tutorial"
FIXED = ROOT / "examples" / "tutorial-fixed"
QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
SPEC = "  pollingInterval: 30\n  cooldownPeriod: 30\n  minReplicaCount: 1\n"
TRIGGER = "    - type: prometheus\n"

# (case, [(old text, new text), ...]) applied to examples/tutorial/resources.yaml
NEAR_MISSES: list[tuple[str, list[tuple[str, str]]]] = [
    ("tutorial as written", []),
    ("sum (the fix's query)", [(QUERY, 'sum(my_custom_gauge{pod=~"go-.*"})')]),
    ("avg", [(QUERY, "avg(my_custom_gauge{})")]),
    ("divided by a count", [(QUERY, "sum(my_custom_gauge) / count(my_custom_gauge)")]),
    ("a 20m range", [(QUERY, "max(max_over_time(my_custom_gauge[20m]))")]),
    ("an offset", [(QUERY, "sum(my_custom_gauge offset 5m)")]),
    ("a subquery", [(QUERY, "max_over_time(sum(my_custom_gauge)[10m:1m])")]),
    ("a clock function", [(QUERY, "sum(my_custom_gauge) + 0 * time()")]),
    ("metricType Value", [(TRIGGER, TRIGGER + "      metricType: Value\n")]),
    (
        "scale-down window 60s",
        [
            (
                SPEC,
                SPEC + "  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n"
                "        scaleDown:\n          stabilizationWindowSeconds: 60\n",
            )
        ],
    ),
    (
        "scale-down window 20m and a slow policy",
        [
            (
                SPEC,
                SPEC + "  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n"
                "        scaleDown:\n          stabilizationWindowSeconds: 1200\n"
                "          policies:\n            - type: Pods\n              value: 1\n"
                "              periodSeconds: 600\n",
            )
        ],
    ),
    (
        "scale to zero",
        [("  cooldownPeriod: 30\n  minReplicaCount: 1\n", "  minReplicaCount: 0\n")],
    ),
    (
        "idle count and a long initial cooldown",
        [
            (
                "  cooldownPeriod: 30\n  minReplicaCount: 1\n",
                "  minReplicaCount: 1\n  idleReplicaCount: 0\n  initialCooldownPeriod: 900\n",
            )
        ],
    ),
    (
        "a fallback",
        [(SPEC, SPEC + "  fallback:\n    failureThreshold: 3\n    replicas: 4\n")],
    ),
    (
        "an activation threshold above the load",
        [
            (
                "        threshold: '80'\n",
                "        threshold: '80'\n        activationThreshold: '500'\n",
            )
        ],
    ),
    (
        "pods that fit no pool",
        [("doks.digitalocean.com/gpu-brand: amd", "doks.<provider-domain>/gpu-brand: amd")],
    ),
    (
        "no toleration of the GPU taint",
        [("        - key: amd.com/gpu\n", "        - key: other\n")],
    ),
]


def _tutorial(changes: list[tuple[str, str]]) -> ManifestSet:
    text = (TUTORIAL / "resources.yaml").read_text()
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    return ManifestSet(load_text(text, "resources.yaml"))


def _both(manifests: ManifestSet, profile: Profile | None) -> tuple[FlapVerdict | None, float]:
    """The verdict with the speed-ups, checked against the one without; and how far the
    simulation with them ran."""
    ends: list[float] = []
    real = Simulation.result

    def result(self: Simulation):  # type: ignore[no-untyped-def]
        ends.append(self.now)
        return real(self)

    scaled_object = manifests.by_kind("ScaledObject")[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Simulation, "result", result)
        fast = steady_load_flap(manifests, profile, scaled_object)
    slow = steady_load_flap(manifests, profile, scaled_object, stop_early=False)
    assert fast == slow
    return fast, ends[0] if ends else 0.0


@pytest.mark.parametrize(("case", "changes"), NEAR_MISSES, ids=[c for c, _ in NEAR_MISSES])
@pytest.mark.parametrize("with_profile", [True, False], ids=["profile", "defaults"])
def test_stopping_early_changes_no_verdict(
    case: str, changes: list[tuple[str, str]], with_profile: bool
) -> None:
    profile = read_profile(TUTORIAL / "gpuscale.yaml") if with_profile else None
    _both(_tutorial(changes), profile)


@pytest.mark.parametrize("folder", [TUTORIAL, FIXED], ids=["tutorial", "fixed"])
def test_the_examples_verdicts_are_the_same_and_the_fix_stops_early(folder: Path) -> None:
    verdict, ran = _both(read_manifests([folder]), read_profile(folder / "gpuscale.yaml"))
    assert verdict is not None
    assert verdict.flaps == (folder == TUTORIAL)
    if folder == FIXED:
        assert ran < verdict.simulated_s / 2  # holding 2 is proven well before the end
    else:
        assert ran == verdict.simulated_s  # a flap never falls quiet


@pytest.mark.parametrize(
    ("case", "stops"),
    [("pods that fit no pool", True), ("sum (the fix's query)", True), ("a clock function", False)],
)
def test_the_stop_is_taken_where_it_is_proven_and_only_there(case: str, stops: bool) -> None:
    changes = dict(NEAR_MISSES)[case]
    verdict, ran = _both(_tutorial(changes), read_profile(TUTORIAL / "gpuscale.yaml"))
    assert verdict is not None
    assert not verdict.flaps
    assert (ran < verdict.simulated_s) == stops


@pytest.mark.parametrize(("case", "changes"), NEAR_MISSES[:4], ids=[c for c, _ in NEAR_MISSES[:4]])
def test_inputs_built_once_equal_inputs_read_again_with_the_gauges(
    case: str, changes: list[tuple[str, str]]
) -> None:
    manifests = _tutorial(changes)
    profile = read_profile(TUTORIAL / "gpuscale.yaml")
    inputs = build_inputs(manifests, profile, namespace="kube-system")
    (source,) = inputs.scaled_objects
    trigger = source.hpa.triggers[0]
    assert trigger is not None
    planned = flap._load(inputs, source, trigger)
    assert planned is not None
    scenario, _ = planned
    again = build_inputs(
        manifests, profile, namespace="kube-system", gauges={source.target: ("my_custom_gauge",)}
    )
    assert flap._simulated(inputs, source, scenario) == again
