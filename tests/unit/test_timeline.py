from __future__ import annotations

import pytest

from gpuscale.errors import InputError
from gpuscale.timeline import (
    Decision,
    Header,
    Record,
    WorkloadState,
    decode_lines,
    encode_header,
    encode_record,
)


def _record(t: float, **metrics: float | None) -> Record:
    return Record(
        t=t,
        workloads=(
            WorkloadState(
                name="default/app",
                spec=2,
                status=2,
                ready=1,
                desired=2,
                pods={"Pending": 1, "Ready": 1},
                metrics=metrics,
            ),
        ),
        nodes={"gpu": {"ready": 1, "provisioning": 1}},
        cost_usd=0.5,
        load={"request_rate": 12.0},
        decisions=(
            Decision("hpa", "scale", "SucceededRescale", "deployment/default/app", "2 -> 3"),
        ),
    )


def test_round_trip_keeps_every_field() -> None:
    header = Header(world="simulate", pools={"gpu": {"price_per_hour": 1.99}}, meta={"seed": 1})
    records = [_record(0.0, **{"query:s0-prometheus": 160.0}), _record(15.0)]
    lines = [encode_header(header), *(encode_record(r) for r in records)]
    timeline = decode_lines(lines)
    assert timeline.header == header
    assert timeline.records == tuple(records)


def test_non_finite_metrics_become_null() -> None:
    line = encode_record(_record(1.0, x=float("nan"), y=float("inf")))
    assert '"x":null' in line
    assert '"y":null' in line
    header = encode_header(Header(world="live"))
    decoded = decode_lines([header, line]).records[0]
    assert decoded.workloads[0].metrics == {"x": None, "y": None}


def test_decode_errors_name_the_line() -> None:
    header = encode_header(Header(world="live"))
    with pytest.raises(InputError, match=r"run\.jsonl:2: not a JSON line"):
        decode_lines([header, "{oops"], source="run.jsonl")
    with pytest.raises(InputError, match=r"run\.jsonl:1: malformed timeline header"):
        decode_lines(['{"format": "other"}'], source="run.jsonl")
    with pytest.raises(InputError, match=r"run\.jsonl:2: malformed timeline record"):
        decode_lines([header, '{"t": 1}'], source="run.jsonl")
    with pytest.raises(InputError, match="empty timeline"):
        decode_lines(["", "  "], source="run.jsonl")
