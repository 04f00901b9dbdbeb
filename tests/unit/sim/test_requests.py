"""The request path: FIFO slots, timeouts, waiting at the Service, replica loss, and what
a replica's /metrics reports. Arrivals are fixed (a trace) so every number is exact."""

from __future__ import annotations

import math

import pytest

from gpuscale.sim.load import TraceSource
from gpuscale.sim.requests import (
    DROPPED,
    SERVED,
    TIMED_OUT,
    UNFINISHED,
    ReplicaServer,
    Router,
)
from gpuscale.sim.specs import RequestCapacity
from gpuscale.sim.traces import parse_trace

BUCKETS = (1.0, 5.0)


def _router(
    times: list[float],
    *,
    concurrency: int = 1,
    service: float = 2.0,
    timeout: float = 60.0,
    tokens: str = "",
    **cap,
):  # type: ignore[no-untyped-def]
    text = "timestamp" + (",prompt_tokens,output_tokens" if tokens else "") + "\n"
    text += "".join(f"{t}{tokens}\n" for t in times)
    trace = parse_trace(text)
    offset = min(times)
    capacity = RequestCapacity(
        concurrency=concurrency, service_time_s=service, timeout_s=timeout, **cap
    )
    return Router(TraceSource(trace, start_s=offset), capacity, buckets=BUCKETS, seed=1)


def _server(name: str = "a", concurrency: int = 1) -> ReplicaServer:
    return ReplicaServer(name, concurrency, len(BUCKETS), 0.0)


def test_one_slot_is_a_fifo_queue() -> None:
    router = _router([0.0, 0.5, 1.0])
    server = _server()
    router.add_endpoint(server, 0.0)
    router.advance(1.0)
    assert server.snapshot(1.0, router.bounds) == (1, 2)
    assert server.snapshot(3.0, router.bounds) == (1, 1)  # first answered at 2.0
    assert server.snapshot(4.5, router.bounds) == (1, 0)
    log = router.finish(10.0, [server])
    assert log.latencies.tolist() == [2.0, 3.5, 5.0]
    assert log.outcomes.tolist() == [SERVED] * 3
    assert log.arrivals.tolist() == [0.0, 0.5, 1.0]


def test_concurrency_serves_in_parallel_and_the_histogram_counts_answers() -> None:
    router = _router([0.0, 0.0, 0.0], concurrency=2)
    server = _server(concurrency=2)
    router.add_endpoint(server, 0.0)
    router.advance(0.0)
    assert server.snapshot(1.0, router.bounds) == (2, 1)
    assert server.snapshot(10.0, router.bounds) == (0, 0)
    assert server.completed == 3
    assert server.latency_sum == 2.0 + 2.0 + 4.0
    assert server.histogram == [0, 3, 0]  # <=1, <=5, +Inf


def test_token_service_times() -> None:
    router = _router(
        [0.0],
        tokens=",1000,100",
        service=0.5,
        prefill_tokens_per_s=1000.0,
        decode_tokens_per_s=50.0,
    )
    server = _server()
    router.add_endpoint(server, 0.0)
    log = router.finish(10.0, [server])
    assert log.latencies.tolist() == [0.5 + 1.0 + 2.0]


def test_clients_time_out_waiting_or_abort_running_requests() -> None:
    router = _router([0.0, 0.1, 0.2], service=5.0, timeout=8.0)
    server = _server()
    router.add_endpoint(server, 0.0)
    log = router.finish(60.0, [server])
    # first answered at 5; second starts at 5, would end at 10 > 8.1: aborted at 8.1;
    # third would start at 8.1, ends 13.1 > 8.2: it cannot even finish in time
    assert log.outcomes.tolist() == [SERVED, TIMED_OUT, TIMED_OUT]
    assert math.isnan(log.latencies[1])


def test_requests_wait_at_the_service_until_a_replica_is_routable() -> None:
    router = _router([0.0, 10.0, 100.0], timeout=60.0)
    router.advance(65.0)
    assert len(router.waiting) == 2
    server = _server()
    router.add_endpoint(server, 65.0)  # the request from 0 s has timed out, the one from 10 s not
    log = router.finish(200.0, [server])
    assert log.outcomes.tolist() == [TIMED_OUT, SERVED, SERVED]
    assert log.latencies[1] == pytest.approx(57.0)


def test_a_replica_that_goes_away_drops_what_it_has_not_answered() -> None:
    router = _router([0.0, 0.1, 0.2, 20.0])
    server = _server()
    router.add_endpoint(server, 0.0)
    router.advance(1.0)
    router.remove_endpoint(server)
    assert router.drain_end(server) == 6.0
    router.retire(server, 3.0)
    log = router.finish(30.0, [])
    assert log.outcomes.tolist() == [SERVED, DROPPED, DROPPED, UNFINISHED]


def test_round_robin_alternates() -> None:
    trace = parse_trace("timestamp\n" + "".join(f"{t}\n" for t in range(4)))
    capacity = RequestCapacity(service_time_s=0.5)
    router = Router(TraceSource(trace), capacity, buckets=BUCKETS, seed=1, round_robin=True)
    a, b = _server("a"), _server("b")
    router.add_endpoint(a, 0.0)
    router.add_endpoint(b, 0.0)
    router.advance(10.0)
    a.snapshot(10.0, router.bounds)
    b.snapshot(10.0, router.bounds)
    assert (a.completed, b.completed) == (2, 2)


def test_random_spread_is_deterministic_per_seed() -> None:
    times = [i * 0.01 for i in range(2000)]

    def split(seed: int) -> tuple[int, int]:
        trace = parse_trace("timestamp\n" + "".join(f"{t}\n" for t in times))
        router = Router(
            TraceSource(trace), RequestCapacity(service_time_s=0.001), buckets=BUCKETS, seed=seed
        )
        a, b = _server("a"), _server("b")
        router.add_endpoint(a, 0.0)
        router.add_endpoint(b, 0.0)
        router.advance(30.0)
        a.snapshot(30.0, router.bounds)
        b.snapshot(30.0, router.bounds)
        return a.completed, b.completed

    assert split(1) == split(1)
    first, second = split(1)
    assert first + second == 2000
    assert 850 < first < 1150


def test_utilisation_is_the_busy_fraction_of_the_window() -> None:
    router = _router([0.0, 10.0], service=0.5)
    server = _server()
    router.add_endpoint(server, 0.0)
    router.advance(10.0)
    assert server.utilisation(0.25, 1.0) == pytest.approx(0.25)
    assert server.utilisation(0.75, 1.0) == pytest.approx(0.5)
    assert server.utilisation(5.0, 1.0) == 0.0
    assert server.utilisation(10.5, 1.0) == pytest.approx(0.5)


def test_token_rates_need_tokens_or_a_service_time() -> None:
    trace = parse_trace("timestamp\n0\n")
    capacity = RequestCapacity(prefill_tokens_per_s=100.0, decode_tokens_per_s=10.0)
    with pytest.raises(ValueError, match="no token counts"):
        Router(TraceSource(trace), capacity, buckets=BUCKETS, seed=1)
