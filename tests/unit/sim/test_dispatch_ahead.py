"""The router's fast path changes nothing: dispatching the rest of a window ahead (taken
back when the replicas routed to change) and serving a replica's requests with numpy give
what dispatching exactly to each instant, one request at a time, gives — the same
snapshots, utilisation, drain ends and request log, on random arrivals, capacities and
sequences of scrapes and replica changes (``gpuscale.sim.requests``)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.sim.load import TraceSource
from gpuscale.sim.requests import ReplicaServer, RequestLog, Router
from gpuscale.sim.specs import RequestCapacity
from gpuscale.sim.traces import parse_trace

BUCKETS = (0.5, 2.0, 10.0)


class _OneByOne(Router):
    """The reference path: every arrival dispatched when ``now`` reaches it, and every
    request served one by one."""

    def advance(self, t: float) -> None:
        if t < self.now:
            return
        self._dispatch_due(t)
        self.now = t

    def _serve_at_once(self, *_columns: object) -> int:  # type: ignore[override]
        return 0


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
    prompts = [works[k % len(works)] for k in range(len(times))]
    text = "timestamp,prompt_tokens,output_tokens\n"
    text += "".join(f"{t!r},{int(p * 10)},0\n" for t, p in zip(times, prompts, strict=True))
    trace = parse_trace(text)
    times = trace.offsets.tolist()  # the trace starts at its first request
    capacity = RequestCapacity(
        concurrency=concurrency,
        prefill_tokens_per_s=10.0,
        decode_tokens_per_s=1.0,
        timeout_s=timeout,
    )
    fast = Router(TraceSource(trace), capacity, buckets=BUCKETS, seed=seed, round_robin=round_robin)
    slow = _OneByOne(
        TraceSource(trace), capacity, buckets=BUCKETS, seed=seed, round_robin=round_robin
    )
    routers = (fast, slow)
    routed: list[list[ReplicaServer]] = [[], []]
    removed: list[list[ReplicaServer]] = [[], []]
    now = 0.0
    made = 0
    for gap, op in [(0.0, "add"), *ops]:
        now += gap
        for router, live, out in zip(routers, routed, removed, strict=True):
            router.advance(now)
            if op == "add":
                server = router.new_server(f"r{made}", now + gap / 4)
                router.add_endpoint(server, now)
                live.append(server)
            elif op == "remove" and live:
                server = live.pop(0)
                router.remove_endpoint(server)
                server.gone_at = router.drain_end(server)  # read after taking back
                out.append(server)
            elif op == "retire" and out:
                router.retire(out.pop(0), now)
        made += op == "add"
        seen = []
        for router, live, out in zip(routers, routed, removed, strict=True):
            assert router.arrived == sum(1 for t in times if t <= now)
            view = []
            for server in live + out:
                if op == "util":
                    view.append(server.utilisation(now, 30.0))
                else:
                    counts = server.snapshot(now, router.bounds, latencies=latencies)
                    view.append(
                        (counts, server.completed, server.latency_sum, list(server.histogram))
                    )
            seen.append([*view, [s.gone_at for s in out]])
        assert seen[0] == seen[1]
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
