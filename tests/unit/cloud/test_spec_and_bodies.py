"""The typed profile made into a cluster spec, and the request bodies built from it (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.cloud import api
from gpuscale.cloud.spec import DoksCluster, PoolSpec, cluster_spec_from_profile
from gpuscale.errors import ProfileError
from gpuscale.kube import Taint
from gpuscale.profile import ClusterSpec, Profile


def _profile(**cluster: Any) -> Profile:
    base: dict[str, Any] = {"name": "c", "region": "atl1"}
    base.update(cluster)
    return Profile.model_validate(
        {
            "cluster": base,
            "node_pools": [
                {"name": "gpu", "size": "gpu-mi300x1-192gb", "min_nodes": 0, "max_nodes": 2},
                {"name": "general", "size": "s-4vcpu-8gb", "count": 2},
            ],
        }
    )


def test_a_tutorial_shaped_profile_reads_into_a_spec() -> None:
    spec = cluster_spec_from_profile(_profile(vpc_uuid="v-1", ha=True, tags=["ml"]))
    # The profile fills the DOKS labels and the GPU taint; DOKS sets those itself, so the
    # spec (and the request) carries none of them.
    assert spec == DoksCluster(
        ClusterSpec(
            name="c", region="atl1", version="latest", vpc_uuid="v-1", ha=True, tags=("ml",)
        ),
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


def test_own_labels_and_taints_are_kept_and_the_provided_ones_left_out() -> None:
    profile = Profile.model_validate(
        {
            "node_pools": [
                {
                    "name": "gpu",
                    "size": "gpu-h100x1-80gb",
                    "max_nodes": 3,
                    "labels": {"team": "ml"},
                    "taints": [
                        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                        {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
                    ],
                },
                {"name": "general", "size": "s-4vcpu-8gb", "count": 1},
            ]
        }
    )
    assert "doks.digitalocean.com/gpu-brand" in profile.node_pools[0].labels
    pool = cluster_spec_from_profile(profile).pools[0]
    assert pool.gpu_vendor == "nvidia"
    assert (pool.min_nodes, pool.max_nodes, pool.count) == (0, 3, None)
    assert pool.labels == {"team": "ml"}
    assert pool.taints == (Taint("dedicated", "ml", "NoExecute"),)


def test_cluster_commands_need_doks_and_pools() -> None:
    generic = Profile.model_validate({"cluster": {"provider": "generic"}})
    with pytest.raises(ProfileError, match="only DigitalOcean") as caught:
        cluster_spec_from_profile(generic, source="p.yaml")
    assert caught.value.where == "p.yaml: cluster.provider"
    with pytest.raises(ProfileError, match="no node pools") as caught:
        cluster_spec_from_profile(Profile.model_validate({"node_pools": []}), source="p.yaml")
    assert caught.value.where == "p.yaml: node_pools"
    assert caught.value.fix


def test_a_cluster_needs_a_pool_that_starts_with_a_node() -> None:
    # DigitalOcean's create-cluster operation needs a node pool with at least one worker.
    only_from_zero = Profile.model_validate(
        {
            "node_pools": [
                {"name": "gpu", "size": "gpu-mi300x1-192gb", "max_nodes": 4},
                {"name": "spare", "size": "s-4vcpu-8gb", "count": 0},
            ]
        }
    )
    with pytest.raises(
        ProfileError, match=r"every node pool \(gpu, spare\) starts with 0"
    ) as caught:
        cluster_spec_from_profile(only_from_zero, source="p.yaml")
    assert caught.value.key_path == ("node_pools",)
    assert "count >= 1" in (caught.value.fix or "")
    one_node = Profile.model_validate(
        {
            "node_pools": [
                {"name": "gpu", "size": "gpu-mi300x1-192gb", "min_nodes": 1, "max_nodes": 4}
            ]
        }
    )
    assert cluster_spec_from_profile(one_node).pools[0].min_nodes == 1


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
    spec = DoksCluster(
        ClusterSpec(name="c", region="atl1"), pools=(PoolSpec("p", "s-4vcpu-8gb", count=1),)
    )
    assert api.addons_body(spec) == {}


def test_mixed_vendors_get_both_device_plugins() -> None:
    spec = DoksCluster(
        ClusterSpec(name="c", region="nyc2", gpu_metrics=False),
        pools=(
            PoolSpec("a", "gpu-mi300x1-192gb", gpu_vendor="amd", count=1),
            PoolSpec("n", "gpu-h100x1-80gb", gpu_vendor="nvidia", count=1),
        ),
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
