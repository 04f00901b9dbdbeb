"""Bad ``workloads.<name>.serving`` sections: ``profile check`` and ``simulate`` refuse each
with one line naming ``gpuscale.yaml:LINE`` and the key (the same check every command runs)."""

# ruff: noqa: E501 - a table of profile texts, one case per row, reads best unwrapped

from __future__ import annotations

from tests.unit.badinput._harness import Bad
from tests.unit.badinput.cases_profile import _profile_check, _simulate

_W = "workloads:\n  llm:\n"
_V = _W + "    serving:\n      kind: vllm\n      preset: mi300x/llama-3.1-8b\n"

# (id, profile text, line the error names, what the message names)
_PROFILES: list[tuple[str, str, int, str]] = [
    ("serving-scalar", _W + "    serving: vllm\n", 3, "workloads.llm.serving"),
    ("serving-kind", _W + "    serving:\n      kind: sglang\n", 4, "workloads.llm.serving.kind"),
    ("serving-unknown-key", _V + "      max_seqs: 8\n", 6, "max_seqs"),
    (
        "serving-preset-unknown",
        _W + "    serving:\n      kind: vllm\n      preset: mi300x/gpt-9\n",
        5,
        "mi300x/llama-3.1-8b",
    ),
    (
        "serving-preset-no-slash",
        _W + "    serving:\n      kind: vllm\n      preset: mi300x\n",
        5,
        "workloads.llm.serving.preset",
    ),
    (
        "serving-preset-70b-on-h100",
        _W + "    serving:\n      kind: vllm\n      preset: h100/llama-3.1-70b\n",
        5,
        "not a serving preset",
    ),
    (
        "serving-queue-with-vllm-keys",
        _W + "    serving:\n      max_num_seqs: 8\n",
        3,
        "kind is queue",
    ),
    ("serving-vllm-without-preset", _W + "    serving:\n      kind: vllm\n", 3, "num_gpu_blocks"),
    (
        "serving-vllm-partial-cost",
        _W
        + "    serving:\n      kind: vllm\n      num_gpu_blocks: 100\n      step_cost: {base: 0.01}\n",
        3,
        "step_cost.prefill_token",
    ),
    (
        "serving-vllm-queue-keys",
        _V.replace("    serving:", "    concurrency: 4\n    serving:"),
        2,
        "concurrency",
    ),
    ("serving-vllm-service-time", _V + "    service_time: 2s\n", 2, "service_time"),
    (
        "serving-max-num-seqs-zero",
        _V + "      max_num_seqs: 0\n",
        6,
        "workloads.llm.serving.max_num_seqs",
    ),
    (
        "serving-max-num-seqs-float",
        _V + "      max_num_seqs: 2.5\n",
        6,
        "workloads.llm.serving.max_num_seqs",
    ),
    (
        "serving-max-num-seqs-bool",
        _V + "      max_num_seqs: true\n",
        6,
        "workloads.llm.serving.max_num_seqs",
    ),
    (
        "serving-budget-huge",
        _V + "      max_num_batched_tokens: " + "9" * 5000 + "\n",
        6,
        "workloads.llm.serving.max_num_batched_tokens",
    ),
    (
        "serving-blocks-one",
        _V + "      num_gpu_blocks: 1\n",
        6,
        "workloads.llm.serving.num_gpu_blocks",
    ),
    (
        "serving-blocks-and-utilisation",
        _V + "      num_gpu_blocks: 100\n      gpu_memory_utilization: 0.5\n",
        3,
        "gpu_memory_utilization",
    ),
    (
        "serving-utilisation-above-one",
        _V + "      gpu_memory_utilization: 1.5\n",
        6,
        "workloads.llm.serving.gpu_memory_utilization",
    ),
    (
        "serving-utilisation-no-preset",
        _W + "    serving:\n      kind: vllm\n      gpu_memory_utilization: 0.9\n",
        3,
        "needs a preset",
    ),
    (
        "serving-utilisation-leaves-nothing",
        _V + "      gpu_memory_utilization: 0.05\n",
        3,
        "no memory for the KV cache",
    ),
    (
        "serving-block-size-zero",
        _V + "      block_size: 0\n",
        6,
        "workloads.llm.serving.block_size",
    ),
    (
        "serving-cost-negative",
        _V + "      step_cost: {base: -0.01}\n",
        6,
        "workloads.llm.serving.step_cost.base",
    ),
    (
        "serving-cost-inf",
        _V + "      step_cost:\n        decode_seq: .inf\n",
        7,
        "workloads.llm.serving.step_cost.decode_seq",
    ),
    (
        "serving-cost-word",
        _V + "      step_cost:\n        context_token: fast\n",
        7,
        "workloads.llm.serving.step_cost.context_token",
    ),
    ("serving-cost-unknown", _V + "      step_cost: {bias: 0.01}\n", 6, "bias"),
    (
        "serving-cost-all-zero",
        _W
        + "    serving:\n      kind: vllm\n      num_gpu_blocks: 100\n      step_cost: {base: 0, prefill_token: 0, decode_seq: 0, context_token: 0}\n",
        3,
        "a step must take time",
    ),
    ("serving-calibration-no-date", _V + "      calibration: {source: here}\n", 6, "date"),
    (
        "serving-calibration-residual-negative",
        _V + "      calibration: {date: 2026-12-02, source: x, residuals: {ttft: -1}}\n",
        6,
        "workloads.llm.serving.calibration.residuals.ttft",
    ),
    (
        "serving-calibration-range-shape",
        _V + "      calibration: {date: '2026-12-02', source: x, range: {prompt_tokens: 16}}\n",
        6,
        "workloads.llm.serving.calibration.range.prompt_tokens",
    ),
]

CASES: list[Bad] = [_profile_check(*case) for case in _PROFILES]
CASES += [_simulate(*case) for case in _PROFILES[::3]]
