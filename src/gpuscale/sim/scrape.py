"""Prometheus' scraping, as its scrape manager and scrape loops do it, into a metrics
backend.

Models prometheus/prometheus (v3) ``scrape/``:

- ``target.go`` ``Target.offset``: each target is scraped at a fixed phase within its
  interval, ``(hash ^ offsetSeed) mod interval`` past the interval boundary of absolute
  time, where ``hash`` is FNV-1a 64 of the target's label-set hash (xxHash64 of the
  sorted labels, name and value each followed by ``0xff``) printed as ``%016d`` followed
  by the target URL. The simulator's labels are those gpuscale gives its targets, not the
  full set prometheus-operator generates, so a real server's phases differ; the spread
  (uniform, stable per target) is what matters and is the same. Virtual time 0 is the
  Unix epoch.
- ``scrape.go`` ``scrapeLoop.run``: the first scrape waits for the target's next phase,
  then one every interval; ``manager.go`` applies target changes on a 5-second tick
  (``reloadCh``), so a new pod is scraped from the first phase after the tick that sees
  it.
- Staleness: a series missing from a scrape, and every series of a failed scrape, get a
  staleness marker at that scrape's time; a removed target's loop writes markers for
  its last series at the time its next scrape would have been, but only after waiting
  two intervals and 10 % more (``endOfRunStaleness``), so queries between see the last
  value.
- Every scrape also writes ``up`` (1, or 0 when the scrape fails). Labels with an empty
  value are dropped, as Prometheus drops them. With ``honor_labels`` the exposed labels
  win over the target's; without, conflicting exposed labels become ``exported_<name>``.

A target's collector returns its samples as ``(keys, values)``, where each key is a tuple
of ``(label, value)`` pairs including ``__name__``; it returns None when the scrape fails.
A collector that returns the very same ``keys`` object as last time lets the scrape skip
the series bookkeeping (nothing appeared or disappeared).

**Only what is read is written.** A manager given ``keep`` (the metric names the
simulation's queries can select) stores only those series, and does not run at all the
loops of targets none of whose series (``ScrapeTarget.names``, ``up`` included) is among
them. Samples no query can select cannot change any answer, so the run is the same; a
test checks timelines with and without it, record by record.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence

from gpuscale.sim.engine import EventLoop, Handle, Priority
from gpuscale.sim.metrics import MetricsBackend

__all__ = [
    "Collector",
    "Samples",
    "ScrapeManager",
    "ScrapeTarget",
    "SeriesKey",
    "fnv1a_64",
    "target_offset",
    "xxhash64",
]

_MASK = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5

SeriesKey = tuple[tuple[str, str], ...]
Samples = tuple[Sequence[SeriesKey], Sequence[float]]
Collector = Callable[[float], "Samples | None"]


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _MASK
    return (_rotl(acc, 31) * _P1) & _MASK


def xxhash64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (the hash Prometheus' ``labels.Labels.Hash`` uses)."""
    n = len(data)
    i = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _MASK
        v2 = (seed + _P2) & _MASK
        v3 = seed & _MASK
        v4 = (seed - _P1) & _MASK
        while i + 32 <= n:
            v1 = _round(v1, int.from_bytes(data[i : i + 8], "little"))
            v2 = _round(v2, int.from_bytes(data[i + 8 : i + 16], "little"))
            v3 = _round(v3, int.from_bytes(data[i + 16 : i + 24], "little"))
            v4 = _round(v4, int.from_bytes(data[i + 24 : i + 32], "little"))
            i += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            h ^= _round(0, v)
            h = (h * _P1 + _P4) & _MASK
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i : i + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _MASK
        i += 8
    if i + 4 <= n:
        h ^= (int.from_bytes(data[i : i + 4], "little") * _P1) & _MASK
        h = (_rotl(h, 23) * _P2 + _P3) & _MASK
        i += 4
    while i < n:
        h ^= (data[i] * _P5) & _MASK
        h = (_rotl(h, 11) * _P1) & _MASK
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _MASK
    h ^= h >> 29
    h = (h * _P3) & _MASK
    h ^= h >> 32
    return h


def fnv1a_64(data: bytes) -> int:
    """FNV-1a 64 (Go's ``hash/fnv.New64a``)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & _MASK
    return h


def _labels_hash(labels: Mapping[str, str]) -> int:
    buffer = bytearray()
    for name in sorted(labels):
        buffer += name.encode()
        buffer.append(0xFF)
        buffer += labels[name].encode()
        buffer.append(0xFF)
    return xxhash64(bytes(buffer))


def target_offset(labels: Mapping[str, str], url: str, interval_s: float, seed: int = 0) -> float:
    """The target's scrape phase in seconds within ``[0, interval)`` (``Target.offset``)."""
    digest = fnv1a_64(f"{_labels_hash(labels):016d}{url}".encode())
    interval_ns = round(interval_s * 1e9)
    return ((digest ^ (seed & _MASK)) % interval_ns) / 1e9


class ScrapeTarget:
    """One scrape target: its labels, interval and collector."""

    __slots__ = (
        "collect",
        "first",
        "handle",
        "honor_labels",
        "interval",
        "labels",
        "last",
        "last_keys",
        "last_refs",
        "name",
        "names",
        "next_n",
        "offset",
        "pick",
        "refs",
        "running",
        "up_ref",
    )

    def __init__(
        self,
        name: str,
        labels: Mapping[str, str],
        url: str,
        interval_s: float,
        collect: Collector,
        *,
        honor_labels: bool = False,
        seed: int = 0,
        names: Collection[str] | None = None,
    ) -> None:
        self.name = name
        self.names = None if names is None else frozenset(names)
        """The metric names its series can have (None: unknown); ``up`` is implied."""
        self.pick: Callable[[Sequence[float]], Sequence[float]] | None = None
        self.labels = {k: v for k, v in labels.items() if v and not k.startswith("__")}
        self.interval = interval_s
        self.offset = target_offset(labels, url, interval_s, seed)
        self.collect = collect
        self.honor_labels = honor_labels
        self.refs: dict[SeriesKey, Hashable] = {}
        self.last: set[SeriesKey] = set()
        self.last_keys: Sequence[SeriesKey] = ()
        self.last_refs: list[Hashable] = []
        self.next_n = 0
        self.first = 0.0
        self.handle: Handle | None = None
        self.running = False
        self.up_ref: Hashable | None = None

    def merged(self, key: SeriesKey) -> dict[str, str]:
        """Stored labels of an exposed series: exposed plus target labels."""
        exposed = {k: v for k, v in key if v}
        if self.honor_labels:
            return {**self.labels, **exposed}
        merged = dict(exposed)
        for name, value in self.labels.items():
            if name in merged:
                merged[f"exported_{name}"] = merged[name]
            merged[name] = value
        return merged


class ScrapeManager:
    """Scrape loops for a changing set of targets, writing into ``backend``."""

    def __init__(
        self,
        engine: EventLoop,
        backend: MetricsBackend,
        *,
        refresh_s: float,
        keep: Collection[str] | None = None,
    ) -> None:
        self.engine = engine
        self.backend = backend
        self.refresh_s = refresh_s
        self.keep = None if keep is None else frozenset(keep)
        """Metric names to store (None: all); see the module docstring."""
        self.scrapes = 0
        self._pending_add: list[ScrapeTarget] = []
        self._pending_remove: list[ScrapeTarget] = []
        self._tick: Handle | None = None

    def _next_tick(self) -> float:
        now = self.engine.now
        if self.refresh_s <= 0:
            return now
        return math.floor(now / self.refresh_s + 1e-9) * self.refresh_s + self.refresh_s

    def _schedule_tick(self) -> None:
        if self._tick is None:
            self._tick = self.engine.at(self._next_tick(), self._apply, priority=Priority.SCRAPE)

    def add(self, target: ScrapeTarget, *, immediate: bool = False) -> None:
        """Discover ``target``; its loop starts at the next refresh tick.

        ``immediate`` targets were there before the run: their loop starts now, and the
        scrape they had one interval before their first one in the run is written too, so
        that queries at the start see what a running Prometheus would."""
        if not self.wanted(target):
            return
        if immediate:
            self._start(target)
            self._collect(target, target.first - target.interval)
            return
        if target in self._pending_remove:
            self._pending_remove.remove(target)
            return
        self._pending_add.append(target)
        self._schedule_tick()

    def wanted(self, target: ScrapeTarget) -> bool:
        """Whether any series of ``target`` can be read by a query."""
        keep = self.keep
        if keep is None or target.names is None or "up" in keep:
            return True
        return not keep.isdisjoint(target.names)

    def remove(self, target: ScrapeTarget) -> None:
        """Forget ``target``; its loop stops at the next refresh tick."""
        if target in self._pending_add:
            self._pending_add.remove(target)
            return
        if target.running:
            self._pending_remove.append(target)
            self._schedule_tick()

    def _apply(self) -> None:
        self._tick = None
        adds, self._pending_add = self._pending_add, []
        removes, self._pending_remove = self._pending_remove, []
        for target in removes:
            self._stop(target)
        for target in adds:
            self._start(target)

    def _start(self, target: ScrapeTarget) -> None:
        now = self.engine.now
        interval = target.interval
        phase = now % interval
        wait = interval - phase + target.offset
        if wait > interval:
            wait -= interval
        target.running = True
        target.first = now + wait
        target.next_n = 0
        target.handle = self.engine.at(
            target.first, functools.partial(self._scrape, target), priority=Priority.SCRAPE
        )

    def _stop(self, target: ScrapeTarget) -> None:
        target.running = False
        if target.handle is not None:
            self.engine.cancel(target.handle)
            stale_at = target.handle.time
            target.handle = None
        else:  # pragma: no cover - a running target always has its next scrape scheduled
            stale_at = self.engine.now
        if not target.last:
            return
        last = set(target.last)
        write_at = stale_at + target.interval * 1.1
        self.engine.at(
            write_at, lambda: self._write_stale(target, last, stale_at), priority=Priority.SCRAPE
        )

    def _write_stale(self, target: ScrapeTarget, series: set[SeriesKey], at: float) -> None:
        if target.running:
            return  # recreated before the markers were due: upstream writes none
        t_ms = round(at * 1000)
        backend = self.backend
        for key in sorted(series):
            backend.mark_stale_ref(target.refs[key], t_ms)
        if target.up_ref is not None:
            backend.mark_stale_ref(target.up_ref, t_ms)
        target.last = set()
        target.last_keys = ()
        target.last_refs = []

    def _scrape(self, target: ScrapeTarget) -> None:
        self._collect(target, self.engine.now)
        target.next_n += 1
        handle = target.handle
        assert handle is not None
        target.handle = self.engine.at(
            target.first + target.next_n * target.interval, handle.action, priority=Priority.SCRAPE
        )

    def _collect(self, target: ScrapeTarget, now: float) -> None:
        self.scrapes += 1
        t_ms = round(now * 1000)
        backend = self.backend
        result = target.collect(now)
        keep = self.keep
        if keep is None or "up" in keep:
            if target.up_ref is None:
                target.up_ref = backend.series_ref({**target.labels, "__name__": "up"})
            backend.append_ref(target.up_ref, t_ms, 0.0 if result is None else 1.0)
        keys: Sequence[SeriesKey] = () if result is None else result[0]
        if keys is not target.last_keys:
            target.last_keys = keys
            target.pick = None
            if keep is not None:
                chosen = [i for i, key in enumerate(keys) if _name(key) in keep]
                if len(chosen) < len(keys):
                    keys = [keys[i] for i in chosen]
                    target.pick = _picker(chosen)
            refs = target.refs
            ref_list: list[Hashable] = []
            for key in keys:
                ref = refs.get(key)
                if ref is None:
                    ref = backend.series_ref(target.merged(key))
                    refs[key] = ref
                ref_list.append(ref)
            seen = set(keys)
            for key in sorted(target.last - seen):
                backend.mark_stale_ref(refs[key], t_ms)
            target.last = seen
            target.last_refs = ref_list
        if result is not None and target.last_refs:
            values = result[1] if target.pick is None else target.pick(result[1])
            backend.append_scrape(target.last_refs, t_ms, values)


def _name(key: SeriesKey) -> str:
    for label, value in key:
        if label == "__name__":
            return value
    return ""


def _picker(indices: list[int]) -> Callable[[Sequence[float]], Sequence[float]]:
    if not indices:
        return lambda values: ()
    if len(indices) == 1:
        only = indices[0]
        return lambda values: (values[only],)
    getter: Callable[[Sequence[float]], Sequence[float]] = operator.itemgetter(*indices)
    return getter
