"""The profile adapter and the request bodies built from it (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.cloud import api
from gpuscale.cloud.spec import (
    ClusterSpec,
    PoolSpec,
    Taint,
    cluster_spec_from_profile,
    parse_taint,
)
from gpuscale.errors import ProfileError


def _profile(**cluster: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "c", "region": "atl1"}
    base.update(cluster)
    return {
        "cluster": base,
        "node_pools": [
            {
                "name": "gpu",
                "size": "gpu-mi300x1-192gb",
                "gpu_vendor": "amd",
                "min_nodes": 0,
                "max_nodes": 2,
            },
            {"name": "general", "size": "s-4vcpu-8gb", "count": 2},
        ],
    }


def test_a_tutorial_shaped_profile_reads_into_a_spec() -> None:
    spec = cluster_spec_from_profile(_profile(vpc_uuid="v-1", ha=True, tags=["ml"]))
    assert spec == ClusterSpec(
        name="c",
        region="atl1",
        version="latest",
        vpc_uuid="v-1",
        ha=True,
        tags=("ml",),
        pools=(
            PoolSpec(
                name="gpu",
                size="gpu-mi300x1-192gb",
                gpu_vendor="amd",
                gpus_per_node=1,
                min_nodes=0,
                max_nodes=2,
            ),
            PoolSpec(name="general", size="s-4vcpu-8gb", count=2),
        ),
    )
    assert spec.vendors == {"amd"}
    assert spec.pools[0].autoscaled
    assert spec.pools[0].largest_count == 2
    assert spec.pools[0].initial_count == 0
    assert not spec.pools[1].autoscaled
    assert spec.pools[1].largest_count == 2


@pytest.mark.parametrize(
    ("mutate", "where", "message"),
    [
        (lambda p: p.pop("cluster"), "cluster", "missing or not a mapping"),
        (lambda p: p["cluster"].pop("name"), "cluster.name", "name is missing"),
        (
            lambda p: p["cluster"].update(provider="generic"),
            "cluster.provider",
            "only DigitalOcean",
        ),
        (lambda p: p["cluster"].update(version=1.3), "cluster.version", "YAML read a number"),
        (lambda p: p["cluster"].update(ha="yes"), "cluster.ha", "expected true or false"),
        (lambda p: p.update(node_pools=[]), "node_pools", "no node_pools"),
        (lambda p: p["node_pools"][0].pop("max_nodes"), "node_pools[0].max_nodes", "both"),
        (lambda p: p["node_pools"][1].pop("count"), "node_pools[1]", "or count (fixed)"),
        (
            lambda p: p["node_pools"][0].update(min_nodes=3),
            "node_pools[0].max_nodes",
            "make no pool",
        ),
        (lambda p: p["node_pools"][0].update(count=5), "node_pools[0].count", "outside"),
        (
            lambda p: p["node_pools"][0].update(gpu_vendor="intel"),
            "node_pools[0].gpu_vendor",
            "unknown GPU vendor",
        ),
        (lambda p: p["node_pools"][1].update(count=-1), "node_pools[1].count", "whole number"),
        (lambda p: p["node_pools"][1].update(name="gpu"), "node_pools[1].name", "two node pools"),
        (
            lambda p: p["node_pools"][0].update(taints=["amd.com/gpu"]),
            "node_pools[0].taints[0]",
            "cannot read taint",
        ),
        (
            lambda p: p["node_pools"][0].update(labels=["a"]),
            "node_pools[0].labels",
            "mapping of labels",
        ),
    ],
)
def test_bad_profiles_name_the_key(mutate: Any, where: str, message: str) -> None:
    profile = _profile()
    mutate(profile)
    with pytest.raises(ProfileError) as caught:
        cluster_spec_from_profile(profile, source="p.yaml")
    assert caught.value.where == f"p.yaml: {where}"
    assert message in caught.value.message
    assert caught.value.fix


@pytest.mark.parametrize(
    ("text", "taint"),
    [
        ("amd.com/gpu:NoSchedule", Taint("amd.com/gpu", "NoSchedule")),
        ("dedicated=gpu:NoExecute", Taint("dedicated", "NoExecute", "gpu")),
        ({"key": "nvidia.com/gpu", "effect": "NoSchedule"}, Taint("nvidia.com/gpu", "NoSchedule")),
    ],
)
def test_taints_read_both_spellings(text: Any, taint: Taint) -> None:
    assert parse_taint(text, where="x") == taint


def test_unknown_taint_effect_lists_the_allowed_ones() -> None:
    with pytest.raises(ProfileError, match="unknown taint effect 'Sometimes'") as caught:
        parse_taint("a=b:Sometimes", where="x")
    assert caught.value.fix is not None
    assert "NoSchedule, PreferNoSchedule, NoExecute" in caught.value.fix


def test_create_body_follows_the_openapi_cluster_model() -> None:
    spec = cluster_spec_from_profile(_profile(vpc_uuid="v-1"))
    body = api.cluster_create_body(spec)
    assert list(body) == [
        "name",
        "region",
        "version",
        "vpc_uuid",
        "node_pools",
        "amd_gpu_device_plugin",
        "amd_gpu_device_metrics_exporter_plugin",
    ]
    assert body["node_pools"][0] == {
        "name": "gpu",
        "size": "gpu-mi300x1-192gb",
        "count": 0,
        "auto_scale": True,
        "min_nodes": 0,
        "max_nodes": 2,
    }
    assert body["node_pools"][1] == {"name": "general", "size": "s-4vcpu-8gb", "count": 2}


def test_gpu_metrics_false_leaves_the_exporter_out() -> None:
    spec = cluster_spec_from_profile(_profile(gpu_metrics=False))
    assert api.addons_body(spec) == {"amd_gpu_device_plugin": {"enabled": True}}


def test_cpu_only_clusters_send_no_gpu_addons() -> None:
    spec = ClusterSpec(name="c", region="atl1", pools=(PoolSpec("p", "s-4vcpu-8gb", count=1),))
    assert api.addons_body(spec) == {}


def test_mixed_vendors_get_both_device_plugins() -> None:
    spec = ClusterSpec(
        name="c",
        region="nyc2",
        pools=(
            PoolSpec("a", "gpu-mi300x1-192gb", gpu_vendor="amd", count=1),
            PoolSpec("n", "gpu-h100x1-80gb", gpu_vendor="nvidia", count=1),
        ),
        gpu_metrics=False,
    )
    assert api.addons_body(spec) == {
        "amd_gpu_device_plugin": {"enabled": True},
        "nvidia_gpu_device_plugin": {"enabled": True},
    }


def test_credentials_expiry_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        api.get_credentials("id", 0)
    call = api.get_credentials("id", 3600)
    assert call.url() == (
        "https://api.digitalocean.com/v2/kubernetes/clusters/id/credentials?expiry_seconds=3600"
    )


def test_describe_redacts_the_token_and_names_content_type_only_with_a_body() -> None:
    get = api.list_options().describe()
    assert get["headers"] == {
        "Accept": "application/json",
        "Authorization": "Bearer <redacted: DIGITALOCEAN_ACCESS_TOKEN>",
    }
    put = api.update_cluster("id", api.metrics_exporter_body("c")).describe()
    assert put["headers"]["Content-Type"] == "application/json"
    assert put["body"] == {"name": "c", "amd_gpu_device_metrics_exporter_plugin": {"enabled": True}}
