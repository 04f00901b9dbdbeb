from __future__ import annotations

import pytest

from gpuscale.report import (
    LevelReach,
    StepSeries,
    compare_steps,
    compare_timelines,
    comparison_summary,
    first_reach,
)
from gpuscale.timeline import Header, Record, Timeline, WorkloadState
from tests.unit.report import timelines


def _s(times: tuple[float, ...], values: tuple[float | None, ...], end: float) -> StepSeries:
    return StepSeries(times=times, values=values, end=end)


def test_hand_computed_difference() -> None:
    # a: 1 on [0,10), 3 on [10,20), 2 on [20,30]; b: 1 on [0,15), 2 on [15,25].
    # Both cover [0,25]: differ on [10,15) by 2 and on [15,20) by 1.
    a = _s((0, 10, 20), (1, 3, 2), 30)
    b = _s((0, 15), (1, 2), 25)
    diff = compare_steps("replicas", a, b)
    assert diff.overlap_s == 25
    assert diff.seconds_different == 10
    assert diff.max_difference == 2
    assert diff.area == 15
    assert diff.reach == (LevelReach(2, 10, 15), LevelReach(3, 10, None))


def test_only_time_both_cover_counts() -> None:
    a = _s((0, 10), (1, 2), 40)
    b = _s((5, 30), (1, None), 40)  # b starts late and loses its value at 30
    diff = compare_steps("x", a, b)
    assert diff.overlap_s == 25  # [5, 30)
    assert diff.seconds_different == 20  # [10, 30)
    assert diff.area == 20


def test_identical_series_agree() -> None:
    a = _s((0, 10), (1, 2), 60)
    diff = compare_steps("x", a, a)
    assert (diff.seconds_different, diff.max_difference, diff.area) == (0, 0, 0)
    assert diff.overlap_s == 60
    assert diff.reach == (LevelReach(2, 10, 10),)


def test_levels_can_be_left_out() -> None:
    assert compare_steps("cost", _s((0,), (0.5,), 9), _s((0,), (1.5,), 9), levels=False).reach == ()


def test_first_reach() -> None:
    series = _s((0, 10, 20), (None, 1, 3), 30)
    assert first_reach(series, 1) == 10
    assert first_reach(series, 2) == 20
    assert first_reach(series, 4) is None


def test_tutorial_against_its_fix() -> None:
    # Hand-computed from tests/unit/report/timelines.py: the tutorial drops to 1 replica
    # from 765 s to 795 s (spec) and is not fully Ready from 765 s to 855 s.
    comparison = compare_timelines(
        timelines.tutorial(), timelines.fixed(), labels=("tutorial", "fixed")
    )
    by_name = {d.name: d for d in comparison.series}
    prefix = timelines.WORKLOAD
    assert set(by_name) == {
        f"{prefix} desired replicas",
        f"{prefix} spec replicas",
        f"{prefix} ready replicas",
        f"{prefix} pending pods",
        "gpu nodes provisioning",
        "gpu nodes ready",
    }
    spec = by_name[f"{prefix} spec replicas"]
    assert (spec.overlap_s, spec.seconds_different, spec.max_difference, spec.area) == (
        900,
        30,
        1,
        30,
    )
    assert spec.reach == (LevelReach(2, 90, 90),)
    ready = by_name[f"{prefix} ready replicas"]
    assert (ready.seconds_different, ready.area) == (90, 90)
    assert ready.reach == (LevelReach(2, 460, 460),)
    assert by_name["gpu nodes ready"].seconds_different == 0
    assert by_name[f"{prefix} pending pods"].seconds_different == 0


def test_single_workloads_with_different_names_pair() -> None:
    def run(name: str, spec: int) -> Timeline:
        state = WorkloadState(name=name, spec=spec, status=spec, ready=spec)
        return Timeline(
            Header(world="live"), (Record(t=0.0, workloads=(state,)), Record(10.0, (state,)))
        )

    comparison = compare_timelines(run("ns/a", 1), run("ns/b", 3))
    spec = next(d for d in comparison.series if d.name == "ns/a / ns/b spec replicas")
    assert spec.max_difference == 2
    assert spec.seconds_different == 10


def test_comparison_summary_words_the_numbers() -> None:
    comparison = compare_timelines(
        timelines.tutorial(), timelines.fixed(), labels=("tutorial", "fixed")
    )
    summary = comparison_summary(comparison)
    section = next(s for s in summary.sections if s.title.endswith("spec replicas"))
    rows = {r.label: r for r in section.rows}
    assert rows["time different"].value == "30s of 15m"
    assert rows["time different"].note == "3% of the time both cover"
    assert rows["max difference"].value == 1.0
    assert rows["first ≥ 2"].value == "tutorial 1m30s, fixed 1m30s"
    assert rows["first ≥ 2"].note == "fixed +0s"
    assert comparison.as_json()["series"][1]["seconds_different"] == 30


@pytest.mark.parametrize(
    ("a_times", "b_times", "note"),
    [((0, 90), (0, 150), "b +1m"), ((0, 150), (0, 90), "b -1m"), ((0, 90), (0,), "")],
)
def test_reach_notes(a_times: tuple[float, ...], b_times: tuple[float, ...], note: str) -> None:
    def run(times: tuple[float, ...]) -> Timeline:
        records = tuple(
            Record(t=t, workloads=(WorkloadState("ns/w", i + 1, i + 1, i + 1),))
            for i, t in enumerate(times)
        )
        return Timeline(Header(world="simulate"), records)

    summary = comparison_summary(compare_timelines(run(a_times), run(b_times)))
    spec = next(s for s in summary.sections if s.title == "ns/w spec replicas")
    reach = next(r for r in spec.rows if r.label == "first ≥ 2")
    assert reach.note == note
