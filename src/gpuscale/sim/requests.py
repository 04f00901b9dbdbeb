"""Requests through a Service to replicas that queue and serve them: the request-level
workload model, built for millions of requests.

**Model.** Each ready replica is a FIFO queue in front of ``concurrency`` slots; a
request occupies a slot for its service time (fixed, or from its prompt and output
tokens: ``service_time_s + prompt/prefill_rate + output/decode_rate``). The Service
spreads requests over the replicas it routes to (ready pods, after the endpoint
propagation delay) uniformly at random per request — kube-proxy's iptables mode picks
an endpoint at random per connection, and we assume one connection per request — or in
round-robin order (IPVS ``rr``). With no replica to route to, requests wait at the
Service and are handed out when one appears. A client gives up ``timeout_s`` after
sending: a request not started by then never runs; one still running then is aborted
and frees its slot. A replica that goes away (its pod deleted) finishes what it has
until its process exits; requests still unanswered then fail.

**Speed.** Arrivals are not events. The engine calls :meth:`Router.advance` before
anything that depends on the replicas (a scrape, a change in the set of replicas), and
the router dispatches every arrival up to that instant in one tight loop: with FIFO
slots the start and end of a request are known when it arrives (a heap of the times the
slots free up), so each request costs one heap operation and a few list appends.
Each request is logged when it is dispatched, in arrival order (its answer time is
known then); the log is corrected if its replica goes away first. Completions are
counted lazily for the replica's counter and histogram when it is scraped.
"""

from __future__ import annotations

import array
import bisect
import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuscale.sim.load import WINDOW_S, ArrivalSource, TraceSource
from gpuscale.sim.specs import RequestCapacity

__all__ = [
    "DROPPED",
    "SERVED",
    "TIMED_OUT",
    "UNFINISHED",
    "ArrivalWindows",
    "ReplicaServer",
    "RequestLog",
    "Router",
]

SERVED = 0
"""Outcome: answered (late or not is the latency target's business)."""
TIMED_OUT = 1
"""Outcome: the client gave up (not started, or still running, ``timeout_s`` after sending)."""
DROPPED = 2
"""Outcome: the replica went away before answering."""
UNFINISHED = 3
"""Outcome: still waiting or running when the run ended."""


@dataclass(frozen=True, eq=False)
class RequestLog:
    """Every request of a workload, in arrival order: arrival, end-to-end latency (NaN
    unless served) and outcome; for a ``vllm`` workload also its time to first token,
    mean inter-token latency and queue time (``gpuscale.sim.serving``; NaN where the
    request never got that far)."""

    arrivals: npt.NDArray[np.float64]
    latencies: npt.NDArray[np.float64]
    outcomes: npt.NDArray[np.int8]
    ttft: npt.NDArray[np.float64] | None = None
    """Seconds from arrival to the first token (``vllm`` workloads; else ``None``)."""
    itl: npt.NDArray[np.float64] | None = None
    """Mean seconds between the request's tokens after the first (vLLM's per-request
    TPOT; NaN for one-token answers)."""
    queue_time: npt.NDArray[np.float64] | None = None
    """Seconds from arrival to first scheduled by the engine."""

    def __len__(self) -> int:
        return int(self.arrivals.shape[0])

    def count(self, outcome: int) -> int:
        """Requests with ``outcome``."""
        return int(np.count_nonzero(self.outcomes == outcome))

    def attained(
        self,
        *,
        ttft_s: float | None = None,
        itl_s: float | None = None,
        e2e_s: float | None = None,
    ) -> float:
        """Fraction of all requests served within every bound given (SLO attainment): a
        request timed out, dropped or unfinished misses; a one-token answer has no ITL and
        meets an ITL bound. TTFT/ITL bounds need a ``vllm`` workload's log. 1.0 when
        there are no requests."""
        if not len(self):
            return 1.0
        ok = self.outcomes == SERVED
        for bound, column, name in (
            (ttft_s, self.ttft, "ttft"),
            (itl_s, self.itl, "itl"),
            (e2e_s, self.latencies, "e2e"),
        ):
            if bound is None:
                continue
            if column is None:
                raise ValueError(f"this log has no {name} (not a serving.kind vllm workload)")
            within = column <= bound
            if name == "itl":
                within |= np.isnan(column)
            ok &= within
        return float(np.count_nonzero(ok)) / len(self)


class ReplicaServer:
    """One replica's queue and slots, and what its ``/metrics`` reports."""

    stopped_at = math.inf
    """Never set: the queue model's replica drains after SIGTERM (the gpuscale app does)."""

    __slots__ = (
        "accepting",
        "busy",
        "completed",
        "free",
        "gone_at",
        "histogram",
        "latency_sum",
        "name",
        "pending",
    )

    def __init__(self, name: str, concurrency: int, buckets: int, start: float) -> None:
        self.name = name
        self.free = [start] * concurrency
        self.pending: list[tuple[float, float, float, int]] = []
        """(end, start, arrival, log index) of requests not yet counted as answered."""
        self.busy: deque[tuple[float, float, float, int]] = deque()
        """The same tuples for recent requests (aborted ones end at their deadline)."""
        self.completed = 0
        self.latency_sum = 0.0
        self.histogram = [0] * (buckets + 1)
        self.accepting = True
        self.gone_at = math.inf

    def snapshot(self, t: float, bounds: list[float], *, latencies: bool = True) -> tuple[int, int]:
        """Count requests answered by ``t``; return (in flight, queued) at ``t``.

        ``latencies=False`` skips the latency histogram and sum (when nothing reads them);
        the answered count is kept either way."""
        if not latencies:
            pending = self.pending
            still = [entry for entry in pending if entry[0] > t]
            self.completed += len(pending) - len(still)
            running = sum(1 for entry in still if entry[1] <= t)
            pending[:] = still
            return running, len(still) - running
        in_flight = queued = completed = 0
        total = 0.0
        keep: list[tuple[float, float, float, int]] = []
        histogram = self.histogram
        bisect_left = bisect.bisect_left
        for entry in self.pending:
            end = entry[0]
            if end <= t:
                latency = end - entry[2]
                completed += 1
                total += latency
                histogram[bisect_left(bounds, latency)] += 1
            else:
                keep.append(entry)
                if entry[1] <= t:
                    in_flight += 1
                else:
                    queued += 1
        self.pending[:] = keep
        self.completed += completed
        self.latency_sum += total
        return in_flight, queued

    def utilisation(self, t: float, window: float) -> float:
        """Fraction of ``[t - window, t]`` with at least one request running."""
        low = t - window
        busy = self.busy
        while busy and busy[0][0] <= low:
            busy.popleft()
        covered = 0.0
        run_start = run_end = -math.inf
        for entry in busy:
            start = entry[1]
            if start >= t:
                break
            s = start if start > low else low
            e = entry[0] if entry[0] < t else t
            if e <= s:
                continue
            if s > run_end:
                if run_end > run_start:
                    covered += run_end - run_start
                run_start, run_end = s, e
            elif e > run_end:
                run_end = e
        if run_end > run_start:
            covered += run_end - run_start
        return covered / window


class ArrivalWindows:
    """The cursor both routers keep over their source's windows of arrivals
    (:data:`~gpuscale.sim.load.WINDOW_S` each): :meth:`_dispatch_due` hands every arrival
    at or before ``t`` to the router's ``_dispatch``, loading windows as it reaches them.
    A router sets ``_times`` (the loaded window's arrival times), ``_i`` (the next one)
    and ``_window``, and loads a window in ``_next_window``."""

    _times: list[float]
    _i: int
    _window: int

    def _next_window(self) -> None:
        raise NotImplementedError

    def _dispatch(self, i: int, j: int) -> None:
        raise NotImplementedError

    def _dispatch_due(self, t: float) -> None:
        while True:
            if self._i >= len(self._times):
                if (self._window + 1) * WINDOW_S > t:
                    return
                self._next_window()
                continue
            times = self._times
            j = bisect.bisect_right(times, t, self._i)
            if j > self._i:
                self._dispatch(self._i, j)
                self._i = j
            if j < len(times):
                return


class Router(ArrivalWindows):
    """A workload's Service: arrivals in, dispatched to the replicas it routes to."""

    def __init__(
        self,
        source: ArrivalSource,
        capacity: RequestCapacity,
        *,
        buckets: tuple[float, ...],
        seed: int,
        round_robin: bool = False,
        track_busy: bool = True,
    ) -> None:
        if capacity.uses_tokens and not source.has_tokens and capacity.service_time_s is None:
            raise ValueError(
                "the load has no token counts but the capacity gives only token rates; "
                "set capacity.service_time_s"
            )
        self.source = source
        self.capacity = capacity
        self.bounds = list(buckets)
        self.endpoints: list[ReplicaServer] = []
        self.waiting: deque[tuple[float, float]] = deque()
        self.latencies = array.array("d")
        """Per request in arrival order: its latency, NaN unless served."""
        self.exceptions: dict[int, int] = {}
        """Log index → outcome, for requests not served."""
        self._consumed: list[npt.NDArray[np.float64]] = []
        self._bound: (
            tuple[
                list[list[float]], list[float], list[Callable[..., None]], list[Callable[..., None]]
            ]
            | None
        ) = None
        self.arrived = 0
        self._rng = np.random.default_rng(seed)
        self._round_robin = round_robin
        self._track_busy = track_busy
        """Keep each replica's recent run times (for GPU utilisation); off when nothing reads
        utilisation, which spares the memory of every request's timing."""
        self._rr = 0
        self._window = -1
        self._times: list[float] = []
        self._service: list[float] = []
        self._draws: npt.NDArray[np.float64] = np.zeros(0)
        self._i = 0
        self.now = 0.0

    def _service_times(
        self, prompt: npt.NDArray[np.int64], output: npt.NDArray[np.int64]
    ) -> list[float]:
        cap = self.capacity
        base = cap.service_time_s or 0.0
        if cap.uses_tokens and self.source.has_tokens:
            assert cap.prefill_tokens_per_s is not None
            assert cap.decode_tokens_per_s is not None
            times = base + prompt / cap.prefill_tokens_per_s + output / cap.decode_tokens_per_s
            result: list[float] = times.tolist()
            return result
        return [base] * len(prompt)

    def _next_window(self) -> None:
        self._window += 1
        arrivals = self.source.window(self._window)
        self._consumed.append(arrivals.times)
        self._times = arrivals.times.tolist()
        self._service = self._service_times(arrivals.prompt_tokens, arrivals.output_tokens)
        self._draws = self._rng.random(len(self._times))
        self._i = 0

    def advance(self, t: float) -> None:
        """Dispatch every arrival at or before ``t``."""
        if t < self.now:
            return
        self._dispatch_due(t)
        self.now = t

    def _log(self, latency: float, outcome: int) -> int:
        index = len(self.latencies)
        self.latencies.append(latency)
        if outcome != SERVED:
            self.exceptions[index] = outcome
        return index

    def _dispatch(self, i: int, j: int) -> None:
        # Requests are logged in arrival order, so a request's log index is its position.
        times, service = self._times, self._service
        self.arrived += j - i
        endpoints = self.endpoints
        count = len(endpoints)
        if count == 0:
            self.waiting.extend(zip(times[i:j], service[i:j], strict=True))
            return
        timeout = self.capacity.timeout_s
        latencies = self.latencies
        log = latencies.append
        exceptions = self.exceptions
        n = len(latencies)
        bound = self._bound
        if bound is None:
            bound = self._bound = (
                [s.free for s in endpoints],
                [s.gone_at for s in endpoints],
                [s.pending.append for s in endpoints],
                [s.busy.append for s in endpoints],
            )
        heaps, gone, pending, busy = bound
        track = self._track_busy
        replace = heapq.heapreplace
        nan = math.nan
        if self._round_robin:
            first_rr = self._rr
            targets = [(first_rr + m) % count for m in range(j - i)]
            self._rr = first_rr + (j - i)
        else:
            targets = (self._draws[i:j] * count).astype(np.intp).tolist()
        # a replica that went away drops what reaches it; while none has, skip the test
        last_gone = min(gone)
        for arrival, work, idx in zip(times[i:j], service[i:j], targets, strict=True):
            if arrival >= last_gone and arrival >= gone[idx]:
                log(nan)
                exceptions[n] = DROPPED
                n += 1
                continue
            free = heaps[idx]
            first = free[0]
            start = arrival if arrival > first else first
            deadline = arrival + timeout
            if start >= deadline:
                log(nan)
                exceptions[n] = TIMED_OUT
                n += 1
                continue
            end = start + work
            if end > deadline:
                replace(free, deadline)
                if track:
                    busy[idx]((deadline, start, arrival, -1))
                log(nan)
                exceptions[n] = TIMED_OUT
                n += 1
                continue
            replace(free, end)
            entry = (end, start, arrival, n)
            pending[idx](entry)
            if track:
                busy[idx](entry)
            log(end - arrival)
            n += 1

    def _offer_waiting(self, now: float) -> None:
        timeout = self.capacity.timeout_s
        waiting, self.waiting = self.waiting, deque()
        count = len(self.endpoints)
        for arrival, service in waiting:
            deadline = arrival + timeout
            if now >= deadline:
                self._log(math.nan, TIMED_OUT)
                continue
            if self._round_robin:
                server = self.endpoints[self._rr % count]
                self._rr += 1
            else:
                server = self.endpoints[int(self._rng.random() * count)]
            free = server.free
            start = max(now, free[0])
            if start >= deadline:
                self._log(math.nan, TIMED_OUT)
                continue
            end = start + service
            if end > deadline:
                heapq.heapreplace(free, deadline)
                if self._track_busy:
                    server.busy.append((deadline, start, arrival, -1))
                self._log(math.nan, TIMED_OUT)
                continue
            heapq.heapreplace(free, end)
            entry = (end, start, arrival, self._log(end - arrival, SERVED))
            server.pending.append(entry)
            if self._track_busy:
                server.busy.append(entry)

    def new_server(self, name: str, start: float) -> ReplicaServer:
        """The queue and slots of a replica that serves from ``start``."""
        return ReplicaServer(name, self.capacity.concurrency, len(self.bounds), start)

    def terminate(self, server: ReplicaServer, now: float) -> None:
        """The replica's process gets SIGTERM: it finishes what it holds (see
        :meth:`drain_end`), so nothing changes here."""

    def add_endpoint(self, server: ReplicaServer, now: float) -> None:
        """Start routing to ``server`` at ``now`` (call after :meth:`advance` to ``now``)."""
        self.endpoints.append(server)
        self._bound = None
        if self.waiting:
            self._offer_waiting(now)

    def remove_endpoint(self, server: ReplicaServer) -> None:
        """Stop routing to ``server`` (call after :meth:`advance` to now)."""
        if server in self.endpoints:
            self.endpoints.remove(server)
            self._bound = None
        server.accepting = False

    def drain_end(self, server: ReplicaServer) -> float:
        """When ``server`` has answered everything it was given (its last slot frees up)."""
        return max(server.free)

    def retire(self, server: ReplicaServer, gone_at: float) -> None:
        """The replica's process ended at ``gone_at``: unanswered requests fail."""
        server.gone_at = gone_at
        for end, _start, _arrival, index in server.pending:
            if end > gone_at:
                self.latencies[index] = math.nan
                self.exceptions[index] = DROPPED
        server.pending.clear()
        self._bound = None

    def finish(self, t: float, servers: list[ReplicaServer]) -> RequestLog:
        """End of the run at ``t``: account everything and return the log."""
        self.advance(t)
        for server in servers:
            for end, _start, _arrival, index in server.pending:
                if end > t:
                    self.latencies[index] = math.nan
                    self.exceptions[index] = UNFINISHED
            server.pending.clear()
        timeout = self.capacity.timeout_s
        for arrival, _service in self.waiting:
            self._log(math.nan, TIMED_OUT if t >= arrival + timeout else UNFINISHED)
        self.waiting = deque()
        count = len(self.latencies)
        if isinstance(self.source, TraceSource):
            # the windows read so far are one slice of the trace's times: no copy
            consumed = self.source.times[:count]
        elif self._consumed:
            consumed = np.concatenate(self._consumed)
        else:
            consumed = np.zeros(0, dtype=np.float64)
        outcomes = np.zeros(count, dtype=np.int8)
        if self.exceptions:
            indices = np.fromiter(self.exceptions.keys(), dtype=np.int64)
            outcomes[indices] = np.fromiter(self.exceptions.values(), dtype=np.int8)
        # the log reads the latencies' buffer (no copy: 27 MB for a week of the conv trace);
        # while it does, the array cannot grow (a later append would raise BufferError)
        return RequestLog(
            consumed[:count].astype(np.float64, copy=False),
            np.frombuffer(self.latencies, dtype=np.float64),
            outcomes,
        )
