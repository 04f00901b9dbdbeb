"""Cached selections stay while only series they do not match come and go, and are
recomputed when a series they match appears or leaves (retention included)."""

from __future__ import annotations

import re

from gpuscale.promql import Engine, Matcher, SeriesStore


def _eq(name: str, value: str) -> Matcher:
    return Matcher(name, "=", value, lambda v, want=value: v == want)


def _re(name: str, pattern: str) -> Matcher:
    compiled = re.compile(pattern)
    return Matcher(name, "=~", pattern, lambda v: compiled.fullmatch(v) is not None)


def test_a_name_selection_survives_other_names_and_follows_its_own() -> None:
    store = SeriesStore(retention_ms=60_000)
    store.append({"__name__": "a", "pod": "1"}, 1_000, 1.0)
    by_name = [_eq("__name__", "a")]
    first = store.select(by_name)
    assert [s.label_map["pod"] for s in first] == ["1"]
    store.append({"__name__": "b", "pod": "9"}, 2_000, 1.0)
    assert store.select(by_name) is first  # another name: same cached list
    anything = [_re("pod", ".+")]
    assert len(store.select(anything)) == 2
    store.append({"__name__": "a", "pod": "2"}, 3_000, 1.0)
    again = store.select(by_name)
    assert again is not first
    assert [s.label_map["pod"] for s in again] == ["1", "2"]
    assert len(store.select(anything)) == 3
    # retention empties a's first series: the selection follows
    store.append({"__name__": "a", "pod": "2"}, 200_000, 1.0)
    assert [s.label_map["pod"] for s in store.select(by_name)] == ["2"]
    assert len(store.select(anything)) == 1


def test_queries_see_new_series_of_their_metric() -> None:
    store = SeriesStore()
    engine = Engine(store)
    store.append({"__name__": "x", "pod": "a"}, 1_000, 1.0)
    assert engine.instant("sum(x)", 2_000).samples[0].value == 1.0  # type: ignore[attr-defined]
    store.append({"__name__": "y", "pod": "a"}, 2_000, 5.0)
    store.append({"__name__": "x", "pod": "b"}, 2_000, 2.0)
    assert engine.instant("sum(x)", 3_000).samples[0].value == 3.0  # type: ignore[attr-defined]


def test_a_new_series_of_the_same_name_elsewhere_keeps_the_selection() -> None:
    store = SeriesStore()
    store.append({"__name__": "q", "service": "a"}, 1_000, 1.0)
    mine = [_eq("__name__", "q"), _eq("service", "a")]
    first = store.select(mine)
    store.append({"__name__": "q", "service": "b"}, 2_000, 1.0)
    assert store.select(mine) is first
    store.append({"__name__": "q", "service": "a", "pod": "2"}, 3_000, 1.0)
    assert len(store.select(mine)) == 2
