"""The recorder shares a part of a record with the record before only when it would be
written the same (``sim/recorder.py``): equal values of the same type, the same sign of
zero, the same key order."""

from __future__ import annotations

import itertools
import math

from gpuscale.sim.recorder import _same_nested, _same_value, _same_values
from tests.unit.sim.corpus import CASES


def test_values_are_the_same_only_when_written_alike() -> None:
    assert _same_value(2.0, 2.0)
    assert _same_value(None, None)
    assert not _same_value(1, 1.0)
    assert not _same_value(True, 1)
    assert not _same_value(0.0, -0.0)
    assert _same_value(-0.0, -0.0)
    assert not _same_value(math.nan, float("nan"))
    assert not _same_value(None, 0.0)
    assert _same_values({"a": 1.0, "b": None}, {"a": 1.0, "b": None})
    assert not _same_values({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0})
    assert not _same_values({"a": 1.0}, {"a": 1})
    assert _same_nested({"gpu": {"Ready": 2}}, {"gpu": {"Ready": 2}})
    assert not _same_nested({"gpu": {"Ready": 2}}, {"gpu": {"Ready": 3}})
    assert not _same_nested({"a": {}, "b": {}}, {"b": {}, "a": {}})


def test_records_share_what_did_not_change() -> None:
    """(That the shared records are written as before is the corpus test's business.)"""
    case = next(c for c in CASES if c.name == "bench-sim-trace-15m")
    _sim, result = case.run()
    records = result.records
    shared = sum(1 for before, after in itertools.pairwise(records) if before.nodes is after.nodes)
    assert shared > len(records) // 2
