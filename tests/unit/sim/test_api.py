"""Spec validation of gpuscale.sim and the timeline's ``gpus`` field (every module's
``__all__`` is checked by tests/unit/test_exported_members.py)."""

from __future__ import annotations

import pytest

from gpuscale.sim.specs import (
    ControlPlaneSpec,
    RequestCapacity,
    ScrapeSpec,
    SimPool,
    SimulationSpec,
    SimWorkload,
)
from gpuscale.timeline import (
    Header,
    Record,
    WorkloadState,
    decode_lines,
    encode_header,
    encode_record,
)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SimWorkload("Bad_Name"), "DNS label"),
        (lambda: SimWorkload("w", replicas=-1), "replicas"),
        (lambda: SimWorkload("w", startup_s=-1), "startup_s"),
        (
            lambda: SimWorkload("w", requests={"amd.com/gpu": 1}, limits={"amd.com/gpu": 2}),
            "must equal its limit",
        ),
        (lambda: SimPool("p", {"cpu": 1}, min_nodes=3, max_nodes=2), "min_nodes"),
        (lambda: SimPool("p", {"cpu": -1}), "non-negative"),
        (lambda: RequestCapacity(concurrency=0, service_time_s=1), "concurrency"),
        (RequestCapacity, "service_time_s or token rates"),
        (lambda: RequestCapacity(prefill_tokens_per_s=10), "both"),
        (lambda: ScrapeSpec(scrape_interval_s=0), "scrape_interval_s"),
        (lambda: ControlPlaneSpec(load_balancing="sticky"), "load_balancing"),
        (lambda: SimulationSpec((), ()), "at least one node pool"),
    ],
)
def test_bad_specs_fail_at_construction(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


def test_requests_default_to_limits() -> None:
    spec = SimWorkload("w", limits={"amd.com/gpu": 1, "cpu": 2})
    assert spec.pod_requirements().requests == {"amd.com/gpu": 1, "cpu": 2000}
    assert spec.gpus_per_pod() == 1
    assert RequestCapacity.from_rate(4.0).service_time_s == 0.25


def test_timeline_gpus_round_trip_and_old_files_without_it() -> None:
    record = Record(
        t=1.0, workloads=(WorkloadState("a/b", 1, 1, 1),), gpus={"gpu": {"total": 2, "busy": 1}}
    )
    header = encode_header(Header(world="simulate"))
    assert decode_lines([header, encode_record(record)]).records[0] == record
    old = encode_record(Record(t=2.0, workloads=()))
    assert '"gpus"' not in old
    assert decode_lines([header, old]).records[0].gpus == {}
