"""``gpuscale app --serve llm`` flags: vLLM's defaults, and each mode refuses the other's flags."""

from __future__ import annotations

import pytest

from gpuscale.app._llm import DEFAULT_LLM_PORT, LlmConfig, llm_config_from_flags
from gpuscale.cli.main import main
from gpuscale.errors import InputError


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--serve", "llm", "--metric-name", "x"], "--metric-name"),
        (["--serve", "llm", "--allow-non-finite"], "--allow-non-finite"),
        (["--serve", "llm", "--shutdown-delay", "1s"], "--shutdown-delay"),
        (["--gpu", "h100"], "--gpu"),
        (["--max-num-seqs", "8"], "--max-num-seqs"),
        (["--serve", "vllm"], "--serve"),
        (["--serve", "llm", "--gpu", "tpu"], "--gpu/--model"),
        (["--serve", "llm", "--max-num-seqs", "many"], "--max-num-seqs"),
        (["--serve", "llm", "--num-gpu-blocks", "1"], "--num-gpu-blocks"),
        (["--serve", "llm", "--port", "99999"], "--port"),
        (["--serve", "llm", "--grace-period", "soon"], "--grace-period"),
        (["--serve", "llm", "--log-level", "loud"], "--log-level"),
    ],
)
def test_bad_llm_flags_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], where: str
) -> None:
    code = main(["app", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"gpuscale: error: {where}: ")
    assert "(fix: " in err


def test_llm_defaults_are_vllms() -> None:
    config = llm_config_from_flags(
        host="0.0.0.0", port=None, log_level="info", grace_period=10.0, flags={}
    )
    assert config.port == DEFAULT_LLM_PORT == 8000
    engine = config.engine().config
    assert (engine.max_num_seqs, engine.max_num_batched_tokens, engine.block_size) == (
        256,
        2048,
        16,
    )


def test_overrides_reach_the_engine() -> None:
    config = LlmConfig(gpu="h100", model="qwen2.5-7b", max_num_seqs=8, num_gpu_blocks=100)
    engine = config.engine()
    assert engine.config.max_num_seqs == 8
    assert engine.config.num_gpu_blocks == 100


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"mi300x --model llama-3\.1-70b"):
        LlmConfig(gpu="h100", model="llama-3.1-70b")
