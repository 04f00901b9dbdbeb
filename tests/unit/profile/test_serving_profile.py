"""The profile's ``workloads.<name>.serving`` section: the one mapping to the engine
(preset values, each replaced by the one written), and a property that any value at any
serving key gives a profile whose engine settings hold, or one error line."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.errors import GpuscaleError
from gpuscale.profile import ServingSpec, StepCostSpec, load_profile_text
from gpuscale.serving import EngineConfig, StepCost
from gpuscale.serving.presets import GPUS, MODELS, kv_blocks, preset

SOURCE = "gpuscale.yaml"
PRESET = "mi300x/llama-3.1-8b"


def _serving(body: str) -> ServingSpec:
    text = "workloads:\n  llm:\n    serving:\n" + body
    return load_profile_text(text, SOURCE).workload("llm").serving


def test_preset_alone_gives_the_preset() -> None:
    spec = _serving(f"      kind: vllm\n      preset: {PRESET}\n")
    chosen = preset("mi300x", "llama-3.1-8b")
    assert spec.engine_settings() == (chosen.engine_config(), chosen.step_cost())
    assert spec.model_name == "llama-3.1-8b"


def test_written_values_replace_the_presets_one_by_one() -> None:
    spec = _serving(
        f"      kind: vllm\n      preset: {PRESET}\n      max_num_seqs: 32\n"
        "      num_gpu_blocks: 5000\n      step_cost: {decode_seq: 0.001}\n"
        "      served_model_name: meta-llama/Llama-3.1-8B-Instruct\n"
    )
    config, cost = spec.engine_settings()
    chosen = preset("mi300x", "llama-3.1-8b").step_cost()
    assert config == EngineConfig(5000, 32, 2048, 16)
    assert cost == StepCost(chosen.base, chosen.prefill_token, 0.001, chosen.context_token)
    assert spec.model_name == "meta-llama/Llama-3.1-8B-Instruct"


def test_block_size_and_memory_share_re_derive_the_blocks() -> None:
    gpu, model = GPUS["mi300x"], MODELS["llama-3.1-8b"]
    half = _serving(
        f"      kind: vllm\n      preset: {PRESET}\n      gpu_memory_utilization: 0.5\n"
    )
    assert half.engine_settings()[0].num_gpu_blocks == kv_blocks(
        gpu, model, gpu_memory_utilization=0.5
    )
    big = _serving(f"      kind: vllm\n      preset: {PRESET}\n      block_size: 32\n")
    config = big.engine_settings()[0]
    assert config.block_size == 32
    full = preset("mi300x", "llama-3.1-8b").engine_config().num_gpu_blocks
    assert abs(config.num_gpu_blocks * 2 - full) <= 2


def test_without_a_preset_every_value_is_written() -> None:
    spec = _serving(
        "      kind: vllm\n      num_gpu_blocks: 100\n"
        "      step_cost: {base: 0.01, prefill_token: 0.0001, decode_seq: 0, context_token: 0}\n"
    )
    assert spec.engine_settings() == (
        EngineConfig(100, 256, 2048, 16),
        StepCost(0.01, 0.0001, 0.0, 0.0),
    )
    assert spec.model_name is None


def test_queue_kind_has_no_engine() -> None:
    spec = ServingSpec()
    assert spec.kind == "queue"
    with pytest.raises(ValueError, match="no engine"):
        spec.engine_settings()


_INTS = st.one_of(st.integers(-3, 70000), st.sampled_from(["0", "1e3", "true", "x", "[]"]))
_FLOATS = st.one_of(
    st.floats(-1.0, 2.0, allow_nan=False),
    st.sampled_from([".inf", ".nan", "1e309", "true", "fast", "{}"]),
)
_KEYS = {
    "max_num_seqs": _INTS,
    "max_num_batched_tokens": _INTS,
    "num_gpu_blocks": _INTS,
    "block_size": st.one_of(st.integers(-1, 64), st.just("x")),
    "gpu_memory_utilization": _FLOATS,
    "preset": st.sampled_from([PRESET, "h100/qwen2.5-7b", "h100/llama-3.1-70b", "x", "a/b/c"]),
    "kind": st.sampled_from(["vllm", "queue", "sglang"]),
}


@settings(
    derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.dictionaries(st.sampled_from(sorted(_KEYS)), st.none(), max_size=5).flatmap(
        lambda keys: st.fixed_dictionaries({key: _KEYS[key] for key in keys})
    ),
    st.dictionaries(
        st.sampled_from(["base", "prefill_token", "decode_seq", "context_token"]), _FLOATS
    ),
)
def test_any_serving_values_give_a_working_engine_or_one_line(
    values: dict[str, object], cost: dict[str, object]
) -> None:
    body = "".join(f"      {key}: {value}\n" for key, value in values.items())
    if cost:
        body += "      step_cost:\n" + "".join(f"        {k}: {v}\n" for k, v in cost.items())
    try:
        spec = _serving(body or "      kind: queue\n")
    except GpuscaleError as error:
        refused: GpuscaleError | None = error
    else:
        refused = None
    if refused is not None:
        assert "\n" not in refused.one_line()
        assert (refused.where or "").startswith(SOURCE)
        assert refused.fix
        return
    if spec.kind == "queue":
        return
    config, step = spec.engine_settings()
    for key in ("max_num_seqs", "max_num_batched_tokens", "num_gpu_blocks", "block_size"):
        if key in values:
            assert getattr(config, key) == values[key]
    written = StepCostSpec.model_validate(cost)
    for term, value in written.model_dump().items():
        if value is not None:
            assert getattr(step, term) == value
    assert step.seconds(1, 1, 1) > 0
