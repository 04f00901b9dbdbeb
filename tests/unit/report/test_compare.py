from __future__ import annotations

from gpuscale.report import (
    LevelReach,
    StepSeries,
    compare_steps,
    compare_timelines,
    comparison_table,
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
    by_name = {(d.group, d.name): d for d in comparison.series}
    workload = timelines.WORKLOAD
    assert list(by_name) == [
        (workload, "desired replicas"),
        (workload, "spec replicas"),
        (workload, "ready replicas"),
        (workload, "pending pods"),
        ("pool gpu", "provisioning nodes"),
        ("pool gpu", "ready nodes"),
    ]
    spec = by_name[(workload, "spec replicas")]
    assert (spec.overlap_s, spec.seconds_different, spec.max_difference, spec.area) == (
        900,
        30,
        1,
        30,
    )
    assert spec.reach == (LevelReach(2, 90, 90),)
    ready = by_name[(workload, "ready replicas")]
    assert (ready.seconds_different, ready.area) == (90, 90)
    assert ready.reach == (LevelReach(2, 460, 460),)
    assert by_name[("pool gpu", "ready nodes")].seconds_different == 0
    assert by_name[(workload, "pending pods")].seconds_different == 0
    assert comparison.as_json()["series"][1]["seconds_different"] == 30


def _replicas_run(name: str, counts: list[tuple[float, int]]) -> Timeline:
    return Timeline(
        Header(world="live"),
        tuple(
            Record(t=t, workloads=(WorkloadState(name=name, spec=n, status=n, ready=n),))
            for t, n in counts
        ),
    )


def test_single_workloads_with_different_names_pair() -> None:
    comparison = compare_timelines(
        _replicas_run("ns/a", [(0, 1), (10, 1)]), _replicas_run("ns/b", [(0, 3), (10, 3)])
    )
    spec = next(d for d in comparison.series if d.name == "spec replicas")
    assert spec.group == "ns/a / ns/b"
    assert spec.max_difference == 2
    assert spec.seconds_different == 10


def test_comparison_table_words_the_numbers() -> None:
    comparison = compare_timelines(
        timelines.tutorial(), timelines.fixed(), labels=("tutorial", "fixed")
    )
    table = comparison_table(comparison)
    assert table.headers[-1] == "first ≥ n (tutorial / fixed)"
    groups = dict(table.sections)
    assert list(groups) == [timelines.WORKLOAD, "pool gpu"]
    spec = next(r for r in groups[timelines.WORKLOAD] if r[0] == "spec replicas")
    assert spec == ("spec replicas", "30s of 15m (3%)", "1", "30", "2: 1m30s / 1m30s")


def test_reach_that_never_happens_reads_never() -> None:
    late = _replicas_run("ns/w", [(0, 1), (90, 2), (120, 3), (200, 3)])
    early = _replicas_run("ns/w", [(0, 1), (150, 2), (200, 2)])
    table = comparison_table(compare_timelines(late, early))
    spec = next(r for r in dict(table.sections)["ns/w"] if r[0] == "spec replicas")
    # differ on [90,120) by 1, [120,150) by 2, [150,200) by 1: 110 s, area 30 + 60 + 50.
    assert spec[1:] == ("1m50s of 3m20s (55%)", "2", "140", "2: 1m30s / 2m30s; 3: 2m / never")
