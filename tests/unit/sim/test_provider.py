"""The provider's marks on nodes come from the profile's ``cluster.provider``: DOKS labels
each node with its pool and gives it a ``digitalocean://`` ID; a generic cluster's nodes
carry neither (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[3]
TUTORIAL = ROOT / "examples" / "tutorial"


def _run(provider: str) -> Simulation:
    text = (
        (TUTORIAL / "gpuscale.yaml").read_text().replace("provider: doks", f"provider: {provider}")
    )
    inputs = build_inputs(
        read_manifests([TUTORIAL]),
        load_profile_text(text, "gpuscale.yaml"),
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    assert inputs.spec.provider == provider
    sim = Simulation(
        inputs.spec, metrics=inputs.backend(), scalers=inputs.scalers(), warm_start=True
    )
    sim.run(120.0)
    return sim


def _series_labels(sim: Simulation) -> list[dict[str, str]]:
    store = sim.world.metrics.store  # type: ignore[attr-defined]
    return [dict(labels) for labels in store._by_labels]


def test_generic_nodes_carry_no_doks_label_or_id() -> None:
    sim = _run("generic")
    nodes = sim.world.nodes
    assert nodes
    for node in nodes:
        assert not [k for k in node.labels if "digitalocean" in k], node.labels
        assert node.labels["kubernetes.io/hostname"] == node.name
    info = [s for s in _series_labels(sim) if s["__name__"] == "kube_node_info"]
    assert info
    assert all("provider_id" not in s for s in info)
    templates = sim.world.autoscaler.snapshot().groups
    assert all(not [k for k in g.template.labels if "digitalocean" in k] for g in templates)


def test_doks_nodes_carry_the_pool_label_and_a_digitalocean_id() -> None:
    sim = _run("doks")
    for node in sim.world.nodes:
        assert node.labels["doks.digitalocean.com/node-pool"] == node.pool.name
    info = [s for s in _series_labels(sim) if s["__name__"] == "kube_node_info"]
    assert info
    assert all(s["provider_id"].startswith("digitalocean://") for s in info)


def test_an_unknown_provider_is_refused_at_construction() -> None:
    from gpuscale.sim.specs import SimulationSpec
    from tests.unit.sim.worlds import gpu_pool, tutorial_workload

    with pytest.raises(ValueError, match="unknown provider"):
        SimulationSpec((tutorial_workload(),), (gpu_pool(),), provider="aws")
