"""``gpuscale calibrate``'s edges without a server: which targets it accepts, and the
profile it writes (comments and order kept, a valid profile)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.app._llm import parse_step_cost
from gpuscale.errors import InputError
from gpuscale.live.calibrate import check_target, write_calibration
from gpuscale.profile import load_profile_text
from gpuscale.serving import StepCost
from gpuscale.serving.calibration import CalibrationFit

FIT = CalibrationFit(
    cost=StepCost(base=0.0123456, prefill_token=1e-4, decode_seq=5e-4, context_token=1e-6),
    overhead=0.001,
    residuals={"ttft": 0.02, "itl": 0.004},
    ranges={"prompt_tokens": (16.0, 2048.0), "concurrency": (1.0, 32.0)},
    observations=21,
)


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://localhost:8000/v1/", "http://localhost:8000"),
        ("http://[::1]:8000", "http://[::1]:8000"),
        ("http://127.3.2.1:8000/prefix/v1", "http://127.3.2.1:8000/prefix"),
    ],
)
def test_loopback_targets_are_accepted(url: str, base: str) -> None:
    assert check_target(url, allow_remote=False) == base


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3:8000", "https://llm.example.com", "http://0.0.0.0:80"]
)
def test_remote_targets_need_allow_remote(url: str) -> None:
    with pytest.raises(InputError, match="--allow-remote"):
        check_target(url, allow_remote=False)
    assert check_target(url, allow_remote=True).startswith(url.split(":", maxsplit=1)[0])


def test_credentials_in_the_url_are_refused_without_echoing_them() -> None:
    with pytest.raises(InputError) as error:
        check_target("http://me:s3cretpassw0rd@127.0.0.1:8000", allow_remote=False)
    assert "s3cretpassw0rd" not in error.value.one_line()


PROFILE = """\
# team profile: keep this comment
cluster:
  provider: doks   # where it runs
workloads:
  chat:
    startup_time: 4m   # model load
    serving:
      kind: vllm
      preset: h100/llama-3.1-8b
      max_num_seqs: 128   # tuned
  other:
    startup_time: 10s
"""


def test_the_profile_keeps_its_comments_and_gains_the_fit() -> None:
    text = write_calibration(
        PROFILE, "chat", FIT, source="http://127.0.0.1:8000", date="2026-12-02"
    )
    for kept in ("# team profile: keep this comment", "# where it runs", "# model load", "# tuned"):
        assert kept in text
    profile = load_profile_text(text, "gpuscale.yaml")
    serving = profile.workload("chat").serving
    assert serving.max_num_seqs == 128
    assert serving.step_cost is not None
    assert serving.step_cost.base == pytest.approx(0.01235)
    assert serving.calibration is not None
    assert serving.calibration.residuals == {"ttft": 0.02, "itl": 0.004}
    assert serving.calibration.range["prompt_tokens"] == (16, 2048)
    assert text.index("  other:") > text.index("calibration:")


def test_a_new_profile_needs_a_preset_or_blocks() -> None:
    text = write_calibration(
        None, "chat", FIT, source="s", date="2026-12-02", preset="l40s/qwen2.5-7b"
    )
    assert load_profile_text(text, "p.yaml").workload("chat").serving.preset == "l40s/qwen2.5-7b"


def test_without_a_preset_the_server_s_kv_cache_is_written() -> None:
    cache = {"num_gpu_blocks": 5000, "block_size": 16}
    text = write_calibration(None, "chat", FIT, source="s", date="2026-12-02", cache=cache)
    serving = load_profile_text(text, "p.yaml").workload("chat").serving
    assert (serving.num_gpu_blocks, serving.block_size, serving.preset) == (5000, 16, None)
    with_preset = write_calibration(PROFILE, "chat", FIT, source="s", date="d", cache=cache)
    assert "num_gpu_blocks" not in with_preset  # the preset's blocks stand


TERMS = ("base", "prefill_token", "decode_seq", "context_token")


@given(st.dictionaries(st.sampled_from(TERMS), st.floats(0, 10, allow_nan=False), min_size=1))
def test_step_cost_text_round_trips(terms: dict[str, float]) -> None:
    text = ",".join(f"{name}={value!r}" for name, value in terms.items())
    assert dict(parse_step_cost(text)) == terms


@given(st.text(max_size=40))
def test_any_step_cost_text_parses_or_names_the_flag(text: str) -> None:
    try:
        parsed = parse_step_cost(text)
    except InputError as error:
        where = error.where
        parsed = ()
    else:
        where = "--step-cost"
    assert where == "--step-cost"
    assert all(name in TERMS and 0 <= value < float("inf") for name, value in parsed)
