"""The HPA's arithmetic read off decision records (gpuscale.report.hpa), in its one wording."""

from __future__ import annotations

from gpuscale._hpa_words import hpa_step_text
from gpuscale.report.hpa import hpa_steps, per_replica_values
from gpuscale.timeline import Decision, Record, WorkloadState

W = "demo/app"


def _record(t: float, spec: int, status: int, read: float | None, *details: str) -> Record:
    metrics = {} if read is None else {"hpa:m": read}
    return Record(
        t=t,
        workloads=(WorkloadState(W, spec=spec, status=status, ready=status, metrics=metrics),),
        decisions=tuple(
            Decision("hpa", "scale" if "New size" in d else "hold", "R", f"deployment/{W}", d)
            for d in details
        ),
    )


SCALE_DOWN = (
    "New size: 1; reason: All metrics below target; "
    "external metric m 40 / target 80 (AverageValue) -> desired 1; 2 -> 1"
)


def test_average_value_divides_what_it_read_by_the_replicas_it_saw() -> None:
    records = [_record(0, 2, 2, 80.0), _record(300, 1, 1, 80.0, SCALE_DOWN)]
    [step] = hpa_steps(records)
    assert (step.read, step.replicas, step.usage, step.target, step.desired) == (80, 2, 40, 80, 1)
    assert (step.before, step.after) == (2, 1)
    assert step.arithmetic() == (
        "80 / 2 replicas = 40 per replica against a target of 80 per replica: ceil(2 × 40/80) = 1"
    )


def test_within_the_tolerance_it_says_so_instead_of_a_wrong_formula() -> None:
    text = hpa_step_text(
        target_type="AverageValue", usage=84, target=80, replicas=2, desired=2, read=168
    )
    assert text.endswith("within the HPA's tolerance of the target, so 2")


def test_value_targets_are_not_divided() -> None:
    detail = "external metric m 160 / target 80 (Value) -> desired 2; 1 -> 2"
    records = [
        _record(0, 1, 1, 160.0),
        _record(15, 2, 2, 160.0, "New size: 2; reason: x; " + detail),
    ]
    [step] = hpa_steps(records)
    assert step.arithmetic() == "160 against a target of 80 (Value): ceil(1 × 160/80) = 2"
    assert per_replica_values(records, W, "m") is None


def test_a_failed_metric_has_no_step() -> None:
    detail = "external metric m: failed (no data); 1 -> 1"
    assert hpa_steps([_record(0, 1, 1, None, detail)]) == []


def test_per_replica_values_hold_the_hpa_number_between_syncs() -> None:
    hold = "external metric m 160 / target 80 (AverageValue) -> desired 2; 1 -> 1"
    records = [
        _record(0, 1, 1, 160.0, hold),
        _record(15, 2, 2, 160.0),  # the pod created: status 2, no sync yet
        _record(30, 2, 2, 80.0),  # the query halves: 80 / 2 = 40
        _record(300, 1, 1, 80.0, SCALE_DOWN),
    ]
    assert per_replica_values(records, W, "m") == [160.0, 160.0, 40.0, 40.0]
