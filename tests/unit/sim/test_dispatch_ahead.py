"""The router's fast path changes nothing: dispatching the rest of a window ahead (taken
back when the replicas routed to change) and serving a replica's requests with numpy give
what dispatching exactly to each instant, one request at a time, gives — the same
snapshots, utilisation, drain ends and request log, on random arrivals, capacities and
sequences of scrapes and replica changes (``gpuscale.sim.requests``). The second test
draws backlogged replicas (thousands of requests, long service, short timeouts) and
requests waiting at the Service for a first replica."""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.sim.load import TraceSource
from gpuscale.sim.requests import SERVED, TIMED_OUT, ReplicaServer, RequestLog, Router
from gpuscale.sim.specs import RequestCapacity
from gpuscale.sim.traces import parse_trace

BUCKETS = (0.5, 2.0, 10.0)


class _OneByOne(Router):
    """The reference path: every arrival dispatched when ``now`` reaches it, every request
    served one by one, and the requests that waited for a replica handed out one at a
    time (the rule as first written, apart from the router's one-by-one routine)."""

    def advance(self, t: float) -> None:
        if t < self.now:
            return
        self._dispatch_due(t)
        self.now = t

    def _serve_at_once(self, *_columns: object) -> int:  # type: ignore[override]
        return 0

    def _offer_waiting(self, now: float) -> None:
        waiting, self.waiting = self.waiting, deque()
        count = len(self.endpoints)
        for arrival, work in waiting:
            deadline = arrival + self.capacity.timeout_s
            if now >= deadline:
                self._log(math.nan, TIMED_OUT)
                continue
            if self._round_robin:
                server = self.endpoints[self._rr % count]
                self._rr += 1
            else:
                server = self.endpoints[int(self._rng.random() * count)]
            start = max(now, server.free[0])
            if start >= deadline:
                self._log(math.nan, TIMED_OUT)
                continue
            end = start + work
            if end > deadline:
                heapq.heapreplace(server.free, deadline)
                if self._track_busy:
                    server.busy.append((deadline, start, arrival, -1))
                self._log(math.nan, TIMED_OUT)
                continue
            heapq.heapreplace(server.free, end)
            index = self._log(end - arrival, SERVED)
            server.add(
                np.array([arrival]),
                np.array([start]),
                np.array([end]),
                np.array([index]),
                np.array([end - arrival]),
            )
            if self._track_busy:
                server.busy.append((end, start, arrival, index))


_OPS = st.lists(
    st.tuples(
        st.floats(0.0, 120.0, allow_nan=False),
        st.sampled_from(["scrape", "scrape", "scrape", "add", "remove", "retire", "util"]),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    gaps=st.lists(st.floats(0.0, 30.0, allow_nan=False), min_size=1, max_size=300),
    works=st.lists(st.sampled_from([0.0, 0.2, 1.0, 3.0, 7.5, 40.0]), min_size=1, max_size=300),
    concurrency=st.integers(1, 4),
    timeout=st.sampled_from([5.0, 30.0, 600.0]),
    round_robin=st.booleans(),
    latencies=st.booleans(),
    ops=_OPS,
    seed=st.integers(0, 2**16),
)
def test_dispatching_ahead_and_at_once_equals_one_by_one(  # noqa: PLR0917 - drawn inputs
    gaps: list[float],
    works: list[float],
    concurrency: int,
    timeout: float,
    round_robin: bool,
    latencies: bool,
    ops: list[tuple[float, str]],
    seed: int,
) -> None:
    times = np.cumsum(gaps).tolist()
    capacity = RequestCapacity(
        concurrency=concurrency,
        prefill_tokens_per_s=10.0,
        decode_tokens_per_s=1.0,
        timeout_s=timeout,
    )
    _compare(times, works, capacity, [(0.0, "add"), *ops], seed=seed, rr=round_robin, lat=latencies)


_MORE_OPS = st.lists(
    st.tuples(
        st.one_of(st.floats(0.0, 400.0), st.sampled_from([0.0, 1.0, 600.0])),
        st.sampled_from(
            [
                "scrape",
                "scrape",
                "add",
                "add_ready",
                "add_late",
                "remove",
                "retire",
                "retire_live",
                "drain",
                "util",
            ]
        ),
    ),
    max_size=30,
)


@settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    n=st.integers(1, 3000),
    mean_gap=st.sampled_from([0.05, 0.3, 1.0, 5.0]),
    trace_seed=st.integers(0, 10**6),
    works=st.lists(
        st.sampled_from([0.0, 0.1, 0.2, 1.0, 3.0, 7.5, 40.0, 1000.0]), min_size=1, max_size=50
    ),
    base=st.sampled_from([None, 0.5, 2.0]),
    concurrency=st.integers(1, 6),
    timeout=st.sampled_from([0.5, 5.0, 30.0, 600.0, 3600.0]),
    first_replica=st.sampled_from([0.0, 5.0, 30.0, 600.0]),
    round_robin=st.booleans(),
    latencies=st.booleans(),
    track=st.booleans(),
    ops=_MORE_OPS,
    seed=st.integers(0, 2**16),
)
def test_backlogs_and_cold_starts_equal_one_by_one(  # noqa: PLR0917 - drawn inputs
    n: int,
    mean_gap: float,
    trace_seed: int,
    works: list[float],
    base: float | None,
    concurrency: int,
    timeout: float,
    first_replica: float,
    round_robin: bool,
    latencies: bool,
    track: bool,
    ops: list[tuple[float, str]],
    seed: int,
) -> None:
    draw = np.random.default_rng(trace_seed)
    gaps = draw.exponential(mean_gap, n)
    gaps[draw.random(n) < 0.1] = 0.0  # bursts of simultaneous arrivals
    capacity = RequestCapacity(
        concurrency=concurrency,
        prefill_tokens_per_s=10.0,
        decode_tokens_per_s=1.0,
        timeout_s=timeout,
        service_time_s=base,
    )
    _compare(
        np.round(np.cumsum(gaps), 3).tolist(),
        works,
        capacity,
        [(first_replica, "add_ready"), *ops],
        seed=seed,
        rr=round_robin,
        lat=latencies,
        track=track,
    )


_STARTS: dict[str, Callable[[float], float]] = {
    "add": lambda gap: gap / 4,
    "add_ready": lambda gap: -gap / 4,  # Ready before its endpoint propagated, as in World
    "add_late": lambda _gap: 50.0,
}
"""A replica added serves from ``now`` plus this (of the gap since the last action)."""


def _compare(
    times: list[float],
    works: list[float],
    capacity: RequestCapacity,
    ops: list[tuple[float, str]],
    *,
    seed: int,
    rr: bool,
    lat: bool,
    track: bool = True,
) -> None:
    """Replay ``ops`` (a gap to the last one, then an action) on both routers, comparing
    what every replica shows after each, then the logs."""
    text = "timestamp,prompt_tokens,output_tokens\n"
    text += "".join(f"{t!r},{int(works[k % len(works)] * 10)},0\n" for k, t in enumerate(times))
    trace = parse_trace(text)
    times = trace.offsets.tolist()  # the trace starts at its first request
    routers = [
        kind(
            TraceSource(trace),
            capacity,
            buckets=BUCKETS,
            seed=seed,
            round_robin=rr,
            track_busy=track,
        )
        for kind in (Router, _OneByOne)
    ]
    routed: list[list[ReplicaServer]] = [[], []]
    removed: list[list[ReplicaServer]] = [[], []]
    now = 0.0
    made = 0
    for gap, op in ops:
        now += gap
        for router, live, out in zip(routers, routed, removed, strict=True):
            router.advance(now)
            if op in _STARTS:
                server = router.new_server(f"r{made}", now + _STARTS[op](gap))
                router.add_endpoint(server, now)
                live.append(server)
            elif op == "remove" and live:
                server = live.pop(0)
                router.remove_endpoint(server)
                server.gone_at = router.drain_end(server)  # read after taking back
                out.append(server)
            elif op == "retire" and out:
                router.retire(out.pop(0), now)
            elif op == "retire_live" and live:
                router.retire(live[0], now)
            elif op == "drain" and live:
                router.drain_end(live[-1])
        made += op in _STARTS
        seen = []
        for router, live, out in zip(routers, routed, removed, strict=True):
            assert router.arrived == sum(1 for t in times if t <= now)
            view = []
            for server in live + out:
                if op == "util" and track:
                    view.append(server.utilisation(now, 30.0))
                else:
                    counts = server.snapshot(now, router.bounds, latencies=lat)
                    view.append(
                        (counts, server.completed, server.latency_sum, list(server.histogram))
                    )
            seen.append([*view, [s.gone_at for s in out]])
        assert seen[0] == seen[1], (op, now)
    end = now + 1000.0
    logs = [
        router.finish(end, live + out)
        for router, live, out in zip(routers, routed, removed, strict=True)
    ]
    _same_log(*logs)


def _same_log(a: RequestLog, b: RequestLog) -> None:
    assert a.arrivals.tolist() == b.arrivals.tolist()
    assert a.outcomes.tolist() == b.outcomes.tolist()
    for x, y in zip(a.latencies.tolist(), b.latencies.tolist(), strict=True):
        assert x == y or (math.isnan(x) and math.isnan(y))
