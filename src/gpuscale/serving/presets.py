"""Serving presets: an engine and a step cost for each catalogue GPU × common open model.

Every number here is **approximate**: it is derived from public specifications with
stated assumptions, not measured. ``gpuscale calibrate`` replaces it with measured
values. Each :class:`Param` keeps its value, its source, and ``approximate=True``.

How the values are derived (one replica = one GPU, tensor parallel 1, BF16 weights and
KV cache; a model that does not fit one GPU gets no preset there):

- **KV blocks**, as vLLM's memory profiling does (``vllm/v1/worker/gpu_worker.py``
  ``determine_available_memory`` and ``vllm/v1/core/kv_cache_utils.py``): GPU memory ×
  ``gpu_memory_utilization`` (0.9, vLLM's default) minus the weights minus an activation
  and CUDA-graph reserve (assumed 2 GiB + 10 % of the weights), divided by the bytes of one
  block (``block_size`` × bytes per token).
- **KV bytes per token**: 2 (K and V) × layers × KV heads × head dim × 2 bytes (BF16), from
  each model's ``config.json`` on Hugging Face.
- **Step cost**: a roofline from the GPU's datasheet. Decoding is memory-bound: every step
  reads the weights once (``base`` = weight bytes / (HBM bandwidth × 0.75)) and each
  context token's KV (``context_token`` = KV bytes per token / (bandwidth × 0.75)).
  Prefill is compute-bound: 2 × parameters FLOPs per token at 45 % of dense BF16 peak
  (``prefill_token``). ``decode_seq`` (sampling and per-sequence kernels) is an assumed
  20 µs. The efficiencies (75 % of bandwidth, 45 % MFU) are typical of figures vLLM
  and vendors publish for these GPUs, not measurements of ours.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.serving._engine import EngineConfig, StepCost

__all__ = [
    "BLOCK_SIZE",
    "GPUS",
    "GPU_MEMORY_UTILIZATION",
    "MODELS",
    "GpuSpec",
    "ModelSpec",
    "Param",
    "ServingPreset",
    "kv_blocks",
    "preset",
    "presets",
]

_GB = 1e9
_GIB = 1 << 30
GPU_MEMORY_UTILIZATION = 0.9
BLOCK_SIZE = 16
_BANDWIDTH_EFFICIENCY = 0.75
_MFU = 0.45
_DECODE_SEQ_SECONDS = 20e-6


@dataclass(frozen=True, slots=True)
class Param:
    """A preset value with where it came from."""

    value: float
    source: str
    approximate: bool = True


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """Datasheet figures of one GPU model (the catalogue's ``gpu_model`` key)."""

    name: str
    memory_bytes: Param
    bandwidth: Param
    """Memory bandwidth in bytes per second."""
    bf16_flops: Param
    """Dense BF16 tensor throughput in FLOP/s (no sparsity)."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """The shape of one open model, from its Hugging Face ``config.json``."""

    name: str
    parameters: Param
    layers: int
    kv_heads: int
    head_dim: int
    source: str
    repo: str = ""
    """The Hugging Face repository vLLM loads it from (``vllm serve <repo>``)."""

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    @property
    def weight_bytes(self) -> float:
        return self.parameters.value * 2


def _gpu(name: str, memory_gb: float, bandwidth_gbs: float, tflops: float, sheet: str) -> GpuSpec:
    return GpuSpec(
        name,
        Param(memory_gb * _GB, f"{sheet}: {memory_gb:g} GB"),
        Param(bandwidth_gbs * _GB, f"{sheet}: {bandwidth_gbs:g} GB/s"),
        Param(tflops * 1e12, f"{sheet}: {tflops:g} TFLOPS dense BF16"),
    )


GPUS = {
    gpu.name: gpu
    for gpu in (
        _gpu("mi300x", 192, 5300, 1307, "AMD Instinct MI300X datasheet"),
        _gpu("h100", 80, 3350, 989, "NVIDIA H100 SXM datasheet"),
        _gpu("l40s", 48, 864, 362, "NVIDIA L40S datasheet"),
        _gpu("rtx6000-ada", 48, 960, 364, "NVIDIA RTX 6000 Ada datasheet (half its sparse FP16)"),
        _gpu("rtx4000-ada", 20, 360, 82, "NVIDIA RTX 4000 Ada datasheet (half its sparse FP16)"),
    )
}
"""The GPU models of ``gpuscale.profile.catalogue``'s sizes (one GPU each)."""


def _model(  # noqa: PLR0917 - one row of the model table
    name: str, billions: float, layers: int, kv_heads: int, head_dim: int, repo: str
) -> ModelSpec:
    source = f"huggingface.co/{repo} config.json and model card"
    return ModelSpec(
        name,
        Param(billions * 1e9, f"{source}: {billions:g}B parameters"),
        layers,
        kv_heads,
        head_dim,
        source,
        repo,
    )


MODELS = {
    model.name: model
    for model in (
        _model("llama-3.1-8b", 8.03, 32, 8, 128, "meta-llama/Llama-3.1-8B-Instruct"),
        _model("llama-3.1-70b", 70.6, 80, 8, 128, "meta-llama/Llama-3.1-70B-Instruct"),
        _model("qwen2.5-7b", 7.62, 28, 4, 128, "Qwen/Qwen2.5-7B-Instruct"),
    )
}


@dataclass(frozen=True, slots=True)
class ServingPreset:
    """The serving model of one GPU × model pair, every value with its source."""

    gpu: str
    model: str
    num_gpu_blocks: Param
    max_num_seqs: Param
    max_num_batched_tokens: Param
    block_size: Param
    base: Param
    prefill_token: Param
    decode_seq: Param
    context_token: Param

    def engine_config(self) -> EngineConfig:
        return EngineConfig(
            num_gpu_blocks=int(self.num_gpu_blocks.value),
            max_num_seqs=int(self.max_num_seqs.value),
            max_num_batched_tokens=int(self.max_num_batched_tokens.value),
            block_size=int(self.block_size.value),
        )

    def step_cost(self) -> StepCost:
        return StepCost(
            base=self.base.value,
            prefill_token=self.prefill_token.value,
            decode_seq=self.decode_seq.value,
            context_token=self.context_token.value,
        )


def kv_blocks(
    gpu: GpuSpec,
    model: ModelSpec,
    *,
    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION,
    block_size: int = BLOCK_SIZE,
) -> int:
    """KV blocks left on ``gpu`` for ``model`` at ``gpu_memory_utilization``: memory ×
    utilisation minus the weights and the reserve, in blocks of ``block_size`` tokens
    (0 when nothing is left)."""
    weights = model.weight_bytes
    reserve = 2 * _GIB + 0.1 * weights
    free = gpu.memory_bytes.value * gpu_memory_utilization - weights - reserve
    return max(0, int(free // (block_size * model.kv_bytes_per_token)))


def _derive(gpu: GpuSpec, model: ModelSpec) -> ServingPreset | None:
    weights = model.weight_bytes
    blocks = kv_blocks(gpu, model)
    if blocks < 8192 // BLOCK_SIZE:
        return None
    bandwidth = gpu.bandwidth.value * _BANDWIDTH_EFFICIENCY
    roofline = f"roofline from {gpu.bandwidth.source}, {gpu.bf16_flops.source}"
    return ServingPreset(
        gpu=gpu.name,
        model=model.name,
        num_gpu_blocks=Param(
            blocks,
            f"({gpu.memory_bytes.source} × {GPU_MEMORY_UTILIZATION} − {weights / _GB:.1f} GB "
            f"weights − reserve) / ({BLOCK_SIZE} × {model.kv_bytes_per_token} B per token)",
        ),
        max_num_seqs=Param(256, "vLLM default --max-num-seqs", approximate=False),
        max_num_batched_tokens=Param(2048, "vLLM default --max-num-batched-tokens (OpenAI server)"),
        block_size=Param(BLOCK_SIZE, "vLLM default --block-size", approximate=False),
        base=Param(
            weights / bandwidth, f"weights / ({_BANDWIDTH_EFFICIENCY:g} × bandwidth); {roofline}"
        ),
        prefill_token=Param(
            2 * model.parameters.value / (gpu.bf16_flops.value * _MFU),
            f"2 × parameters / ({_MFU:g} × peak); {roofline}",
        ),
        decode_seq=Param(_DECODE_SEQ_SECONDS, "assumed per-sequence overhead"),
        context_token=Param(
            model.kv_bytes_per_token / bandwidth,
            f"KV bytes per token / ({_BANDWIDTH_EFFICIENCY:g} × bandwidth); {roofline}",
        ),
    )


def presets() -> dict[tuple[str, str], ServingPreset]:
    """Every (GPU model, model) pair that fits one GPU with room for 8k tokens of KV."""
    out = {}
    for gpu in GPUS.values():
        for model in MODELS.values():
            derived = _derive(gpu, model)
            if derived is not None:
                out[gpu.name, model.name] = derived
    return out


def preset(gpu: str, model: str) -> ServingPreset:
    """The preset of ``gpu`` × ``model``; ``KeyError`` names the pairs that exist."""
    table = presets()
    try:
        return table[gpu, model]
    except KeyError:
        known = ", ".join(f"{g}/{m}" for g, m in sorted(table))
        raise KeyError(f"no serving preset for {gpu}/{model}; known: {known}") from None
