"""examples/tutorial and examples/tutorial-fixed: they load, validate, carry the tutorial's
facts, and every ``file:line`` their READMEs cite points at the key named beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import KeyPath, ManifestSet, Workload, validate

EXAMPLES = Path("examples")
ROW = re.compile(
    r"`(?P<file>[\w.-]+\.yaml):(?P<line>\d+)` \| `(?P<kind>\w+)/(?P<name>[\w-]+)` `(?P<path>[^`]+)`"
)


def _path(text: str) -> KeyPath:
    parts: list[str | int] = []
    for piece in text.split("."):
        name, *indices = piece.split("[")
        parts.append(name)
        parts.extend(int(index.rstrip("]")) for index in indices)
    return tuple(parts)


@pytest.mark.parametrize("example", ["tutorial", "tutorial-fixed"])
def test_example_loads_validates_and_has_a_profile(example: str) -> None:
    loaded = read_manifests([EXAMPLES / example])
    assert validate(loaded) == []
    assert {m.kind for m in loaded} >= {"Deployment", "Service", "ServiceMonitor", "ScaledObject"}
    profile = read_profile(EXAMPLES / example / "gpuscale.yaml")
    (gpu_pool,) = profile.gpu_pools
    assert (gpu_pool.size, gpu_pool.min_nodes, gpu_pool.max_nodes) == ("gpu-mi300x1-192gb", 0, 8)
    assert profile.cluster.provider == "doks"
    assert "go-from-configmap" in profile.workloads


@pytest.mark.parametrize("example", ["tutorial", "tutorial-fixed"])
def test_readme_lines_point_at_their_keys(example: str) -> None:
    readme = (EXAMPLES / example / "README.md").read_text()
    rows = list(ROW.finditer(readme))
    assert len(rows) >= 10
    loaded = read_manifests([EXAMPLES / example])
    for row in rows:
        manifest = next(m for m in loaded if m.kind == row["kind"] and m.name == row["name"])
        assert manifest.file.endswith(row["file"])
        path = _path(row["path"])
        assert manifest.get(path) is not None, row.group(0)
        assert manifest.line_of(path).line == int(row["line"]), row.group(0)


def _by_kind(loaded: ManifestSet) -> dict[str, object]:
    return {m.kind: m.body for m in loaded}


def test_tutorial_keeps_the_tutorials_facts() -> None:
    loaded = read_manifests([EXAMPLES / "tutorial"])
    scaled = loaded.by_kind("ScaledObject")[0].body["spec"]
    assert (scaled["pollingInterval"], scaled["cooldownPeriod"]) == (30, 30)
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (1, 8)
    metadata = scaled["triggers"][0]["metadata"]
    assert metadata["threshold"] == "80"
    assert metadata["query"] == (
        "sum(my_custom_gauge{}) / "
        'sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
    )
    assert "metricType" not in scaled["triggers"][0]
    assert "ignoreNullValues" not in metadata
    monitor = loaded.by_kind("ServiceMonitor")[0].body
    assert monitor["metadata"]["labels"] == {"release": "prometheus"}
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["kube-system"]}
    assert monitor["spec"]["endpoints"][0]["interval"] == "30s"
    workload = Workload.from_manifest(loaded.by_kind("Deployment")[0])
    assert workload.node_selector == {"doks.digitalocean.com/gpu-brand": "amd"}
    assert [t.key for t in workload.tolerations] == ["CriticalAddonsOnly", "amd.com/gpu"]
    assert workload.containers[0].gpus == {"amd.com/gpu": 1.0}
    assert workload.containers[0].readiness_probe is None
    assert any("pip install" in arg for arg in workload.containers[0].args)
    assert all(m.namespace is None for m in loaded)


def test_fixed_keeps_names_gpu_threshold_and_bounds() -> None:
    tutorial = read_manifests([EXAMPLES / "tutorial"])
    fixed = read_manifests([EXAMPLES / "tutorial-fixed"])
    for kind in ("Deployment", "Service", "ServiceMonitor", "ScaledObject"):
        assert fixed.by_kind(kind)[0].name == tutorial.by_kind(kind)[0].name
    before = tutorial.by_kind("ScaledObject")[0].body["spec"]
    after = fixed.by_kind("ScaledObject")[0].body["spec"]
    for key in ("pollingInterval", "minReplicaCount", "maxReplicaCount"):
        assert after[key] == before[key]
    assert after["triggers"][0]["metadata"]["threshold"] == "80"
    gpus = Workload.from_manifest(fixed.by_kind("Deployment")[0]).gpus_per_pod
    assert gpus == {"amd.com/gpu": 1.0}
