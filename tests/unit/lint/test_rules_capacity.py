"""Rules that relate a ScaledObject to its workload and the environment (profile)."""

from __future__ import annotations

import pytest

from gpuscale.lint import Severity
from gpuscale.profile import Profile
from tests.unit.lint.conftest import gpu_pool, line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object, service, service_monitor

SIZES = {("amd", 1): "gpu-mi300x1-192gb", ("nvidia", 1): "gpu-h100x1-80gb"}
SIZES[("nvidia", 8)] = "gpu-h100x8-640gb"


def _pool(name: str = "gpu", vendor: str = "amd", gpus: int = 1, max_nodes: int = 4) -> dict:
    return gpu_pool(name, SIZES[(vendor, gpus)], max_nodes)


def _profile(*pools: dict, startup: str | None = None) -> Profile:
    workloads = {"web": {"startup_time": startup}} if startup else {}
    return make_profile(node_pools=list(pools or (_pool(),)), workloads=workloads)


# --- max-exceeds-gpu-capacity -----------------------------------------------------------


def test_capacity_exceeded_with_the_pool_arithmetic() -> None:
    text = docs(deployment(), scaled_object(spec="minReplicaCount: 1\nmaxReplicaCount: 8\n"))
    [finding] = only(lint_yaml(text, profile=_profile()), "max-exceeds-gpu-capacity")
    assert finding.location.line == line_of(text, "maxReplicaCount:")
    assert "8 × 1 amd.com/gpu per pod = 8 GPUs" in finding.message
    assert "4 nodes × 1 pod(s) per node = 4" in finding.why
    assert "maxReplicaCount: 4" in finding.fix


def test_capacity_default_max_is_100() -> None:
    text = docs(deployment(), scaled_object())
    [finding] = only(lint_yaml(text, profile=_profile()), "max-exceeds-gpu-capacity")
    assert "(the default)" in finding.message
    assert finding.location.line == line_of(text, "spec:", 3)  # Deployment has two


def test_capacity_counts_gpus_per_pod_and_per_node() -> None:
    resources = "resources:\n  limits:\n    nvidia.com/gpu: 2\n"
    text = docs(
        deployment(gpu="nvidia.com/gpu", resources=resources),
        scaled_object(spec="maxReplicaCount: 9\n"),
    )
    profile = _profile(_pool(vendor="nvidia", gpus=8, max_nodes=2))
    [finding] = only(lint_yaml(text, profile=profile), "max-exceeds-gpu-capacity")
    assert "2 nodes × 4 pod(s) per node = 8" in finding.why
    fits = text.replace("maxReplicaCount: 9", "maxReplicaCount: 8")
    assert only(lint_yaml(fits, profile=profile), "max-exceeds-gpu-capacity") == []


def test_capacity_no_pool_offers_the_vendor() -> None:
    text = docs(deployment(gpu="nvidia.com/gpu"), scaled_object(spec="maxReplicaCount: 2\n"))
    [finding] = only(lint_yaml(text, profile=_profile()), "max-exceeds-gpu-capacity")
    assert "no node pool in the profile offers nvidia.com/gpu" in finding.message


def test_capacity_pools_excluded_by_the_node_selector() -> None:
    pod = "nodeSelector:\n  doks.digitalocean.com/node-pool: big\n"
    text = docs(deployment(pod_spec=pod), scaled_object(spec="maxReplicaCount: 6\n"))
    profile = _profile(_pool("small", max_nodes=10), _pool("big", max_nodes=5))
    [finding] = only(lint_yaml(text, profile=profile), "max-exceeds-gpu-capacity")
    assert "pool big" in finding.why
    assert "pool small" not in finding.why


@pytest.mark.parametrize(
    ("workload", "profile"),
    [
        (deployment(), None),
        (deployment(gpu=None), _profile()),
        ("", _profile()),
        (deployment(resources="resources:\n  limits:\n    amd.com/gpu: ${GPUS}\n"), _profile()),
    ],
    ids=["no-profile", "no-gpu", "target-not-in-set", "templated-gpus"],
)
def test_capacity_near_misses(workload: str, profile: Profile | None) -> None:
    text = docs(workload, scaled_object()) if workload else scaled_object()
    assert only(lint_yaml(text, profile=profile), "max-exceeds-gpu-capacity") == []


# --- scale-to-zero-slow-start -----------------------------------------------------------


def test_scale_to_zero_without_initial_cooldown() -> None:
    text = docs(deployment(), scaled_object(spec="minReplicaCount: 0\n"))
    [finding] = only(lint_yaml(text), "scale-to-zero-slow-start")
    assert finding.location.line == line_of(text, "minReplicaCount:")
    assert "at its first poll" in finding.message
    assert "initialCooldownPeriod: 900" in finding.fix


def test_scale_to_zero_default_min() -> None:
    text = docs(deployment(), scaled_object(spec=""))
    [finding] = only(lint_yaml(text), "scale-to-zero-slow-start")
    assert finding.location.line == line_of(text, "spec:", 3)  # Deployment has two


def test_scale_to_zero_initial_cooldown_shorter_than_profile_startup() -> None:
    text = docs(
        deployment(), scaled_object(spec="minReplicaCount: 0\ninitialCooldownPeriod: 120\n")
    )
    assert only(lint_yaml(text), "scale-to-zero-slow-start") == []
    profile = _profile(startup="40s")
    [finding] = only(lint_yaml(text, profile=profile), "scale-to-zero-slow-start")
    assert finding.location.line == line_of(text, "initialCooldownPeriod:")
    # The GPU pool scales from 0: a node (10m, the GPU pool default), the image (20s,
    # the workload default) and the workload's own start-up (40s, written).
    assert "a gpu node 10m + image pull 20s + start-up 40s" in finding.why
    assert "initialCooldownPeriod: 660" in finding.fix


def test_scale_to_zero_startup_without_a_node_when_the_pool_keeps_one() -> None:
    text = docs(
        deployment(), scaled_object(spec="minReplicaCount: 0\ninitialCooldownPeriod: 120\n")
    )
    warm = make_profile(
        node_pools=[gpu_pool(min_nodes=1)], workloads={"web": {"startup_time": "3m"}}
    )
    [finding] = only(lint_yaml(text, profile=warm), "scale-to-zero-slow-start")
    assert "image pull 20s + start-up 3m" in finding.why
    assert "node" not in finding.why.split("start-up time")[1]
    quick = make_profile(node_pools=[gpu_pool(min_nodes=1)])
    assert only(lint_yaml(text, profile=quick), "scale-to-zero-slow-start") == []


@pytest.mark.parametrize(
    ("workload", "spec", "startup"),
    [
        (deployment(), "minReplicaCount: 0\ninitialCooldownPeriod: 900\n", "1m"),
        (deployment(), "minReplicaCount: 1\n", None),
        (deployment(gpu=None), "minReplicaCount: 0\n", None),
        ("", "minReplicaCount: 0\n", None),
        (deployment(), "minReplicaCount: 0\ninitialCooldownPeriod: ${T}\n", None),
    ],
    ids=["long-enough", "min-one", "cpu-workload", "target-not-in-set", "templated"],
)
def test_scale_to_zero_near_misses(workload: str, spec: str, startup: str | None) -> None:
    so = scaled_object(spec=spec)
    text = docs(workload, so) if workload else so
    found = lint_yaml(text, profile=_profile(startup=startup))
    assert only(found, "scale-to-zero-slow-start") == []


# --- polling-faster-than-scrape ---------------------------------------------------------


def _scraped(interval: str, spec: str, trigger: str = "") -> str:
    return docs(
        deployment(gpu=None),
        service(),
        service_monitor(endpoint=f"interval: {interval}\n"),
        scaled_object(spec=spec, trigger=trigger),
    )


def test_keda_polls_faster_than_the_scrape() -> None:
    text = _scraped("60s", "minReplicaCount: 0\npollingInterval: 5\n")
    [finding] = only(lint_yaml(text), "polling-faster-than-scrape")
    assert finding.severity is Severity.INFO
    assert finding.location.line == line_of(text, "pollingInterval:")
    assert "KEDA polls it every 5 s" in finding.message
    assert "12 reads" in finding.message


def test_hpa_sync_faster_than_a_slow_scrape_is_a_warning_with_value_type() -> None:
    text = _scraped("60s", "minReplicaCount: 1\n", trigger="metricType: Value\n")
    [finding] = only(lint_yaml(text), "polling-faster-than-scrape")
    assert finding.severity is Severity.WARNING
    assert "the HPA reads it every 15 s" in finding.message
    assert "can overshoot" in finding.why
    assert finding.location.line == line_of(text, "- type: prometheus")


@pytest.mark.parametrize(
    ("interval", "spec"),
    [
        ("30s", "minReplicaCount: 1\n"),
        ("30s", "minReplicaCount: 0\npollingInterval: 30\n"),
        ("30s", "minReplicaCount: 0\npollingInterval: 15\n"),
        ("${INTERVAL}", "minReplicaCount: 0\npollingInterval: 5\n"),
    ],
    ids=["defaults", "poll-equals-scrape", "half", "templated-interval"],
)
def test_polling_near_misses(interval: str, spec: str) -> None:
    assert only(lint_yaml(_scraped(interval, spec)), "polling-faster-than-scrape") == []


def test_polling_uses_the_profile_scrape_interval() -> None:
    text = scaled_object(spec="minReplicaCount: 0\npollingInterval: 5\n")
    assert only(lint_yaml(text), "polling-faster-than-scrape") == []
    found = lint_yaml(text, profile=make_profile(prometheus={"scrape_interval": "30s"}))
    assert len(only(found, "polling-faster-than-scrape")) == 1
