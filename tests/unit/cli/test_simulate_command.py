"""``gpuscale simulate``: outputs, the timeline header, bad input as one line (exit 2)."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.report import read_timeline

ROOT = Path(__file__).resolve().parents[3]
TUTORIAL = ROOT / "examples" / "tutorial"
FIXED = ROOT / "examples" / "tutorial-fixed"
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"
TRACE = Path("/work/shared/traces/AzureLLMInferenceTrace_conv.csv")


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.strip().splitlines() if "warning" not in line]
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_the_tutorial_summary_timeline_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    timeline, page = tmp_path / "t.jsonl", tmp_path / "t.html"
    code = main(
        [
            "simulate",
            str(TUTORIAL),
            "-n",
            "kube-system",
            "--scenario",
            str(SCENARIO),
            "--timeline",
            str(timeline),
            "--report",
            str(page),
            "--seed",
            "3",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "flaps" in captured.out
    assert "to desired" in captured.out
    assert "Pool gpu" in captured.out
    assert f"wrote {timeline}" in captured.err
    decoded = read_timeline(timeline)
    meta = decoded.header.meta
    assert meta["seed"] == 3
    assert meta["until"] == "40m"
    assert meta["duration_s"] == 2400.0
    assert meta["scenario"] == str(SCENARIO)
    assert meta["profile"] == str(TUTORIAL / "gpuscale.yaml")
    assert meta["thresholds"] == {"query:s0-prometheus": 80.0, "hpa:s0-prometheus": 80.0}
    assert meta["namespace"] == "kube-system"
    assert any("Readiness" in a for a in meta["approximations"])
    assert "gpuscale_version" in meta
    assert decoded.records[-1].t <= 2400.0
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_json_output_has_the_summary_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(FIXED), "--scenario", str(SCENARIO), "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (replicas,) = document["summary"]["replicas"]
    assert (replicas["min_spec"], replicas["max_spec"], replicas["flaps"]) == (1, 2, 0)
    (reaction,) = document["summary"]["reactions"]
    assert reaction["desired"] == 2
    titles = [s["title"] for s in document["table"]]
    assert "Workload go-from-configmap" in titles


def test_same_seed_same_timeline(tmp_path: Path) -> None:
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in files:
        args = ["simulate", str(FIXED), "--scenario", str(SCENARIO), "--timeline", str(path)]
        assert main([*args, "--until", "15m"]) == 0
    assert files[0].read_text() == files[1].read_text()


@pytest.mark.skipif(not TRACE.exists(), reason="the shared traces are not here")
def test_a_trace_replay_carries_its_attribution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "llm"
    folder.mkdir()
    (folder / "resources.yaml").write_text(
        (FIXED / "resources.yaml")
        .read_text()
        .replace(
            'sum(my_custom_gauge{namespace="gpu-demo", service="go-from-configmap"})',
            'sum(gpuscale_requests_in_flight{namespace="gpu-demo"})',
        )
    )
    (folder / "gpuscale.yaml").write_text(
        (FIXED / "gpuscale.yaml").read_text()
        + "    concurrency: 8\n    prefill_tokens_per_second: 8000\n"
        "    decode_tokens_per_second: 60\n    latency_target: 20s\n"
    )
    timeline = tmp_path / "trace.jsonl"
    args = ["simulate", str(folder), "--trace", str(TRACE), "--until", "10m"]
    assert main([*args, "--timeline", str(timeline), "--speedup", "0.05", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (requests,) = document["summary"]["requests"]
    assert requests["total"] > 0
    assert (
        requests["served"] + requests["timed_out"] + requests["dropped"] + requests["unfinished"]
        == requests["total"]
    )
    meta = read_timeline(timeline).header.meta
    assert "Splitwise" in meta["attribution"][0]
    assert meta["speedup"] == 0.05


@pytest.mark.parametrize(
    ("scenario", "where"),
    [
        ("steps:\n  - at: soon\n    set_gauge: {name: g, value: 1}\n", ":2"),
        ("steps:\n  - at: 1s\n    set_gauge: {value: 1}\n", ":3"),
        ("steps:\n  - at: 1s\n    request_rate: 3\n", f"{FIXED / 'gpuscale.yaml'}:"),
        ("steps: [\n", ":"),
    ],
)
def test_bad_scenarios_are_one_line_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, where: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(scenario)
    assert main(["simulate", str(FIXED), "--scenario", str(path)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("gpuscale: error: ")
    assert where in line


def test_bad_flags_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(FIXED)]) == 2
    assert "give --scenario FILE or --trace FILE" in _one_error_line(capsys)
    assert main(["simulate", str(FIXED), "--scenario", str(tmp_path / "none.yaml")]) == 2
    assert "no such scenario file" in _one_error_line(capsys)
    assert main(["simulate", str(FIXED), "--scenario", str(SCENARIO), "--until", "x"]) == 2
    assert "--until" in _one_error_line(capsys)
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp\nnot-a-time\n")
    assert main(["simulate", str(FIXED), "--trace", str(trace)]) == 2
    assert str(trace) in _one_error_line(capsys)
    assert not list(tmp_path.glob("*.jsonl"))


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664)])
def test_written_files_follow_the_umask_like_plain_files(
    tmp_path: Path, umask: int, mode: int
) -> None:
    timeline, page = tmp_path / "t.jsonl", tmp_path / "t.html"
    args = ["simulate", str(FIXED), "--scenario", str(SCENARIO), "--until", "2m"]
    previous = os.umask(umask)
    try:
        assert main([*args, "--timeline", str(timeline), "--report", str(page)]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(timeline.stat().st_mode) == mode
    assert stat.S_IMODE(page.stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.html", "t.jsonl"]


def _request_folder(tmp_path: Path, capacity: str) -> Path:
    """The fixed tutorial scaled on in-flight requests, its profile given ``capacity``."""
    folder = tmp_path / "llm"
    folder.mkdir()
    (folder / "resources.yaml").write_text(
        (FIXED / "resources.yaml")
        .read_text()
        .replace(
            'sum(my_custom_gauge{namespace="gpu-demo", service="go-from-configmap"})',
            'sum(gpuscale_requests_in_flight{namespace="gpu-demo"})',
        )
    )
    (folder / "gpuscale.yaml").write_text((FIXED / "gpuscale.yaml").read_text() + capacity)
    return folder


@pytest.mark.parametrize("speedup", ["1", "4"])
def test_the_default_until_replays_every_row_of_the_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], speedup: str
) -> None:
    folder = _request_folder(tmp_path, "    concurrency: 4\n    service_time: 2s\n")
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp\n0\n1.5\n30\n31\n31\n31\n")
    args = ["simulate", str(folder), "--trace", str(trace), "--speedup", speedup, "-o", "json"]
    assert main(args) == 0
    (requests,) = json.loads(capsys.readouterr().out)["summary"]["requests"]
    assert requests["total"] == 6


@pytest.mark.parametrize("given", [True, False])
def test_a_plain_trace_to_token_rates_names_the_profile_line_and_service_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: bool
) -> None:
    folder = _request_folder(
        tmp_path,
        "    concurrency: 8\n    prefill_tokens_per_second: 8000\n"
        "    decode_tokens_per_second: 60\n",
    )
    profile = folder / "gpuscale.yaml"
    trace = tmp_path / "plain.csv"
    trace.write_text("timestamp\n0\n1\n5\n")
    args = ["simulate", str(folder), "--trace", str(trace), "--timeline", str(tmp_path / "t.jsonl")]
    assert main([*args, *(["--profile", str(profile)] if given else [])]) == 2
    line = _one_error_line(capsys)
    number = profile.read_text().splitlines().index("    prefill_tokens_per_second: 8000") + 1
    assert line.startswith(f"gpuscale: error: {profile}:{number}: ")
    assert "service_time" in line
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize(
    "steps",
    [
        "  - at: 0s\n    request_rate: 3\n",
        "  - at: 10s\n    set_gauge: {name: g, value: 1}\n  - at: 1m\n"
        "    ramp: {from: 0, to: 2, over: 1m}\n    workload: go-from-configmap\n",
    ],
)
def test_request_steps_and_a_trace_for_the_same_workload_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], steps: str
) -> None:
    folder = _request_folder(tmp_path, "    concurrency: 4\n    service_time: 2s\n")
    scenario, trace = tmp_path / "s.yaml", tmp_path / "t.csv"
    scenario.write_text("steps:\n" + steps)
    trace.write_text("timestamp\n0\n1\n")
    args = ["simulate", str(folder), "--scenario", str(scenario), "--trace", str(trace)]
    assert main(args) == 2
    line = _one_error_line(capsys)
    number = 2 if "request_rate" in steps else 4
    assert line.startswith(f"gpuscale: error: {scenario}:{number}: --scenario and --trace")


def test_a_gauge_scenario_combines_with_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _request_folder(tmp_path, "    concurrency: 4\n    service_time: 2s\n")
    scenario, trace = tmp_path / "s.yaml", tmp_path / "t.csv"
    scenario.write_text("until: 3m\nsteps:\n  - at: 1m\n    set_gauge: {name: g, value: 7}\n")
    trace.write_text("timestamp\n0\n1\n2\n")
    args = ["simulate", str(folder), "--scenario", str(scenario), "--trace", str(trace)]
    assert main([*args, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (requests,) = document["summary"]["requests"]
    assert requests["total"] == 3 * math.ceil(180 / 3)
    assert [r["change"] for r in document["summary"]["reactions"]] == ["g=7"]


def test_the_rate_before_the_first_step_is_not_a_load_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _request_folder(tmp_path, "    concurrency: 4\n    service_time: 2s\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("until: 8m\nsteps:\n  - {at: 5m, request_rate: 2}\n")
    assert main(["simulate", str(folder), "--scenario", str(scenario), "-o", "json"]) == 0
    reactions = json.loads(capsys.readouterr().out)["summary"]["reactions"]
    assert [(r["at"], r["change"]) for r in reactions] == [(300.0, "request_rate=2")]


def test_until_before_a_step_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", str(FIXED), "--scenario", str(SCENARIO), "--until", "30s", "-o", "json"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning: --until 30s ends before 1 step(s) of the scenario, the first at 1m" in err
    assert f"({SCENARIO}:" in err
