"""The documented example (docs/commands/simulate.md): ``gpuscale init --preset vllm``,
then ``gpuscale simulate`` of its manifests with a real trace. At the trace's own rate
one replica carries it (below the scaffold's 79 requests per replica); replayed twice as
fast, the replica count follows the load up and back down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.cli.main import main

TRACE = Path("/work/shared/traces/AzureLLMInferenceTrace_conv.csv")
pytestmark = pytest.mark.skipif(not TRACE.exists(), reason="the shared traces are not here")


def test_the_init_scaffold_follows_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "my-llm"
    args = ["init", str(target), "--preset", "vllm", "--gpu", "nvidia", "--name", "chat"]
    assert main([*args, "--namespace", "ml"]) == 0
    timeline = tmp_path / "run.jsonl"
    code = main(
        [
            "simulate",
            str(target / "manifests"),
            "--trace",
            str(TRACE),
            "--speedup",
            "2",
            "--until",
            "50m",
            "--timeline",
            str(timeline),
            "-o",
            "json",
        ]
    )
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    (replicas,) = document["summary"]["replicas"]
    assert replicas["max_spec"] >= 3
    (requests,) = document["summary"]["requests"]
    assert requests["served"] > 0.99 * requests["total"]
    counts = [
        json.loads(line)["workloads"][0]["spec"] for line in timeline.read_text().splitlines()[1:]
    ]
    peak = counts.index(max(counts))
    assert counts[0] == 1
    assert min(counts[peak:]) < max(counts)  # and back down after the peak
