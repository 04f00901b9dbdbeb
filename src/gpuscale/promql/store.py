"""The in-memory series store the simulator scrapes into and the evaluator reads from.

Each series keeps its samples in two typed arrays (``array('q')`` timestamps in ms,
``array('d')`` values), appended in time order, so a day of 15 s scrapes costs 16 bytes per
sample and a window is found by bisection. This plays the part of Prometheus' head block
and ``storage.Querier`` (tsdb/head.go, storage/interface.go); chunk encoding, WAL and
compaction have no counterpart because nothing here outlives the process.

- **Appends** must be in time order per series, as Prometheus' appender demands: an older
  timestamp raises ``OutOfOrderSampleError``; the same timestamp with the same value is ignored
  and with another value raises (tsdb ``ErrOutOfOrderSample`` and
  ``ErrDuplicateSampleForTimestamp``).
  ``series_ref`` + ``append_ref`` (or ``append_scrape`` for one scrape of many series) skip
  the label lookup for the simulator's repeated scrapes.
- **Staleness markers** (``mark_stale``) are what Prometheus writes when a target or a
  series disappears (scrape/scrape.go): a sample whose value is the special stale NaN. They
  end a series at once instead of after the 5-minute lookback. Here they are kept as NaN
  values plus the list of their timestamps, and the evaluator skips them as the engine
  does (``value.IsStaleNaN``).
- **Retention** (``retention_ms``) drops samples older than the newest appended timestamp
  minus the retention, in sweeps at most an eighth of the retention apart (Prometheus
  drops whole blocks, also lazily). ``drop_before`` drops explicitly. A series left without
  samples leaves the index until it is appended to again; its ref stays valid.
"""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpuscale.promql.labels import METRIC_NAME, Labels, drop_name, labels_from_mapping

__all__ = ["Matcher", "OutOfOrderSampleError", "SeriesStore", "selection_key"]


class OutOfOrderSampleError(ValueError):
    """A sample older than (or, with another value, as old as) the series' newest sample.

    This is a bug in the caller (the simulator appends in time order), not a user error.
    """


@dataclass(frozen=True, slots=True)
class Matcher:
    """One label matcher of a selector: ``name`` ``op`` ``value`` with ``op`` one of
    ``=``, ``!=``, ``=~``, ``!~``; ``matches`` tests a label value (``""`` when absent).
    ``dialect`` tells regex flavours apart (Prometheus 3's ``.`` also matches newlines),
    so engines of both versions can share a store's selection cache."""

    name: str
    op: str
    value: str
    matches: Callable[[str], bool]
    dialect: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the matcher (for caching selections)."""
        return (self.name, self.op + self.dialect, self.value)


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


class _Series:
    """One series: its labels, derived forms the evaluator needs often, and its samples."""

    __slots__ = (
        "indexed",
        "label_map",
        "labels",
        "labels_noname",
        "name",
        "ref",
        "stale",
        "ts",
        "vs",
    )

    def __init__(self, ref: int, labels: Labels) -> None:
        self.ref = ref
        self.labels = labels
        self.labels_noname = drop_name(labels)
        self.label_map = dict(labels)
        self.name = self.label_map.get(METRIC_NAME, "")
        self.ts: array[int] = array("q")
        self.vs: array[float] = array("d")
        self.stale: list[int] | None = None
        self.indexed = True


class SeriesStore:
    """Float samples by series, in time order, with staleness markers and time retention.

    ``retention_ms`` (None: keep everything) bounds memory for long simulations.
    """

    def __init__(self, retention_ms: int | None = None) -> None:
        if retention_ms is not None and retention_ms <= 0:
            raise ValueError(f"retention_ms must be positive, got {retention_ms}")
        self.retention_ms = retention_ms
        self._series: list[_Series] = []
        self._by_labels: dict[Labels, int] = {}
        self._by_name: dict[str, dict[int, _Series]] = {}
        self._generation = 0
        self._select_cache: dict[tuple[tuple[str, str, str], ...], list[_Series]] = {}
        # the cached selections' matchers, by the metric name they select (None: any name)
        self._cached: dict[
            str | None, dict[tuple[tuple[str, str, str], ...], Sequence[Matcher]]
        ] = {}
        self._max_t: int | None = None
        self._next_sweep = math.inf if retention_ms is None else -math.inf

    # ----------------------------------------------------------------- writing

    def series_ref(self, labels: Mapping[str, str] | Labels) -> int:
        """The stable reference of the series with ``labels`` (created if new).

        ``labels`` include ``__name__``; empty values are dropped as Prometheus does.
        """
        key = labels if isinstance(labels, tuple) else labels_from_mapping(labels)
        ref = self._by_labels.get(key)
        if ref is None:
            if not any(v for _, v in key):
                raise ValueError("a series needs at least one non-empty label")
            ref = len(self._series)
            series = _Series(ref, key)
            self._series.append(series)
            self._by_labels[key] = ref
            self._index(series)
        return ref

    def append(self, labels: Mapping[str, str] | Labels, t_ms: int, value: float) -> None:
        """Append one sample to the series with ``labels`` (created if new)."""
        self.append_ref(self.series_ref(labels), t_ms, value)

    def append_ref(self, ref: int, t_ms: int, value: float) -> None:
        """Append one sample to the series ``ref`` (from ``series_ref``): the fast path."""
        s = self._series[ref]
        ts = s.ts
        if ts:
            if t_ms <= ts[-1]:
                self._not_after_last(s, t_ms, value)
                return
        elif not s.indexed:
            self._index(s)
        s.vs.append(value)  # first: a value that is not a number raises before any change
        ts.append(t_ms)
        if t_ms >= self._next_sweep:
            self._sweep(t_ms)

    def append_scrape(self, refs: Sequence[int], t_ms: int, values: Sequence[float]) -> None:
        """Append one sample per series at the same timestamp (one scrape of a target)."""
        if len(refs) != len(values):
            raise ValueError(f"{len(refs)} refs but {len(values)} values")
        series = self._series
        for ref, value in zip(refs, values, strict=True):
            s = series[ref]
            ts = s.ts
            if ts:
                if t_ms <= ts[-1]:
                    self._not_after_last(s, t_ms, value)
                    continue
            elif not s.indexed:
                self._index(s)
            s.vs.append(value)
            ts.append(t_ms)
        if t_ms >= self._next_sweep:
            self._sweep(t_ms)

    def mark_stale(self, labels: Mapping[str, str] | Labels, t_ms: int) -> None:
        """Write a staleness marker: the series has no value from ``t_ms`` on.

        Unknown series are ignored (Prometheus only marks series it has scraped).
        """
        key = labels if isinstance(labels, tuple) else labels_from_mapping(labels)
        ref = self._by_labels.get(key)
        if ref is not None:
            self.mark_stale_ref(ref, t_ms)

    def mark_stale_ref(self, ref: int, t_ms: int) -> None:
        """Write a staleness marker on the series ``ref``."""
        s = self._series[ref]
        if s.ts and t_ms <= s.ts[-1]:
            if t_ms == s.ts[-1] and s.stale and s.stale[-1] == t_ms:
                return
            raise OutOfOrderSampleError(
                f"stale marker at {t_ms} ms is not after the last sample ({s.ts[-1]} ms) of "
                f"{_show(s.labels)}"
            )
        if not s.ts and not s.indexed:
            self._index(s)
        s.ts.append(t_ms)
        s.vs.append(math.nan)
        if s.stale is None:
            s.stale = []
        s.stale.append(t_ms)
        if t_ms >= self._next_sweep:
            self._sweep(t_ms)

    def drop_before(self, t_ms: int) -> None:
        """Drop every sample older than ``t_ms``."""
        for s in self._series:
            ts = s.ts
            if not ts or ts[0] >= t_ms:
                continue
            k = bisect_left(ts, t_ms)
            del ts[:k]
            del s.vs[:k]
            if s.stale is not None:
                s.stale = [x for x in s.stale if x >= t_ms] or None
            if not ts and s.indexed:
                self._unindex(s)

    # ----------------------------------------------------------------- reading

    @property
    def generation(self) -> int:
        """Changes whenever the set of indexed series changes (invalidates selections)."""
        return self._generation

    @property
    def num_series(self) -> int:
        """Series that currently hold samples or were never emptied by retention."""
        return sum(1 for s in self._series if s.indexed)

    @property
    def num_samples(self) -> int:
        """Samples held, staleness markers included."""
        return sum(len(s.ts) for s in self._series)

    def labels_of(self, ref: int) -> Labels:
        """The label set of series ``ref``."""
        return self._series[ref].labels

    def samples(self, labels: Mapping[str, str] | Labels) -> list[tuple[int, float | None]]:
        """The stored samples of one series as ``(t_ms, value)``; ``None`` marks staleness."""
        key = labels if isinstance(labels, tuple) else labels_from_mapping(labels)
        ref = self._by_labels.get(key)
        if ref is None:
            return []
        s = self._series[ref]
        stale = set(s.stale or ())
        return [(t, None if t in stale else v) for t, v in zip(s.ts, s.vs, strict=True)]

    def select(
        self, matchers: Sequence[Matcher], key: tuple[tuple[str, str, str], ...] | None = None
    ) -> list[_Series]:
        """Indexed series matching every matcher, sorted by labels (Prometheus' order).

        Selections are cached until a series they match comes or goes (a new series, or
        one emptied by retention); ``key`` (from ``selection_key``) saves recomputing the
        cache key on every evaluation.
        """
        if key is None:
            key = selection_key(matchers)
        hit = self._select_cache.get(key)
        if hit is not None:
            return hit
        name_eq = [m.value for m in matchers if m.name == METRIC_NAME and m.op == "="]
        candidates: Iterable[_Series]
        if name_eq:
            bucket = self._by_name.get(name_eq[0])
            candidates = bucket.values() if bucket else ()
        else:
            candidates = (s for s in self._series if s.indexed)
        found = [
            s for s in candidates if all(m.matches(s.label_map.get(m.name, "")) for m in matchers)
        ]
        found.sort(key=lambda s: s.labels)
        if len(self._select_cache) > 4096:
            self._select_cache.clear()
            self._cached.clear()
        self._select_cache[key] = found
        self._cached.setdefault(name_eq[0] if name_eq else None, {})[key] = tuple(matchers)
        return found

    # ----------------------------------------------------------------- internals

    def _index(self, s: _Series) -> None:
        self._by_name.setdefault(s.name, {})[s.ref] = s
        s.indexed = True
        self._changed(s)

    def _unindex(self, s: _Series) -> None:
        bucket = self._by_name.get(s.name)
        if bucket is not None:
            bucket.pop(s.ref, None)
        s.indexed = False
        self._changed(s)

    def _changed(self, s: _Series) -> None:
        """``s`` came or went: drop the cached selections it belongs to, and only those."""
        self._generation += 1
        labels = s.label_map
        for name in (s.name, None):
            cached = self._cached.get(name)
            if not cached:
                continue
            for key, matchers in list(cached.items()):
                if all(m.matches(labels.get(m.name, "")) for m in matchers):
                    del cached[key]
                    self._select_cache.pop(key, None)

    def _not_after_last(self, s: _Series, t_ms: int, value: float) -> None:
        last_t = s.ts[-1]
        if (
            t_ms == last_t
            and _bits(float(value)) == _bits(s.vs[-1])
            and not (s.stale and s.stale[-1] == last_t)
        ):
            return
        kind = "duplicate sample for timestamp" if t_ms == last_t else "out of order sample"
        raise OutOfOrderSampleError(
            f"{kind}: {t_ms} ms is not after the last sample ({last_t} ms) of {_show(s.labels)}"
        )

    def _sweep(self, now_ms: int) -> None:
        assert self.retention_ms is not None
        self.drop_before(now_ms - self.retention_ms)
        self._next_sweep = now_ms + max(self.retention_ms // 8, 1)


def selection_key(matchers: Sequence[Matcher]) -> tuple[tuple[str, str, str], ...]:
    """The cache key of a selection: its matchers, order-independent."""
    return tuple(sorted(m.key for m in matchers))


def _show(labels: Labels) -> str:
    d = dict(labels)
    name = d.pop(METRIC_NAME, "")
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}"
