"""The rules on an LLM server's scaling signals: each reports its case with the arithmetic
of the serving model, and stays silent on the signal it recommends."""

from __future__ import annotations

import pytest

from gpuscale.lint import Severity
from gpuscale.serving.presets import preset
from tests.unit.lint.conftest import gpu_pool, line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object

DEMAND = (
    '\'sum(vllm:num_requests_waiting{namespace="default", service="web"}) + '
    'sum(vllm:num_requests_running{namespace="default", service="web"})\''
)
VLLM_ARGS = "command: [vllm, serve]\nargs: [meta-llama/Llama-3.1-8B-Instruct]\n"


def _set(query: str, *, spec: str = "minReplicaCount: 1\n", args: str = "") -> str:
    return docs(deployment(args=args), scaled_object(query, spec=spec))


# --- kv-cache-only-trigger ---------------------------------------------------------------


def test_kv_cache_alone_is_reported_with_its_ceiling() -> None:
    text = _set("'avg(vllm:kv_cache_usage_perc{service=\"web\"})'")
    [finding] = only(lint_yaml(text), "kv-cache-only-trigger")
    assert finding.severity is Severity.WARNING
    assert finding.location.line == line_of(text, "query:")
    engine = preset("h100", "llama-3.1-8b").engine_config()
    held = engine.max_num_seqs * 24  # 384 tokens in blocks of 16
    assert f"{engine.max_num_seqs} × 24 = {held} of {engine.usable_blocks} blocks" in finding.why
    assert "vllm:num_requests_waiting" in finding.fix


def test_kv_cache_beside_demand_is_fine() -> None:
    query = "'max(vllm:kv_cache_usage_perc) * 100 + sum(vllm:num_requests_waiting)'"
    assert only(lint_yaml(_set(query)), "kv-cache-only-trigger") == []
    assert only(lint_yaml(_set(DEMAND)), "kv-cache-only-trigger") == []


def test_the_older_kv_name_counts_too() -> None:
    text = _set("'avg(vllm:gpu_cache_usage_perc)'")
    assert len(only(lint_yaml(text), "kv-cache-only-trigger")) == 1


def test_the_profile_s_serving_preset_sets_the_arithmetic() -> None:
    profile = make_profile(
        node_pools=[gpu_pool("gpu", "gpu-mi300x1-192gb", 2)],
        workloads={"web": {"serving": {"kind": "vllm", "preset": "mi300x/qwen2.5-7b"}}},
    )
    text = _set("'avg(vllm:kv_cache_usage_perc)'")
    [finding] = only(lint_yaml(text, profile=profile), "kv-cache-only-trigger")
    assert "mi300x/qwen2.5-7b" in finding.why
    blocks = preset("mi300x", "qwen2.5-7b").engine_config().usable_blocks
    assert f"of {blocks} blocks" in finding.why


# --- gpu-utilization-trigger-llm ---------------------------------------------------------


@pytest.mark.parametrize("metric", ["DCGM_FI_DEV_GPU_UTIL", "gpu_gfx_activity"])
def test_gpu_utilisation_on_a_vllm_server_is_reported(metric: str) -> None:
    text = _set(f"'avg({metric}{{namespace=\"default\"}})'", args=VLLM_ARGS)
    [finding] = only(lint_yaml(text), "gpu-utilization-trigger-llm")
    assert metric in finding.message
    cost = preset("h100", "llama-3.1-8b").step_cost()
    one, many = cost.seconds(0, 1, 1024), cost.seconds(0, 64, 64 * 1024)
    assert f"{one * 1000:.4g} ms" in finding.why
    assert f"{many * 1000:.4g} ms" in finding.why
    assert f"differs {64 * one / many:.4g}×" in finding.why


def test_gpu_utilisation_on_another_workload_is_not_this_rule_s() -> None:
    text = _set("'avg(DCGM_FI_DEV_GPU_UTIL{namespace=\"default\"})'")
    assert only(lint_yaml(text), "gpu-utilization-trigger-llm") == []


# --- llm-scale-to-zero-no-wait -----------------------------------------------------------


def test_scale_to_zero_of_a_vllm_server_is_reported_with_the_cold_start() -> None:
    profile = make_profile(
        node_pools=[gpu_pool("gpu", "gpu-h100x1-80gb", 2)],
        workloads={"web": {"image_pull_time": "2m", "startup_time": "5m"}},
    )
    text = docs(
        deployment(gpu="nvidia.com/gpu", args=VLLM_ARGS),
        scaled_object(DEMAND, spec="minReplicaCount: 0\ninitialCooldownPeriod: 1200\n"),
    )
    [finding] = only(lint_yaml(text, profile=profile), "llm-scale-to-zero-no-wait")
    assert finding.location.line == line_of(text, "minReplicaCount:")
    assert "image pull 2m + start-up 5m" in finding.why
    assert "minReplicaCount: 1" in finding.fix


def test_an_http_scaled_object_holds_the_first_requests() -> None:
    http = (
        "apiVersion: http.keda.sh/v1alpha1\nkind: HTTPScaledObject\nmetadata:\n  name: web\n"
        "spec:\n  scaleTargetRef:\n    name: web\n    service: web\n    port: 8000\n"
    )
    text = docs(
        deployment(args=VLLM_ARGS), scaled_object(DEMAND, spec="minReplicaCount: 0\n"), http
    )
    assert only(lint_yaml(text), "llm-scale-to-zero-no-wait") == []


def test_min_one_is_fine() -> None:
    assert only(lint_yaml(_set(DEMAND, args=VLLM_ARGS)), "llm-scale-to-zero-no-wait") == []


# --- vllm-metric-not-exported ------------------------------------------------------------


def test_a_removed_v0_metric_is_an_error() -> None:
    text = _set("'sum(vllm:num_requests_swapped{service=\"web\"})'")
    [finding] = only(lint_yaml(text), "vllm-metric-not-exported")
    assert finding.severity is Severity.ERROR
    assert "vllm:num_requests_swapped" in finding.message


def test_a_removed_throughput_gauge_points_at_the_counter() -> None:
    text = _set("'sum(vllm:avg_generation_throughput_toks_per_s)'")
    [finding] = only(lint_yaml(text), "vllm-metric-not-exported")
    assert "rate(vllm:generation_tokens_total[1m])" in finding.fix


def test_the_deprecated_kv_name_is_a_warning_with_the_new_name() -> None:
    text = _set("'sum(vllm:gpu_cache_usage_perc) + sum(vllm:num_requests_waiting)'")
    [finding] = only(lint_yaml(text), "vllm-metric-not-exported")
    assert finding.severity is Severity.WARNING
    assert "vllm:kv_cache_usage_perc" in finding.fix
    assert "gpu_cache_usage_perc" not in finding.fix


@pytest.mark.parametrize(
    "query",
    [
        DEMAND,
        "'histogram_quantile(0.9, sum by (le) "
        "(rate(vllm:time_to_first_token_seconds_bucket[2m])))'",
        "'sum(rate(vllm:generation_tokens_total[1m]))'",
    ],
)
def test_exported_names_are_fine(query: str) -> None:
    assert only(lint_yaml(_set(query)), "vllm-metric-not-exported") == []
