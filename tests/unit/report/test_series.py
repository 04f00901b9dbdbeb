from __future__ import annotations

import pytest

from gpuscale.report.series import (
    StepSeries,
    load_series,
    node_pools,
    node_series,
    pod_series,
    run_end,
    workload_metric_series,
    workload_names,
    workload_series,
)
from gpuscale.timeline import Header, Record, Timeline, WorkloadState
from tests.unit.report import timelines


def test_value_holds_until_the_next_time_and_ends_with_the_run() -> None:
    series = StepSeries(times=(0.0, 10.0, 10.0, 20.0), values=(1.0, 5.0, 2.0, None), end=30.0)
    assert series.at(-1.0) is None
    assert series.at(0.0) == 1.0
    assert series.at(9.999) == 1.0
    assert series.at(10.0) == 2.0  # the last of several records at one instant wins
    assert series.at(19.0) == 2.0
    assert series.at(25.0) is None
    assert series.at(30.0) is None
    assert series.at(30.5) is None
    assert series.defined() == [1.0, 5.0, 2.0]


def test_series_rejects_unordered_times() -> None:
    with pytest.raises(ValueError, match="non-decreasing"):
        StepSeries(times=(5.0, 1.0), values=(1.0, 2.0), end=5.0)
    with pytest.raises(ValueError, match="same length"):
        StepSeries(times=(1.0,), values=(), end=5.0)


def test_tutorial_replicas_read_off_the_records() -> None:
    timeline = timelines.tutorial()
    spec = workload_series(timeline, timelines.WORKLOAD, "spec")
    assert [spec.at(t) for t in (0, 89, 90, 764, 765, 794, 795, 900)] == [1, 1, 2, 2, 1, 1, 2, 2]
    ready = workload_series(timeline, timelines.WORKLOAD, "ready")
    assert [ready.at(t) for t in (459, 460, 765, 855)] == [1, 2, 1, 2]
    pending = pod_series(timeline, timelines.WORKLOAD, "Pending")
    assert [pending.at(t) for t in (0, 90, 399, 400)] == [0, 1, 1, 0]
    query = workload_metric_series(timeline, timelines.WORKLOAD, f"query:{timelines.METRIC}")
    assert [query.at(t) for t in (74, 75, 460)] == [0, 160, 80]
    assert node_series(timeline, "gpu", "provisioning").at(100) == 1
    assert node_series(timeline, "gpu", "ready").at(400) == 2
    assert workload_names(timeline) == (timelines.WORKLOAD,)


def test_absent_workloads_and_load_keys_have_no_value() -> None:
    timeline = Timeline(
        header=Header(world="live", pools={"general": {}}),
        records=(
            Record(t=0.0, workloads=(), load={"request_rate": 3.0}),
            Record(
                t=5.0,
                workloads=(WorkloadState(name="a/b", spec=1, status=1, ready=0),),
                nodes={"gpu": {"ready": 1}},
            ),
        ),
    )
    assert workload_series(timeline, "a/b", "desired").values == (None, None)
    assert workload_series(timeline, "a/b", "spec").values == (None, 1.0)
    assert load_series(timeline, "request_rate").values == (3.0, None)
    assert node_pools(timeline) == ("general", "gpu")
    assert node_series(timeline, "gpu", "ready").values == (0.0, 1.0)
    with pytest.raises(ValueError, match="unknown replica field"):
        workload_series(timeline, "a/b", "pods")
    with pytest.raises(ValueError, match="unknown node state"):
        node_series(timeline, "gpu", "gone")


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({}, 900.0),
        ({"duration_s": 1800}, 1800.0),
        ({"duration_s": 60.0}, 900.0),  # a declared duration never cuts records off
        ({"duration_s": "30m"}, 900.0),
        ({"duration_s": True}, 900.0),
    ],
)
def test_run_end(meta: dict[str, object], expected: float) -> None:
    timeline = timelines.tutorial()
    header = Header(world="simulate", meta=meta)
    assert run_end(Timeline(header=header, records=timeline.records)) == expected
