"""Checks against options and sizes, cluster parsing, and kubeconfig building (pure, plus
one file write)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gpuscale.cloud.kubeconfig import (
    build_kubeconfig,
    default_kubeconfig_path,
    merge_kubeconfig,
    write_private,
)
from gpuscale.cloud.plan import check_create, cluster_status, hourly_cost, version_matches
from gpuscale.cloud.spec import DoksCluster, PoolSpec
from gpuscale.errors import InputError
from gpuscale.profile import ClusterSpec

# Shapes from DigitalOcean's OpenAPI models/options.yml and sizes/models/size.yml.
VERSIONS = [
    {"slug": "1.33.1-do.0", "kubernetes_version": "1.33.1"},
    {"slug": "1.32.5-do.1", "kubernetes_version": "1.32.5"},
]
OPTIONS = {
    "options": {
        "regions": [{"name": "Atlanta 1", "slug": "atl1"}, {"name": "New York 2", "slug": "nyc2"}],
        "versions": VERSIONS,
        "sizes": [{"name": "s-4vcpu-8gb", "slug": "s-4vcpu-8gb"}],
    }
}
SIZES = [
    {
        "slug": "s-4vcpu-8gb",
        "price_hourly": 0.07143,
        "regions": ["atl1", "nyc2"],
        "available": True,
    },
    {"slug": "gpu-mi300x1-192gb", "price_hourly": 1.99, "regions": ["atl1"], "available": True},
    {"slug": "gpu-old", "price_hourly": 9.0, "regions": ["atl1"], "available": False},
]


def _spec(*pools: PoolSpec, region: str = "atl1", version: str = "latest") -> DoksCluster:
    return DoksCluster(ClusterSpec(name="c", region=region, version=version), pools=pools)


@pytest.mark.parametrize(
    ("wanted", "slug"),
    [
        ("latest", "1.33.1-do.0"),
        ("1.32", "1.32.5-do.1"),
        ("1.32.5-do.1", "1.32.5-do.1"),
        ("1.3", None),
        ("1.31", None),
    ],
)
def test_version_matches_slugs_minors_and_latest(wanted: str, slug: str | None) -> None:
    assert version_matches(wanted, VERSIONS) == slug


def test_prices_are_per_pool_at_the_largest_size() -> None:
    check = check_create(
        _spec(
            PoolSpec("gpu", "gpu-mi300x1-192gb", gpu_vendor="amd", min_nodes=1, max_nodes=8),
            PoolSpec("general", "s-4vcpu-8gb", count=2),
        ),
        OPTIONS,
        SIZES,
    )
    assert [(r.pool, r.price_hourly, r.largest_count) for r in check.prices] == [
        ("gpu", 1.99, 8),
        ("general", 0.07143, 2),
    ]
    assert check.prices[0].max_per_hour == pytest.approx(15.92)  # the tutorial's max of 8
    assert check.max_per_hour == pytest.approx(15.92 + 0.14286)
    assert any("not among the DOKS options' sizes" in w for w in check.warnings)


def test_a_size_only_in_options_has_an_unknown_price_and_a_warning() -> None:
    options = {"options": {**OPTIONS["options"], "sizes": [{"slug": "gpu-mi325x8-2048gb"}]}}
    check = check_create(_spec(PoolSpec("g", "gpu-mi325x8-2048gb", count=1)), options, SIZES)
    assert check.prices[0].price_hourly is None
    assert check.max_per_hour is None
    assert "contract size" in check.warnings[0]


@pytest.mark.parametrize(
    ("spec", "where", "message"),
    [
        (
            _spec(PoolSpec("g", "s-4vcpu-8gb", count=1), region="sfo9"),
            "cluster.region",
            "not offered in region 'sfo9'",
        ),
        (
            _spec(PoolSpec("g", "s-4vcpu-8gb", count=1), version="1.2"),
            "cluster.version",
            "no version '1.2'",
        ),
        (_spec(PoolSpec("g", "gpu-old", count=1)), "node_pools[0].size", "not available"),
        (
            _spec(
                PoolSpec("g", "s-4vcpu-8gb", count=1),
                PoolSpec("h", "gpu-mi300x1-192gb", count=1),
                region="nyc2",
            ),
            "node_pools[1].size",
            "is not offered in nyc2",
        ),
    ],
)
def test_what_digitalocean_would_reject_is_an_input_error(
    spec: DoksCluster, where: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        check_create(spec, OPTIONS, SIZES, source="g.yaml")
    assert caught.value.where == f"g.yaml: {where}"
    assert message in caught.value.message


def test_the_size_error_names_the_regions_that_have_it() -> None:
    spec = _spec(PoolSpec("h", "gpu-mi300x1-192gb", count=1), region="nyc2")
    with pytest.raises(InputError) as caught:
        check_create(spec, OPTIONS, SIZES)
    assert caught.value.fix == "use a region that has it (atl1) or another size"


CLUSTER = {
    "kubernetes_cluster": {
        "id": "bd5f",
        "name": "c",
        "region": "atl1",
        "version": "1.33.1-do.0",
        "endpoint": "https://bd5f.k8s.ondigitalocean.com",
        "status": {"state": "running", "message": ""},
        "node_pools": [
            {
                "name": "general",
                "size": "s-4vcpu-8gb",
                "count": 2,
                "auto_scale": False,
                "min_nodes": 0,
                "max_nodes": 0,
                "nodes": [{"status": {"state": "running"}}, {"status": {"state": "running"}}],
            },
            {
                "name": "gpu",
                "size": "gpu-mi300x1-192gb",
                "count": 2,
                "auto_scale": True,
                "min_nodes": 0,
                "max_nodes": 4,
                "nodes": [{"status": {"state": "running"}}, {"status": {"state": "deleting"}}],
            },
        ],
        "amd_gpu_device_plugin": {"enabled": True},
        "amd_gpu_device_metrics_exporter_plugin": None,
    }
}


def test_cluster_status_counts_nodes_by_state_and_reads_addons() -> None:
    status = cluster_status(CLUSTER)
    assert status.running
    assert not status.failed
    assert status.pools[1].nodes == {"running": 1, "deleting": 1}
    assert (status.nodes_running, status.nodes_expected) == (3, 4)
    assert status.addons == {
        "amd_gpu_device_plugin": True,
        "amd_gpu_device_metrics_exporter_plugin": None,
        "nvidia_gpu_device_plugin": None,
    }
    assert hourly_cost(status, SIZES) == pytest.approx(2 * 0.07143 + 1.99)
    assert hourly_cost(status, SIZES[:1]) is None


CREDENTIALS = {
    "server": "https://bd5f.k8s.ondigitalocean.com",
    "certificate_authority_data": "Q0E=",
    "client_certificate_data": None,
    "client_key_data": None,
    "token": "tok",
    "expires_at": "2026-12-01T00:00:00Z",
}


def test_kubeconfig_uses_doctls_names_and_the_token() -> None:
    config = build_kubeconfig("c", "atl1", CREDENTIALS)
    assert config["current-context"] == "do-atl1-c"
    assert config["clusters"] == [
        {
            "name": "do-atl1-c",
            "cluster": {
                "server": "https://bd5f.k8s.ondigitalocean.com",
                "certificate-authority-data": "Q0E=",
            },
        }
    ]
    assert config["users"] == [{"name": "do-atl1-c-admin", "user": {"token": "tok"}}]
    assert config["contexts"] == [
        {"name": "do-atl1-c", "context": {"cluster": "do-atl1-c", "user": "do-atl1-c-admin"}}
    ]


def test_kubeconfig_falls_back_to_client_certificates() -> None:
    creds = {
        **CREDENTIALS,
        "token": None,
        "client_certificate_data": "Y2VydA==",
        "client_key_data": "a2V5",
    }
    user = build_kubeconfig("c", "atl1", creds)["users"][0]["user"]
    assert user == {"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}
    with pytest.raises(InputError, match="neither a token nor a client certificate"):
        build_kubeconfig("c", "atl1", {**CREDENTIALS, "token": None})


def test_merge_replaces_entries_of_the_same_name_and_keeps_others() -> None:
    old = build_kubeconfig("c", "atl1", {**CREDENTIALS, "token": "old"})
    other = {
        "clusters": [{"name": "kind"}],
        "users": [{"name": "kind"}],
        "contexts": [{"name": "kind"}],
        "current-context": "kind",
    }
    merged = merge_kubeconfig(
        merge_kubeconfig(other, old), build_kubeconfig("c", "atl1", CREDENTIALS), set_current=False
    )
    assert [u["name"] for u in merged["users"]] == ["kind", "do-atl1-c-admin"]
    assert merged["users"][1]["user"]["token"] == "tok"
    assert merged["current-context"] == "do-atl1-c"  # set by the first merge
    kept = merge_kubeconfig(other, old, set_current=False)
    assert kept["current-context"] == "kind"


def test_merge_target_is_the_first_kubeconfig_entry(tmp_path: Path) -> None:
    assert default_kubeconfig_path({"KUBECONFIG": "/a:/b"}, tmp_path) == Path("/a")
    assert default_kubeconfig_path({}, tmp_path) == tmp_path / ".kube" / "config"


def test_write_private_is_0600_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "config"
    write_private(target, "a: 1\n")
    write_private(target, "a: 2\n")
    assert target.read_text() == "a: 2\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in target.parent.iterdir()) == ["config"]
