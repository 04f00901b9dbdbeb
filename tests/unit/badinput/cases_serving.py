"""Bad inputs of ``gpuscale app --serve llm``: every one fails before anything listens."""

from __future__ import annotations

from tests.unit.badinput._harness import Bad

_LLM = ("app", "--serve", "llm")

CASES = [
    Bad("serving-unknown-mode", ("app", "--serve", "vllm"), names=("--serve",)),
    Bad("serving-unknown-mode-empty", ("app", "--serve", ""), names=("--serve",)),
    *(
        Bad(f"serving-gauge-flag-{flag[2:]}", (*_LLM, flag, *value), names=(flag,))
        for flag, value in (
            ("--metric-name", ("x",)),
            ("--metric-help", ("x",)),
            ("--shutdown-delay", ("1s",)),
            ("--allow-non-finite", ()),
            ("--runtime-metrics", ()),
            ("--setter-token", ("abc",)),
        )
    ),
    *(
        Bad(f"serving-llm-flag-in-gauge-{flag[2:]}", ("app", flag, value), names=(flag,))
        for flag, value in (
            ("--gpu", "h100"),
            ("--model", "qwen2.5-7b"),
            ("--served-model-name", "m"),
            ("--max-num-seqs", "8"),
            ("--max-num-batched-tokens", "512"),
            ("--num-gpu-blocks", "100"),
            ("--block-size", "16"),
            ("--max-model-len", "4096"),
        )
    ),
    Bad("serving-unknown-gpu", (*_LLM, "--gpu", "tpu-v5"), names=("--gpu/--model", "tpu-v5")),
    Bad("serving-unknown-model", (*_LLM, "--model", "gpt-9"), names=("--gpu/--model", "gpt-9")),
    Bad(
        "serving-70b-does-not-fit-h100",
        (*_LLM, "--gpu", "h100", "--model", "llama-3.1-70b"),
        names=("--gpu/--model",),
    ),
    Bad(
        "serving-nothing-fits-rtx4000",
        (*_LLM, "--gpu", "rtx4000-ada"),
        names=("--gpu/--model", "rtx4000-ada"),
    ),
    *(
        Bad(f"serving-not-a-number-{flag[2:]}", (*_LLM, flag, value), names=(flag,))
        for flag, value in (
            ("--max-num-seqs", "many"),
            ("--max-num-batched-tokens", "2k"),
            ("--num-gpu-blocks", "-5"),
            ("--block-size", "16.5"),
            ("--max-model-len", "long"),
            ("--port", "http"),
        )
    ),
    *(
        Bad(f"serving-too-small-{flag[2:]}", (*_LLM, flag, value), names=(flag,))
        for flag, value in (
            ("--max-num-seqs", "0"),
            ("--max-num-batched-tokens", "0"),
            ("--num-gpu-blocks", "1"),
            ("--block-size", "0"),
            ("--max-model-len", "1"),
        )
    ),
    Bad("serving-port-out-of-range", (*_LLM, "--port", "65536"), names=("--port",)),
    Bad("serving-bad-grace-period", (*_LLM, "--grace-period", "soon"), names=("--grace-period",)),
    Bad("serving-bad-log-level", (*_LLM, "--log-level", "chatty"), names=("--log-level",)),
]
