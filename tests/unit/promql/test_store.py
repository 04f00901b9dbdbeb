"""The series store: time order, staleness markers, retention and selection."""

from __future__ import annotations

import math

import pytest

from gpuscale.promql import Engine, OutOfOrderSampleError, SeriesStore
from gpuscale.promql.store import Matcher


def _eq(name: str, value: str) -> Matcher:
    return Matcher(name, "=", value, value.__eq__)


def test_labels_are_normalised_and_refs_are_stable() -> None:
    store = SeriesStore()
    a = store.series_ref({"__name__": "up", "job": "x", "empty": ""})
    b = store.series_ref({"job": "x", "__name__": "up"})
    assert a == b
    assert store.labels_of(a) == (("__name__", "up"), ("job", "x"))
    assert store.series_ref({"__name__": "up", "job": "y"}) != a


def test_series_needs_a_label() -> None:
    with pytest.raises(ValueError, match="non-empty label"):
        SeriesStore().series_ref({"a": ""})


def test_appends_must_be_in_time_order() -> None:
    store = SeriesStore()
    ref = store.series_ref({"__name__": "m"})
    store.append_ref(ref, 1000, 1.0)
    store.append_ref(ref, 1000, 1.0)  # same timestamp, same value: ignored (as tsdb does)
    with pytest.raises(OutOfOrderSampleError, match="duplicate sample"):
        store.append_ref(ref, 1000, 2.0)
    with pytest.raises(OutOfOrderSampleError, match="out of order"):
        store.append_ref(ref, 999, 1.0)
    assert store.samples({"__name__": "m"}) == [(1000, 1.0)]


def test_a_bad_value_changes_nothing() -> None:
    store = SeriesStore()
    ref = store.series_ref({"__name__": "m"})
    with pytest.raises(TypeError):
        store.append_ref(ref, 1000, "1.5")  # type: ignore[arg-type]
    store.append_ref(ref, 1000, 1.5)
    assert store.samples({"__name__": "m"}) == [(1000, 1.5)]


def test_append_scrape_appends_one_sample_per_series() -> None:
    store = SeriesStore()
    refs = [store.series_ref({"__name__": "m", "pod": str(i)}) for i in range(3)]
    store.append_scrape(refs, 15_000, [1.0, 2.0, 3.0])
    store.append_scrape(refs, 30_000, [4.0, 5.0, 6.0])
    assert store.num_samples == 6
    assert store.samples({"__name__": "m", "pod": "2"}) == [(15_000, 3.0), (30_000, 6.0)]
    with pytest.raises(ValueError, match="3 refs but 2 values"):
        store.append_scrape(refs, 45_000, [1.0, 2.0])


def test_staleness_marker_ends_a_series_at_once() -> None:
    store = SeriesStore()
    labels = {"__name__": "m", "pod": "a"}
    store.append(labels, 0, 1.0)
    store.mark_stale(labels, 15_000)
    store.mark_stale({"__name__": "unknown"}, 15_000)  # never scraped: nothing to mark
    assert store.samples(labels) == [(0, 1.0), (15_000, None)]
    engine = Engine(store, version="2")
    assert len(engine.instant("m", 14_999)) == 1
    assert len(engine.instant("m", 15_000)) == 0
    assert len(engine.instant("m", 100_000)) == 0
    # Range vectors skip the marker but keep the samples before it.
    assert engine.instant("count_over_time(m[1m])", 30_000).samples[0].value == 1
    store.append(labels, 30_000, 2.0)  # the series comes back
    assert engine.instant("m", 30_000).samples[0].value == 2.0


def test_real_nan_is_a_value_not_a_marker() -> None:
    store = SeriesStore()
    store.append({"__name__": "m"}, 0, math.nan)
    result = Engine(store).instant("m", 1000)
    assert len(result) == 1
    assert math.isnan(result.samples[0].value)


def test_drop_before_evicts_empty_series_and_refs_survive() -> None:
    store = SeriesStore()
    old = store.series_ref({"__name__": "m", "pod": "old"})
    new = store.series_ref({"__name__": "m", "pod": "new"})
    store.append_ref(old, 0, 1.0)
    store.append_ref(new, 0, 1.0)
    store.append_ref(new, 60_000, 2.0)
    store.drop_before(30_000)
    assert store.num_series == 1
    assert store.num_samples == 1
    assert [s.labels for s in store.select([_eq("__name__", "m")])] == [
        (("__name__", "m"), ("pod", "new"))
    ]
    store.append_ref(old, 90_000, 3.0)  # appending brings the series back
    assert store.num_series == 2
    assert len(store.select([_eq("__name__", "m")])) == 2


def test_retention_sweeps_old_samples() -> None:
    store = SeriesStore(retention_ms=80_000)
    ref = store.series_ref({"__name__": "m"})
    for i in range(100):
        store.append_ref(ref, i * 10_000, float(i))
    kept = store.samples({"__name__": "m"})
    newest = 99 * 10_000
    assert kept[-1] == (newest, 99.0)
    # Swept at most an eighth of the retention late.
    assert all(t >= newest - 80_000 - 10_000 for t, _ in kept)
    assert len(kept) < 12


def test_retention_must_be_positive() -> None:
    with pytest.raises(ValueError, match="retention_ms"):
        SeriesStore(retention_ms=0)


def test_select_sorts_by_labels_and_follows_new_series() -> None:
    store = SeriesStore()
    for pod in ("c", "a", "b"):
        store.append({"__name__": "m", "pod": pod}, 0, 1.0)
    store.append({"__name__": "other", "pod": "a"}, 0, 1.0)
    first = store.select([_eq("__name__", "m")])
    assert [s.label_map["pod"] for s in first] == ["a", "b", "c"]
    store.append({"__name__": "m", "pod": "0"}, 0, 1.0)
    second = store.select([_eq("__name__", "m")])
    assert [s.label_map["pod"] for s in second] == ["0", "a", "b", "c"]
    by_pod = store.select([_eq("pod", "a")])
    assert [s.name for s in by_pod] == ["m", "other"]


def test_missing_label_matches_empty_value() -> None:
    store = SeriesStore()
    store.append({"__name__": "m", "pod": "a"}, 0, 1.0)
    store.append({"__name__": "m"}, 0, 2.0)
    engine = Engine(store)
    assert [s.value for s in engine.instant('m{pod=""}', 0).samples] == [2.0]
    assert [s.value for s in engine.instant('m{pod!=""}', 0).samples] == [1.0]


@pytest.mark.parametrize("fn", ["rate", "increase", "delta", "count_over_time"])
def test_range_functions_skip_staleness_markers(fn: str) -> None:
    store = SeriesStore()
    labels = {"__name__": "m"}
    store.append(labels, 0, 0.0)
    store.append(labels, 15_000, 10.0)
    store.mark_stale(labels, 30_000)
    store.append(labels, 45_000, 20.0)
    # Window (0, 60 s] holds 10 @ 15 s and 20 @ 45 s: increase 10 over 30 s, extrapolated
    # by 15 s at each end (both under 1.1 x the 30 s average spacing): x2.
    want = {"rate": 20 / 60, "increase": 20.0, "delta": 20.0, "count_over_time": 2.0}[fn]
    result = Engine(store).instant(f"{fn}(m[1m])", 60_000)
    assert result.samples[0].value == pytest.approx(want)  # type: ignore[union-attr]
