"""``gpuscale calibrate`` against the emulator run as a real process on loopback, with
step-cost terms we chose: it gives them back within 10 %, and its profile passes
``gpuscale profile check``. With ``GPUSCALE_TEST_LLM_URL`` set, the ``gpu`` test runs it
against a real server (a vLLM on a GPU machine)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.inputs import read_profile
from tests.integration.app.conftest import AppProcess, gpuscale_command
from tests.integration.serving.conftest import Running

KNOWN = {"base": 0.02, "prefill_token": 1e-4, "decode_seq": 5e-4, "context_token": 1e-6}
PROFILE = """\
# rehearsal profile
workloads:
  chat:
    startup_time: 4m   # the model load
    serving:
      kind: vllm
      preset: l40s/llama-3.1-8b
"""


@pytest.mark.integration
def test_calibrate_recovers_the_emulator_s_step_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cost = ",".join(f"{name}={value}" for name, value in KNOWN.items())
    proc = AppProcess(
        [
            *gpuscale_command(),
            "app",
            "--serve",
            "llm",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--step-cost",
            cost,
        ]
    ).wait_listening()
    try:
        profile = tmp_path / "gpuscale.yaml"
        profile.write_text(PROFILE)
        url = f"http://127.0.0.1:{proc.port}"
        code = main(
            [
                "calibrate",
                url,
                "--profile",
                str(profile),
                "--concurrency",
                "1,8,24",
                "--output-tokens",
                "48",
                "--max-time",
                "3m",
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err
    finally:
        proc.stop()
    assert "calibrate: [1/" in captured.err
    assert "residuals" in captured.out
    text = profile.read_text()
    assert "# the model load" in text
    serving = read_profile(profile).workload("chat").serving
    assert serving.step_cost is not None
    for name, value in KNOWN.items():
        assert getattr(serving.step_cost, name) == pytest.approx(value, rel=0.10), name
    assert serving.calibration is not None
    assert serving.calibration.source.startswith(url)
    assert serving.calibration.residuals["itl"] < 0.05
    assert main(["profile", "check", str(profile)]) == 0


@pytest.mark.gpu
@pytest.mark.skipif(
    not os.environ.get("GPUSCALE_TEST_LLM_URL"), reason="GPUSCALE_TEST_LLM_URL is not set"
)
def test_calibrate_a_real_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = os.environ["GPUSCALE_TEST_LLM_URL"]
    profile = tmp_path / "gpuscale.yaml"
    profile.write_text(
        PROFILE.replace(
            "l40s/llama-3.1-8b", os.environ.get("GPUSCALE_TEST_LLM_PRESET", "h100/llama-3.1-8b")
        )
    )
    code = main(
        ["calibrate", url, "--allow-remote", "--profile", str(profile), "--max-time", "10m"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    serving = read_profile(profile).workload("chat").serving
    assert serving.calibration is not None
    assert serving.calibration.residuals["itl"] < 0.25
    assert main(["profile", "check", str(profile)]) == 0


@pytest.mark.integration
@pytest.mark.parametrize("emulator", [{"num_gpu_blocks": 1234, "block_size": 32}], indirect=True)
def test_the_kv_cache_comes_from_vllm_cache_config_info(emulator: Running) -> None:
    import asyncio

    from gpuscale.live.calibrate import cache_config

    assert asyncio.run(cache_config(emulator.url, None)) == {
        "num_gpu_blocks": 1234,
        "block_size": 32,
    }
    assert asyncio.run(cache_config("http://127.0.0.1:9", None)) == {}
