"""The profile: defaults (with their sources), catalogue filling, provider labels and taints,
and every class of bad input as a one-line ProfileError naming file:line and the fix."""

from __future__ import annotations

import textwrap

import pytest

from gpuscale.errors import ProfileError
from gpuscale.profile import (
    CATALOGUE,
    PRICES_READ,
    NodePool,
    Profile,
    WorkloadSpec,
    load_profile_text,
    size_for,
)


def test_defaults_follow_upstream_and_the_tutorial() -> None:
    profile = Profile.default()
    autoscaler = profile.autoscaler
    # kubernetes/autoscaler FAQ flag table and core/static_autoscaler.go
    assert (autoscaler.scan_interval, autoscaler.scale_up_delay, autoscaler.scale_up_delay_gpu) == (
        10.0,
        2.0,
        30.0,
    )
    assert autoscaler.scale_down_unneeded_time == autoscaler.scale_down_delay_after_add == 600.0
    assert autoscaler.scale_down_utilization_threshold == 0.5
    assert autoscaler.scale_down_gpu_utilization_threshold == 0.5
    assert autoscaler.expander == "random"  # DOKS' documented default
    assert (profile.hpa.sync_period, profile.hpa.tolerance) == (15.0, 0.1)
    assert profile.hpa.downscale_stabilization == 300.0
    assert profile.prometheus.scrape_interval == 30.0
    assert profile.prometheus.release == "prometheus"
    assert profile.prometheus.address == (
        "http://prometheus-operated.monitoring.svc.cluster.local:9090"
    )
    assert profile.prometheus.version == "3"
    assert profile.keda.namespace == "keda"
    general, gpu = profile.node_pools
    assert (general.count, general.gpu, general.autoscaling) == (2, "none", False)
    assert (gpu.size, gpu.min_nodes, gpu.max_nodes, gpu.autoscaling) == (
        "gpu-mi300x1-192gb",
        0,
        8,
        True,
    )
    assert profile.workload("anything") == WorkloadSpec()


def test_doks_pools_get_catalogue_values_labels_and_taints() -> None:
    profile = Profile.default()
    gpu = profile.pool("gpu")
    assert gpu is not None
    assert (gpu.gpu, gpu.gpu_model, gpu.gpus_per_node, gpu.price_per_hour) == (
        "amd",
        "mi300x",
        1,
        1.99,
    )
    assert gpu.gpu_resource == "amd.com/gpu"
    assert gpu.labels == {
        "doks.digitalocean.com/node-pool": "gpu",
        "doks.digitalocean.com/gpu-brand": "amd",
        "doks.digitalocean.com/gpu-model": "mi300x",
    }
    assert [str(t) for t in gpu.node_taints] == ["amd.com/gpu:NoSchedule"]
    assert gpu.provisioning_time == 600.0
    assert (gpu.lowest, gpu.highest) == (0, 8)
    general = profile.pool("general")
    assert general is not None
    assert general.taints == ()
    assert general.provisioning_time == 240.0


def test_user_values_win_over_catalogue_and_provider() -> None:
    profile = load_profile_text(
        textwrap.dedent(
            """\
            node_pools:
              - name: h100
                size: gpu-h100x1-80gb
                price_per_hour: 2.5
                labels: {team: ml}
                taints: []
                max_nodes: 2
                provisioning_time: 7m30s
            """
        ),
        "p.yaml",
    )
    (pool,) = profile.node_pools
    assert (pool.gpu, pool.price_per_hour, pool.taints, pool.min_nodes) == ("nvidia", 2.5, (), 0)
    assert pool.labels["team"] == "ml"
    assert pool.labels["doks.digitalocean.com/gpu-brand"] == "nvidia"
    assert pool.provisioning_time == 450.0


def test_generic_provider_adds_no_labels_and_least_waste() -> None:
    profile = load_profile_text(
        "cluster: {provider: generic}\n"
        "node_pools:\n  - {name: g, size: gpu-l40sx1-48gb, count: 1}\n",
        "p.yaml",
    )
    (pool,) = profile.node_pools
    assert pool.labels == {}
    assert pool.taints == ()
    assert profile.autoscaler.expander == "least-waste"


def test_profile_catalogue_adds_and_overrides_sizes() -> None:
    profile = load_profile_text(
        textwrap.dedent(
            """\
            catalogue:
              - {slug: gpu-mi325x1-256gb, gpu_vendor: amd, gpu_model: mi325x, gpus: 1,
                 vcpus: 20, memory: 256Gi, price_per_hour: 2.75, prices_read: "2026-11-01"}
              - {slug: gpu-mi300x1-192gb, gpu_vendor: amd, gpu_model: mi300x, gpus: 1,
                 vcpus: 20, memory: 240Gi, price_per_hour: 1.49}
            node_pools:
              - {name: a, size: gpu-mi325x1-256gb, max_nodes: 1}
              - {name: b, size: gpu-mi300x1-192gb, max_nodes: 1}
            """
        ),
        "p.yaml",
    )
    a, b = profile.node_pools
    assert (a.gpu_model, a.price_per_hour, a.memory) == ("mi325x", 2.75, 256 * 1024**3)
    assert b.price_per_hour == 1.49


def test_catalogue_has_the_documented_prices() -> None:
    prices = {size.slug: size.price_per_hour for size in CATALOGUE}
    assert prices["gpu-mi300x1-192gb"] == 1.99
    assert prices["gpu-mi300x8-1536gb"] == 15.92
    assert prices["gpu-h100x1-80gb"] == 3.39
    assert prices["gpu-h100x8-640gb"] == 23.92
    assert prices["gpu-l40sx1-48gb"] == 1.57
    assert PRICES_READ == "2026-05-28"
    assert size_for("no-such-size") is None


@pytest.mark.parametrize(
    ("spec", "prompt", "output", "seconds"),
    [
        ({"service_time": "200ms"}, 0, 0, 0.2),
        ({"requests_per_second": 8, "concurrency": 4}, 0, 0, 0.5),
        (
            {
                "prefill_tokens_per_second": 1000,
                "decode_tokens_per_second": 50,
                "service_time": "1s",
            },
            500,
            100,
            2.5,
        ),
        ({"prefill_tokens_per_second": 1000, "decode_tokens_per_second": 50}, 0, 0, None),
    ],
)
def test_service_time(
    spec: dict[str, object], prompt: int, output: int, seconds: float | None
) -> None:
    workload = WorkloadSpec.model_validate(spec)
    assert workload.service_time_for(prompt, output) == seconds


def test_empty_profile_is_all_defaults() -> None:
    assert load_profile_text("", "p.yaml") == Profile.default()
    assert load_profile_text("# only a comment\n", "p.yaml") == Profile.default()


def test_models_are_frozen() -> None:
    profile = Profile.default()
    with pytest.raises(ValueError, match="frozen"):
        profile.hpa.sync_period = 1.0  # type: ignore[misc]
    assert NodePool.model_config.get("extra") == "forbid"


@pytest.mark.parametrize(
    ("text", "line", "words", "fix"),
    [
        (
            "prometheus:\n  scrape_intervl: 30s\n",
            2,
            "unknown key 'scrape_intervl' in prometheus",
            "did you mean scrape_interval?",
        ),
        ("clustr: {}\n", 1, "unknown key 'clustr' in the profile", "did you mean cluster?"),
        (
            "workloads:\n  app:\n    startup_tme: 3s\n",
            3,
            "unknown key 'startup_tme' in workloads.app",
            "did you mean startup_time?",
        ),
        ("hpa:\n  sync_period: soon\n", 2, "hpa.sync_period: expected a duration", "30s"),
        ("hpa:\n  sync_period: -5s\n", 2, "hpa.sync_period", "duration"),
        (
            "hpa:\n  tolerance: lots\n",
            2,
            "hpa.tolerance: must be a valid number",
            "write a valid number",
        ),
        ("cluster:\n  provider: aws\n", 2, "cluster.provider", "write 'doks' or 'generic'"),
        (
            "autoscaler:\n  scale_down_utilization_threshold: 2\n",
            2,
            "less than or equal to 1",
            "write a value less than or equal to 1",
        ),
        (
            "node_pools:\n  - name: x\n    size: my-node\n    max_nodes: 2\n",
            3,
            "size 'my-node' is not in the catalogue",
            "price_per_hour",
        ),
        (
            "node_pools:\n  - name: x\n    size: gpu-h100x1-80gb\n    count: 1\n    max_nodes: 2\n",
            2,
            "count and min_nodes/max_nodes are both set",
            "keep count",
        ),
        (
            "node_pools:\n  - {name: x, size: s-2vcpu-4gb}\n",
            2,
            "neither max_nodes nor count",
            "set max_nodes",
        ),
        (
            "node_pools:\n  - {name: x, size: s-2vcpu-4gb, min_nodes: 3, max_nodes: 1}\n",
            2,
            "min_nodes 3 is above",
            "lower",
        ),
        (
            "node_pools:\n  - {name: x, size: s-2vcpu-4gb, count: 1}\n"
            "  - {name: x, size: s-2vcpu-4gb, count: 1}\n",
            1,
            "two node pools are called 'x'",
            "its own name",
        ),
        (
            "node_pools:\n  - {name: x, size: s-2vcpu-4gb, count: 1, memory: lots}\n",
            2,
            "node_pools[0].memory",
            "quantity",
        ),
        (
            "node_pools:\n  - {name: x, size: s-2vcpu-4gb, count: 1, gpus_per_node: 2}\n",
            2,
            "gpus_per_node is set but gpu is none",
            "gpu: amd",
        ),
        (
            "workloads:\n  app: {service_time: 1s, requests_per_second: 3}\n",
            2,
            "both set",
            "keep one",
        ),
        ("- a\n- b\n", 1, "must be a mapping", "cluster"),
        ("a: 1\n---\nb: 2\n", 3, "one YAML document", "remove"),
        ("cluster: [\n", 2, "not valid YAML", "indentation"),
        ("cluster: {provider: doks}\ncluster: {}\n", 2, "duplicate key 'cluster'", "keep one"),
        ("node_pools: {name: x}\n", 1, "node_pools: must be a list", "write a list"),
        # pydantic's lax mode would read true as 1 and 0s as unlimited capacity
        ("workloads:\n  a: {concurrency: true}\n", 2, "concurrency: expected a whole", "1"),
        ("node_pools:\n  - {name: x, size: s-2vcpu-4gb, count: false}\n", 2, "count", "1"),
        ("hpa:\n  tolerance: true\n", 2, "hpa.tolerance: expected a number, got true", "0.5"),
        ("workloads:\n  a: {service_time: 0s}\n", 2, "must be longer than 0s", "longer than 0s"),
        ("workloads:\n  a: {requests_per_second: 0}\n", 2, "must be greater than 0", "than 0"),
        ("prometheus: 5\n", 1, "prometheus: must be a mapping (prometheus: {", "scrape_interval"),
        ("workloads: 5\n", 1, "workloads: must be a mapping of Deployment name", "web:"),
        ("cluster: &a {x: *a}\n", 1, "would contain itself", "replace the alias"),
        (
            "cluster: {provider: doks}\nworkloads:\n  a: &a {x: [*a]}\n",
            3,
            "would contain itself",
            "replace the alias",
        ),
    ],
)
def test_bad_input_is_one_line_with_file_line_and_fix(
    text: str, line: int, words: str, fix: str
) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "gpuscale.yaml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"gpuscale.yaml:{line}: "), message
    assert words in message, message
    assert fix in message.split("(fix: ", 1)[1], message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    "text",
    [
        "cluster: 5\n",
        "node_pools: [5]\n",
        "autoscaler: x\n",
        "hpa: []\n",
        "prometheus: 5\n",
        "keda: 5\n",
        "workloads: {web: 5}\n",
        "catalogue: [5]\n",
        "node_pools: [{name: a, size: s-4vcpu-8gb, count: 1, taints: [5]}]\n",
    ],
)
def test_a_section_that_is_not_a_mapping_says_so_without_class_names(text: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, "gpuscale.yaml")
    message = str(caught.value)
    assert "must be a mapping (" in message, message
    assert "instance of" not in message, message
    assert not any(word in message for word in ("Spec", "NodePool", "CatalogueEntry")), message


def test_line_of_keeps_the_loaders_positions_and_falls_back_to_the_nearest_key() -> None:
    text = (
        "workloads:\n  go-from-configmap:\n    concurrency: 4\n"
        "    prefill_tokens_per_second: 8000\n    decode_tokens_per_second: 60\n"
    )
    profile = load_profile_text(text, "p.yaml")
    assert profile.source == "p.yaml"
    assert profile.where(("workloads", "go-from-configmap", "concurrency")) == "p.yaml:3"
    assert profile.line_of(("workloads", "go-from-configmap", "concurrency")).column == 5
    assert profile.where(("workloads", "go-from-configmap", "service_time")) == "p.yaml:2"
    assert profile.where(("workloads", "other")) == "p.yaml:1"
    assert profile.line_of(("hpa", "tolerance")) is None
    assert profile.where(("hpa", "tolerance")) == "p.yaml"
    assert Profile.default().where(("workloads", "x")) == "defaults"
    # Where a value was read is not part of the value.
    assert load_profile_text("", "a.yaml") == load_profile_text("hpa: {}\n", "b.yaml")


def test_errors_carry_the_key_path() -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text("node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: -1}\n", "p.yaml")
    assert caught.value.key_path == ("node_pools", 0, "count")
    assert caught.value.where == "p.yaml:2"
