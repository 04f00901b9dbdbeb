"""``gpuscale demo``: the tutorial and its fix, the story, the files it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.report import read_timeline


def test_demo_tells_the_story_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    tutorial, fixed = text.split("The fix", 1)
    assert (
        "HPA 1→2: 160 / 1 replica = 160 per replica against a target of 80 per replica: "
        "ceil(1 × 160/80) = 2" in tutorial
    )
    assert (
        "HPA 2→1: 80 / 2 replicas = 40 per replica against a target of 80 per replica: "
        "ceil(2 × 40/80) = 1" in tutorial
    )
    assert "GPU pool gpu: 0–8 nodes, 1 at the start" in text
    assert "cluster-autoscaler: scale-up gpu 1→2" in tutorial
    assert "deleted while still Pending" in tutorial
    assert "the same cycle repeats" in tutorial
    assert "its ServiceMonitor scrapes nothing" in tutorial
    assert "stays at 1 whatever the gauge says" in tutorial
    assert "HPA 2→1" not in fixed.split("Summary")[0]
    assert "went 1→2 and held" in fixed
    assert "gpuscale lint" in text
    for name in ("tutorial.jsonl", "tutorial-fixed.jsonl", "report.html"):
        assert (out / name).is_file()
    timeline = read_timeline(out / "tutorial.jsonl")
    assert timeline.header.meta["namespace"] == "kube-system"
    fixed_timeline = read_timeline(out / "tutorial-fixed.jsonl")
    assert fixed_timeline.header.meta["namespace"] == "gpu-demo"
    assert {w.name for w in fixed_timeline.records[0].workloads} == {"gpu-demo/go-from-configmap"}
    page = (out / "report.html").read_text()
    assert "tutorial-fixed" in page


def test_demo_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--out", str(tmp_path), "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    flaps = [run["summary"]["replicas"][0]["flaps"] for run in document["runs"]]
    assert flaps[0] >= 4
    assert flaps[1] == 0
    assert document["runs"][0]["moments"][0] == {
        "t": 60.0,
        "text": document["runs"][0]["moments"][0]["text"],
    }
    assert document["written"]["report"] == str(tmp_path / "report.html")
