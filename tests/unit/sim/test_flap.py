"""steady_load_flap (for the lint rule flaps-under-steady-load) on the tutorial and its fix."""

from __future__ import annotations

from pathlib import Path

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.sim.flap import steady_load_flap

ROOT = Path(__file__).resolve().parents[3]


def _verdict(folder: str, *, with_profile: bool = True):  # type: ignore[no-untyped-def]
    path = ROOT / "examples" / folder
    manifests = read_manifests([path])
    profile = read_profile(path / "gpuscale.yaml") if with_profile else None
    return steady_load_flap(manifests, profile, manifests.by_kind("ScaledObject")[0])


def test_the_tutorial_flaps_between_one_and_two() -> None:
    verdict = _verdict("tutorial")
    assert verdict is not None
    assert verdict.flaps
    assert verdict.replicas == (1, 2)
    assert verdict.load == "my_custom_gauge=160 on one pod (2 × threshold 80)"
    # the HPA's 300 s window, one sync, and up to two kube-state-metrics scrapes (30 s)
    assert verdict.period_s is not None
    assert 300 + 15 < verdict.period_s <= 300 + 15 + 2 * 30
    assert verdict.reversals >= 4
    assert verdict.describe().startswith("flaps 1 ↔ 2 every ")


def test_the_tutorial_flaps_with_the_default_profile_too() -> None:
    verdict = _verdict("tutorial", with_profile=False)
    assert verdict is not None
    assert verdict.flaps
    assert verdict.replicas == (1, 2)


def test_the_fixed_tutorial_holds_two() -> None:
    verdict = _verdict("tutorial-fixed")
    assert verdict is not None
    assert not verdict.flaps
    assert verdict.replicas == (2,)
    assert verdict.changes == 1
    assert (
        verdict.describe()
        == "holds 2 replicas under my_custom_gauge=160 on one pod (2 × threshold 80)"
    )


def test_it_cannot_decide_for_a_query_on_cluster_metrics_only() -> None:
    path = ROOT / "examples" / "tutorial"
    text = (
        (path / "resources.yaml")
        .read_text()
        .replace(
            "sum(my_custom_gauge{}) / "
            'sum(kube_deployment_status_replicas{deployment="go-from-configmap"})',
            "sum(kube_node_info)",
        )
    )
    manifests = ManifestSet(load_text(text, "resources.yaml"))
    assert steady_load_flap(manifests, None, manifests.by_kind("ScaledObject")[0]) is None


def test_a_target_outside_the_set_is_undecided() -> None:
    path = ROOT / "examples" / "tutorial"
    text = (
        (path / "resources.yaml")
        .read_text()
        .replace("name: go-from-configmap\n  pollingInterval", "name: elsewhere\n  pollingInterval")
    )
    manifests = ManifestSet(load_text(text, "resources.yaml"))
    assert steady_load_flap(manifests, None, manifests.by_kind("ScaledObject")[0]) is None
