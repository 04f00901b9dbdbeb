"""``gpuscale simulate examples/vllm --trace ...``: the vLLM example end to end through the
CLI — its ScaledObject on vLLM's own gauges, the profile's ``serving.kind: vllm``, TTFT
and ITL percentiles in the table and in ``-o json``, a scenario of rate steps refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "vllm"
TRACE = Path("/work/shared/traces/AzureLLMInferenceTrace_conv.csv")
pytestmark = pytest.mark.skipif(not TRACE.exists(), reason="the shared traces are not here")


def _simulate(*extra: str) -> list[str]:
    return ["simulate", str(EXAMPLE), "--trace", str(TRACE), "--workload", "vllm-llama", *extra]


def test_json_has_ttft_and_itl_percentiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_simulate("--until", "15m", "--speedup", "4", "-o", "json")) == 0
    document = json.loads(capsys.readouterr().out)
    (requests,) = document["summary"]["requests"]
    assert requests["workload"] == "llm/vllm-llama"
    assert requests["served"] > 0.9 * requests["total"] > 1000
    for name in ("ttft", "itl"):
        p50, p95, p99 = (requests[f"{name}_p{q}_s"] for q in (50, 95, 99))
        assert 0 < p50 <= p95 <= p99
    assert requests["itl_p50_s"] < requests["ttft_p50_s"] < requests["p50_s"]
    (replicas,) = document["summary"]["replicas"]
    assert replicas["max_spec"] > 1  # 4x the trace's rate outgrows the one replica
    rows = {row["label"] for section in document["table"] for row in section["rows"]}
    assert {"TTFT p95", "ITL p99"} <= rows


def test_the_table_shows_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_simulate("--until", "5m")) == 0
    out = capsys.readouterr().out
    assert "TTFT p50" in out
    assert "ITL p95" in out


def test_rate_steps_cannot_drive_a_vllm_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("steps:\n  - at: 0s\n    request_rate: 3\n    workload: vllm-llama\n")
    assert main(["simulate", str(EXAMPLE), "--scenario", str(scenario)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("gpuscale: error:")]
    assert len(lines) == 1, err
    assert "serving.kind vllm schedules tokens" in lines[0]
    assert "gpuscale.yaml:" in lines[0]
    assert "Traceback" not in err
