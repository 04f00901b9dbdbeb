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
anything that depends on the replicas (a scrape, a change in the set of replicas); with
FIFO slots the start and end of a request are known when it arrives (the times the slots
free up), so the router dispatches a whole window of arrivals at once, ahead of ``now``
(:class:`Router` says how that stays exact), mostly with numpy. Each request is logged
when it is dispatched, in arrival order (its answer time is known then); the log is
corrected if its replica goes away first. A replica holds its requests as columns and
counts completions lazily for its counter and histogram when it is scraped.
"""

from __future__ import annotations

import array
import bisect
import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuscale.sim.load import WINDOW_S, ArrivalSource, TraceSource
from gpuscale.sim.replica import ReplicaServer
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


class ArrivalWindows:
    """The cursor both routers keep over their source's windows of arrivals
    (:data:`~gpuscale.sim.load.WINDOW_S` each): :meth:`_dispatch_due` hands every arrival
    at or before ``t`` to the router's ``_dispatch``, loading windows as it reaches them.
    A router sets ``_times`` (the loaded window's arrival times), ``_i`` (the next one)
    and ``_window``, and loads a window in ``_next_window``."""

    _times: list[float] | npt.NDArray[np.float64]
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


_ONE_BY_ONE = 64
"""Requests served one by one after one that waits for a slot (or times out, or meets
its replica gone), before trying at once again (on that many, doubled while served
whole); doubled while numpy serves none between, up to :data:`_ONE_BY_ONE_MOST`."""

_ONE_BY_ONE_MOST = 4096
"""The most requests served one by one before trying at once again (what a replica's
backlog clearing can leave to the slow path: a few milliseconds)."""


class _Ahead:
    """The arrivals of the loaded window dispatched beyond ``now`` (from window position
    ``start`` on), and what taking them back needs: each replica's slots before them, the
    log index and round-robin count they began at, and per request its replica, the time
    it put into that replica's slots (NaN when none) and its latency (NaN unless
    served)."""

    __slots__ = ("heaps", "inserted", "latencies", "log_start", "rr", "start", "targets")

    def __init__(self, start: int, log_start: int, rr: int, heaps: list[list[float]]) -> None:
        self.start = start
        self.log_start = log_start
        self.rr = rr
        self.heaps = heaps
        self.targets: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        self.inserted: npt.NDArray[np.float64] = np.zeros(0)
        self.latencies: npt.NDArray[np.float64] = np.zeros(0)


class Router(ArrivalWindows):
    """A workload's Service: arrivals in, dispatched to the replicas it routes to.

    **Dispatching ahead.** With replicas to route to, :meth:`advance` dispatches the whole
    rest of the loaded window at once (the arrivals after ``now`` included): nothing but
    a change of the replicas routed to (:meth:`add_endpoint`, :meth:`remove_endpoint`,
    :meth:`retire` of one still routed to) alters where and when those requests run, and
    each such change first takes back the requests that arrive after ``now``
    (:meth:`_settle`). A replica's
    :meth:`~ReplicaServer.snapshot` at ``t`` reads only requests that arrived by ``t``.
    A window's requests are served replica by replica (each replica's slots see only its
    own requests, in arrival order), with numpy when no request of the replica waits for a
    slot, times out or meets the replica gone (:meth:`_serve_at_once`), else one by one
    (:meth:`_serve_each`)."""

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
        """Per request in arrival order: its latency, NaN unless served (requests
        dispatched ahead included)."""
        self.exceptions: dict[int, int] = {}
        """Log index → outcome, for requests not served."""
        self._consumed: list[npt.NDArray[np.float64]] = []
        self._dispatched = 0
        self._rng = np.random.default_rng(seed)
        self._round_robin = round_robin
        self._track_busy = track_busy
        """Keep each replica's recent run times (for GPU utilisation); off when nothing reads
        utilisation, which spares the memory of every request's timing."""
        self._rr = 0
        self._window = -1
        self._times: npt.NDArray[np.float64] = np.zeros(0)
        """The loaded window's arrivals (searched with ``bisect`` like the engine router's
        list, without a Python float for each)."""
        self._service: npt.NDArray[np.float64] = np.zeros(0)
        self._draws: npt.NDArray[np.float64] = np.zeros(0)
        self._i = 0
        self._ahead: _Ahead | None = None
        self.now = 0.0

    @property
    def arrived(self) -> int:
        """Requests arrived by ``now``."""
        ahead = self._ahead
        if ahead is None:
            return self._dispatched
        due = bisect.bisect_right(self._times, self.now, ahead.start, self._i)
        return self._dispatched - (self._i - due)

    def _service_times(
        self, prompt: npt.NDArray[np.int64], output: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float64]:
        cap = self.capacity
        base = cap.service_time_s or 0.0
        if cap.uses_tokens and self.source.has_tokens:
            assert cap.prefill_tokens_per_s is not None
            assert cap.decode_tokens_per_s is not None
            times: npt.NDArray[np.float64] = (
                base + prompt / cap.prefill_tokens_per_s + output / cap.decode_tokens_per_s
            )
            return times
        return np.full(len(prompt), base)

    def _next_window(self) -> None:
        self._window += 1
        arrivals = self.source.window(self._window)
        self._consumed.append(arrivals.times)
        self._times = arrivals.times
        self._service = self._service_times(arrivals.prompt_tokens, arrivals.output_tokens)
        self._draws = self._rng.random(len(self._times))
        self._i = 0

    def advance(self, t: float) -> None:
        """Dispatch every arrival at or before ``t`` (and, with replicas to route to, the
        rest of its window ahead)."""
        if t < self.now:
            return
        if self._ahead is not None:
            if t < (self._window + 1) * WINDOW_S:
                self.now = t
                return
            self._ahead = None  # all of it has arrived by t
        self._dispatch_due(t)
        end = len(self._times)
        if self.endpoints and self._i < end:
            start = self._i
            self._ahead = _Ahead(
                start, len(self.latencies), self._rr, [list(s.free) for s in self.endpoints]
            )
            self._dispatch(start, end)
            self._i = end
        self.now = t

    def _settle(self) -> None:
        """Take back the requests dispatched ahead that arrive after ``now``: they leave
        the log, their replicas' columns and the slots, which hold again the latest
        of the slots before and the times the requests kept put in (a slot taken always
        frees at or after the earliest free one it replaced, so the slots are the
        ``concurrency`` latest of those)."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        now = self.now
        kept = bisect.bisect_right(self._times, now, ahead.start, self._i) - ahead.start
        undone = self._i - ahead.start - kept
        if not undone:
            return
        targets, inserted = ahead.targets[:kept], ahead.inserted[:kept]
        first = ahead.log_start + kept
        for index, (server, before) in enumerate(zip(self.endpoints, ahead.heaps, strict=True)):
            put = inserted[targets == index]
            slots = sorted(before + put[~np.isnan(put)].tolist())
            server.free[:] = slots[len(slots) - len(before) :]
            server.take_back(now, first)
        del self.latencies[first:]
        exceptions = self.exceptions
        for index in (np.flatnonzero(np.isnan(ahead.latencies[kept:])) + first).tolist():
            del exceptions[index]  # every request not served has its outcome there
        self._i -= undone
        self._dispatched -= undone
        self._rr = ahead.rr + kept

    def _log(self, latency: float, outcome: int) -> int:
        index = len(self.latencies)
        self.latencies.append(latency)
        if outcome != SERVED:
            self.exceptions[index] = outcome
        return index

    def _route(self, n: int, draws: npt.NDArray[np.float64] | None = None) -> npt.NDArray[np.intp]:
        """The endpoint (position) each of the next ``n`` requests goes to: in turn, else
        uniformly at random by ``draws`` (fresh ones if not given)."""
        count = len(self.endpoints)
        if self._round_robin:
            targets = (self._rr + np.arange(n, dtype=np.intp)) % count
            self._rr += n
            return targets
        if draws is None:
            draws = self._rng.random(n)
        return (draws * count).astype(np.intp)

    def _dispatch(self, i: int, j: int) -> None:
        # Requests are logged in arrival order, so a request's log index is its position.
        self._dispatched += j - i
        endpoints = self.endpoints
        if not endpoints:
            self.waiting.extend(
                zip(self._times[i:j].tolist(), self._service[i:j].tolist(), strict=True)
            )
            return
        targets = self._route(j - i, self._draws[i:j])
        arrivals, service = self._times[i:j], self._service[i:j]
        latencies = np.full(j - i, math.nan)
        inserted = np.full(j - i, math.nan)
        first = len(self.latencies)
        for index, server in enumerate(endpoints):
            rows = np.flatnonzero(targets == index)
            limit, each = rows.size, _ONE_BY_ONE // 2
            while rows.size:
                tried = rows[:limit]
                done = self._serve_at_once(
                    server, tried, arrivals, service, first, latencies, inserted
                )
                rows = rows[done:]
                if done == tried.size:
                    limit *= 2
                    continue
                # one waits or fails: the next ones one by one (twice as many as last
                # time while numpy serves none between: a backlogged replica), then at
                # once again on a prefix that doubles while it is served whole (the whole
                # rest each time would cost a backlogged replica, which fails on its first
                # row, the square of its requests)
                each = min(each * 2, _ONE_BY_ONE_MOST) if not done else _ONE_BY_ONE
                self._serve_each(server, rows[:each], arrivals, service, first, latencies, inserted)
                rows = rows[each:]
                limit = _ONE_BY_ONE
        self.latencies.frombytes(latencies.tobytes())
        ahead = self._ahead
        if ahead is not None and ahead.start == i:
            ahead.targets, ahead.inserted, ahead.latencies = targets, inserted, latencies

    def _serve_at_once(  # noqa: PLR0917 - the window's columns, handed on
        self,
        server: ReplicaServer,
        rows: npt.NDArray[np.intp],
        arrivals: npt.NDArray[np.float64],
        service: npt.NDArray[np.float64],
        first: int,
        latencies: npt.NDArray[np.float64],
        inserted: npt.NDArray[np.float64],
    ) -> int:
        """Serve with numpy the longest run of ``server``'s requests (``rows``, in arrival
        order) in which each starts on arrival and is answered; return its length.

        The k-th request (1-based) of such a run starts on arrival when at least k of the
        slots' free times and the run's earlier ends are at or before its arrival: the
        k-th slot taken is the k-th earliest of those (a slot taken frees after the one it
        replaced, so the earliest ones are taken first). A run's end comes after its own
        arrival, so it cannot count for an earlier request, and all of the run's ends can
        be counted at once."""
        arrival = arrivals[rows]
        end = arrival + service[rows]
        failing = (end <= arrival) | (end > arrival + self.capacity.timeout_s)
        failing |= arrival >= server.gone_at
        if failing.any():
            stop = int(failing.argmax())
            arrival, end = arrival[:stop], end[:stop]
        slots = np.sort(np.array(server.free))
        order = end.argsort(kind="stable")
        ready = np.searchsorted(slots, arrival, side="right")
        ready += np.searchsorted(end[order], arrival, side="right")
        waits = ready <= np.arange(len(arrival))
        if waits.any():
            stop = int(waits.argmax())
            arrival, end = arrival[:stop], end[:stop]
            order = end.argsort(kind="stable")
        if not len(arrival):
            return 0
        rows = rows[: len(arrival)]
        runs = end - arrival
        latencies[rows] = runs
        inserted[rows] = end
        by_end = end[order]
        # the slots now free at the latest of their times before and the run's ends
        latest = np.concatenate((slots, by_end[-len(slots) :]))
        latest.sort()
        server.free[:] = latest[len(latest) - len(slots) :].tolist()
        ids = rows + first
        server.add(arrival, arrival, by_end, ids[order], runs[order])
        if self._track_busy:
            starts = arrival.tolist()
            server.busy.extend(zip(end.tolist(), starts, starts, ids.tolist(), strict=True))
        return len(arrival)

    def _serve_each(  # noqa: PLR0917 - the window's columns, handed on
        self,
        server: ReplicaServer,
        rows: npt.NDArray[np.intp],
        arrivals: npt.NDArray[np.float64],
        service: npt.NDArray[np.float64],
        first: int,
        latencies: npt.NDArray[np.float64],
        inserted: npt.NDArray[np.float64],
        at: float | None = None,
    ) -> None:
        """Serve ``server``'s requests (``rows`` of the columns, in arrival order) one by
        one (the model itself). They reach it when sent, or all ``at`` that time when they
        waited at the Service for a replica."""
        exceptions = self.exceptions
        free = server.free
        busy = server.busy.append
        track = self._track_busy
        replace = heapq.heapreplace
        timed_out = TIMED_OUT
        served: list[int] = []
        began: list[float] = []
        ended: list[float] = []
        sent = arrivals[rows].tolist()
        put = [math.nan] * len(sent)  # what each took a slot until
        due = (arrivals[rows] + self.capacity.timeout_s).tolist()
        ids = (rows + first).tolist()
        reach = sent if at is None else [at] * len(sent)
        # arrival order: those reaching it once it is gone are the last ones, all dropped
        cut = bisect.bisect_left(reach, server.gone_at)
        rest = zip(range(cut), ids, reach, due, service[rows].tolist(), strict=False)
        for k, index, there, deadline, work in rest:
            earliest = free[0]
            if earliest >= deadline:  # with the next ones due by then (no slot taken)
                stop = bisect.bisect_right(due, earliest, k, cut)
                exceptions.update(dict.fromkeys(ids[k:stop], timed_out))
                next(itertools.islice(rest, stop - k - 1, stop - k - 1), None)
                continue
            start = there if there > earliest else earliest
            if start >= deadline:
                exceptions[index] = timed_out
                continue
            end = start + work
            if end > deadline:
                replace(free, deadline)
                put[k] = deadline
                if track:
                    busy((deadline, start, sent[k], -1))
                exceptions[index] = timed_out
                continue
            replace(free, end)
            put[k] = end
            if track:
                busy((end, start, sent[k], index))
            served.append(k)
            began.append(start)
            ended.append(end)
        exceptions.update(dict.fromkeys(ids[cut:], DROPPED))
        served_rows = rows[served]
        came, ends = arrivals[served_rows], np.array(ended)
        latencies[served_rows] = answered = ends - came
        inserted[rows] = put
        if served:
            order = np.argsort(ends, kind="stable")
            server.add(
                came, np.array(began), ends[order], (served_rows + first)[order], answered[order]
            )

    def _offer_waiting(self, now: float) -> None:
        """Hand out the requests waiting at the Service (a replica just appeared): those
        whose client gave up by ``now`` time out; the rest are routed as arrivals are and
        reach their replica at ``now``."""
        waiting, self.waiting = self.waiting, deque()
        arrivals = np.fromiter((a for a, _ in waiting), dtype=np.float64, count=len(waiting))
        service = np.fromiter((s for _, s in waiting), dtype=np.float64, count=len(waiting))
        first = len(self.latencies)
        latencies = np.full(len(waiting), math.nan)
        gave_up = now >= arrivals + self.capacity.timeout_s
        for row in np.flatnonzero(gave_up).tolist():
            self.exceptions[first + row] = TIMED_OUT
        live = np.flatnonzero(~gave_up)
        targets = self._route(live.size)
        inserted = np.empty(len(waiting))
        for index, server in enumerate(self.endpoints):
            self._serve_each(
                server, live[targets == index], arrivals, service, first, latencies, inserted, now
            )
        self.latencies.frombytes(latencies.tobytes())

    def new_server(self, name: str, start: float) -> ReplicaServer:
        """The queue and slots of a replica that serves from ``start``."""
        return ReplicaServer(name, self.capacity.concurrency, len(self.bounds), start)

    def terminate(self, server: ReplicaServer, now: float) -> None:
        """The replica's process gets SIGTERM: it finishes what it holds (see
        :meth:`drain_end`), so nothing changes here."""

    def add_endpoint(self, server: ReplicaServer, now: float) -> None:
        """Start routing to ``server`` at ``now`` (call after :meth:`advance` to ``now``)."""
        self._settle()
        self.endpoints.append(server)
        if self.waiting:
            self._offer_waiting(now)

    def remove_endpoint(self, server: ReplicaServer) -> None:
        """Stop routing to ``server`` (call after :meth:`advance` to now)."""
        self._settle()
        if server in self.endpoints:
            self.endpoints.remove(server)
        server.accepting = False

    def drain_end(self, server: ReplicaServer) -> float:
        """When ``server`` has answered everything it was given (its last slot frees up)."""
        self._settle()
        return max(server.free)

    def retire(self, server: ReplicaServer, gone_at: float) -> None:
        """The replica's process ended at ``gone_at``: unanswered requests fail. (Unless
        it is still routed to, what was dispatched ahead stays: none of it went to this
        replica, taken back when it stopped being routed to.)"""
        if server in self.endpoints:
            self._settle()
        server.gone_at = gone_at
        for index in server.unanswered(gone_at):
            self.latencies[index] = math.nan
            self.exceptions[index] = DROPPED

    def finish(self, t: float, servers: list[ReplicaServer]) -> RequestLog:
        """End of the run at ``t``: account everything and return the log."""
        self.advance(t)
        self._settle()
        for server in servers:
            for index in server.unanswered(t):
                self.latencies[index] = math.nan
                self.exceptions[index] = UNFINISHED
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
