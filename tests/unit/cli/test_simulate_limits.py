"""simulate's progress reporter (fed by the engine's callback, timed by an injected clock)
and its warning for set_gauge steps that no query reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.cli._simulation import _Progress
from gpuscale.cli.main import main

_EXAMPLE = Path(__file__).parents[3] / "examples" / "tutorial-fixed"


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_lines_every_ten_seconds_after_a_quiet_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clock = _Clock()
    progress = _Progress(7 * 86400.0, "week", clock)
    clock.now += 1.0
    progress(3600.0)  # within the quiet start: nothing
    clock.now += 9.5
    progress(7200.0)  # 10.5 s after the start: a line
    clock.now += 5.0
    progress(9000.0)  # 5 s after the last line: nothing
    clock.now += 5.0
    progress(86400.0 * 3.5)
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "gpuscale: progress: week: 2h of 168h simulated (1%), 10s elapsed",
        "gpuscale: progress: week: 84h of 168h simulated (50%), 20s elapsed",
    ]


def test_a_gauge_no_query_reads_is_warned_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "until: 5m\nsteps:\n  - at: 0s\n    set_gauge: {name: my_custom_gauge, value: 1}\n"
        "  - at: 60s\n    set_gauge: {name: my_custom_gaug, value: 160}\n",
        encoding="utf-8",
    )
    code = main(["simulate", str(_EXAMPLE), "--scenario", str(scenario), "-o", "json"])
    assert code in (0, None)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "set_gauge sets" in line]
    assert warnings == [
        f"gpuscale: warning: {scenario}:5: set_gauge sets my_custom_gaug, which no "
        "ScaledObject query reads (they read: my_custom_gauge); the step changes nothing"
    ]


@pytest.mark.parametrize(
    "text",
    ["timestamp\n5\n", "\ufefftimestamp,prompt_tokens\n5,1\n5,2\n", '{"timestamp": 7}\n'],
    ids=["one-row", "bom-equal-times", "mooncake-one-line"],
)
def test_a_one_instant_trace_is_a_tiny_valid_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    profile = (_EXAMPLE / "gpuscale.yaml").read_text(encoding="utf-8")
    app = tmp_path / "app"
    app.mkdir()
    (app / "resources.yaml").write_text(
        (_EXAMPLE / "resources.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (app / "gpuscale.yaml").write_text(
        profile.replace("    startup_time: 3s\n", "    startup_time: 3s\n    service_time: 0.2s\n"),
        encoding="utf-8",
    )
    trace = tmp_path / "t.trace"
    trace.write_text(text, encoding="utf-8")
    code = main(["simulate", str(app), "--trace", str(trace), "-o", "json"])
    out = capsys.readouterr()
    assert code in (0, None), out.err
    document = json.loads(out.out)
    assert document["records"] >= 1
    assert "Traceback" not in out.err
