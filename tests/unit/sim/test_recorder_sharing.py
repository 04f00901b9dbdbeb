"""The recorder shares a part of a record with the record before while nothing marked it
changed (``sim/recorder.py``: a workload's ``shown`` state, ``nodes_shown``, the load and
GPU maps); that the shared records are written as before is the corpus test's business."""

from __future__ import annotations

import itertools

from tests.unit.sim.corpus import CASES


def test_records_share_what_did_not_change() -> None:
    case = next(c for c in CASES if c.name == "bench-sim-trace-15m")
    _sim, result = case.run()
    records = result.records
    pairs = list(itertools.pairwise(records))
    assert sum(1 for before, after in pairs if before.nodes is after.nodes) > len(pairs) // 2
    assert sum(1 for before, after in pairs if before.gpus is after.gpus) > len(pairs) // 2
    assert any(
        a is b
        for before, after in pairs
        for a, b in zip(before.workloads, after.workloads, strict=True)
    )


def test_a_changed_workload_state_keeps_its_unchanged_pod_counts() -> None:
    case = next(c for c in CASES if c.name == "bench-sim-trace-15m")
    _sim, result = case.run()
    changed = [
        (a, b)
        for before, after in itertools.pairwise(result.records)
        for a, b in zip(before.workloads, after.workloads, strict=True)
        if a is not b
    ]
    kept = [(a, b) for a, b in changed if a.pods == b.pods and list(a.pods) == list(b.pods)]
    assert kept
    assert all(a.pods is b.pods for a, b in kept)
