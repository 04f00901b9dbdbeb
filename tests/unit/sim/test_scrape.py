"""Prometheus scraping: target phases (``scrape/target.go``), loops, staleness, labels.

Hash vectors: XXH64 values from the reference implementation (python-xxhash 4.1,
computed once); FNV-1a 64 values from its specification's test suite.
"""

from __future__ import annotations

import itertools

import pytest

from gpuscale.sim.engine import EventLoop
from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.scrape import ScrapeManager, ScrapeTarget, fnv1a_64, target_offset, xxhash64


@pytest.mark.parametrize(
    ("data", "seed", "digest"),
    [
        (b"", 0, 0xEF46DB3751D8E999),
        (b"a", 0, 0xD24EC4F1A98C6E5B),
        (b"abc", 0, 0x44BC2CF5AD770999),
        (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),
        (b"x" * 100, 0, 0x92F0DE5A88A3C094),
        (b"abcdefghijklmnopqrstuvwxyz012345678", 0, 0xF1911D891BECAD9F),
        (b"0123456789abcdef0123456789abcdef", 7, 0xF3BFB9BA5C7DF996),
    ],
)
def test_xxhash64(data: bytes, seed: int, digest: int) -> None:
    assert xxhash64(data, seed) == digest


def test_fnv1a_64() -> None:
    assert fnv1a_64(b"") == 0xCBF29CE484222325
    assert fnv1a_64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64(b"foobar") == 0x85944171F73967E8


def test_offsets_are_stable_spread_and_follow_the_seed() -> None:
    labels = {"job": "app", "instance": "10.244.1.10:8080"}
    url = "http://10.244.1.10:8080/metrics"
    offset = target_offset(labels, url, 30.0)
    assert 0.0 <= offset < 30.0
    assert target_offset(labels, url, 30.0) == offset
    assert target_offset(labels, url, 30.0, seed=12345) != offset
    spread = {
        round(
            target_offset(
                {"instance": f"10.244.1.{i}:8080"}, f"http://10.244.1.{i}:8080/metrics", 30.0
            )
        )
        for i in range(40)
    }
    assert len(spread) > 15


def _target(values: dict[str, float | None], interval: float = 10.0, **kwargs) -> ScrapeTarget:  # type: ignore[no-untyped-def]
    def collect(now: float):  # type: ignore[no-untyped-def]
        if values.get("fail"):
            return None
        keys = tuple((("__name__", k),) for k in values if values[k] is not None and k != "fail")
        return keys, [values[k[0][1]] for k in keys]

    return ScrapeTarget(
        "t",
        {"job": "app", "instance": "10.0.0.1:8080", "pod": "p"},
        "http://10.0.0.1:8080/metrics",
        interval,
        collect,
        **kwargs,
    )


def test_loop_starts_at_the_phase_after_the_refresh_tick_and_repeats() -> None:
    engine, backend = EventLoop(), PromQLBackend()
    manager = ScrapeManager(engine, backend, refresh_s=5.0)
    values: dict[str, float | None] = {"g": 1.0}
    target = _target(values)
    engine.advance_to(2.0)
    manager.add(target)
    engine.advance_to(40.0)
    times = [
        t
        for t, _ in backend.store.samples(
            {"__name__": "g", "job": "app", "instance": "10.0.0.1:8080", "pod": "p"}
        )
    ]
    first = 5.0 + ((target.offset - 5.0) % 10.0 or 10.0)
    assert times[0] == round(first * 1000)
    assert [b - a for a, b in itertools.pairwise(times)] == [10_000] * (len(times) - 1)
    ups = backend.store.samples(
        {"__name__": "up", "job": "app", "instance": "10.0.0.1:8080", "pod": "p"}
    )
    assert {v for _, v in ups} == {1.0}


def test_vanished_series_and_failed_scrapes_get_stale_markers() -> None:
    engine, backend = EventLoop(), PromQLBackend()
    manager = ScrapeManager(engine, backend, refresh_s=0.0)
    values: dict[str, float | None] = {"a": 1.0, "b": 2.0}
    manager.add(_target(values), immediate=True)
    engine.advance_to(10.0)
    values["b"] = None
    engine.advance_to(20.0)
    labels_b = {"__name__": "b", "job": "app", "instance": "10.0.0.1:8080", "pod": "p"}
    assert backend.store.samples(labels_b)[-1][1] is None
    values["fail"] = 1.0
    engine.advance_to(30.0)
    labels_a = {**labels_b, "__name__": "a"}
    assert backend.store.samples(labels_a)[-1][1] is None
    up = backend.store.samples({**labels_b, "__name__": "up"})
    assert up[-1][1] == 0.0


def test_a_removed_target_goes_stale_two_intervals_later() -> None:
    engine, backend = EventLoop(), PromQLBackend()
    manager = ScrapeManager(engine, backend, refresh_s=5.0)
    target = _target({"g": 3.0})
    manager.add(target, immediate=True)
    engine.advance_to(31.0)
    last_scrape = backend.store.samples(
        {"__name__": "g", "job": "app", "instance": "10.0.0.1:8080", "pod": "p"}
    )[-1][0]
    manager.remove(target)
    engine.advance_to(35.0)  # the refresh tick stops the loop
    next_due = last_scrape + 10_000
    query = 'sum(g{job="app"})'
    assert backend.query(query, next_due + 5_000)["data"]["result"][0]["value"][1] == "3"
    engine.advance_to(next_due / 1000 + 11.0 + 0.001)
    stale_at, value = backend.store.samples(
        {"__name__": "g", "job": "app", "instance": "10.0.0.1:8080", "pod": "p"}
    )[-1]
    assert stale_at == next_due
    assert value is None
    assert backend.query(query, next_due + 5_000)["data"]["result"] == []


def test_honor_labels_and_conflicts() -> None:
    target = _target({}, honor_labels=False)
    assert target.merged((("__name__", "x"), ("pod", "other"), ("empty", ""))) == {
        "__name__": "x",
        "exported_pod": "other",
        "pod": "p",
        "job": "app",
        "instance": "10.0.0.1:8080",
    }
    honored = _target({}, honor_labels=True)
    assert honored.merged((("__name__", "x"), ("pod", "other")))["pod"] == "other"
