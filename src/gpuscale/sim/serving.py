"""Requests through a Service to replicas that each run a vLLM engine: the ``serving.kind:
vllm`` workload model. Pure.

**Model.** Each Ready replica holds one :class:`gpuscale.serving.Engine` (continuous
batching, chunked prefill, a paged KV cache with recompute preemption; ``docs/serving.md``)
run step by step in virtual time. The Service spreads requests over the replicas it routes
to exactly as the queue model's :class:`~gpuscale.sim.requests.Router` does (uniformly at
random per request, or round-robin); with no replica to route to they wait at the Service
and are handed out, oldest first, when one appears. A request carries its trace's prompt
and output tokens and a deadline ``timeout_s`` after it was sent: the engine aborts it at
the first step that starts after the deadline (vLLM aborts a request whose client has
disconnected), whether it is still waiting or running.

**A replica that goes away.** vLLM of the pinned line (v0.11) exits on SIGTERM without
draining: in-flight requests are aborted and their clients get an error
(vllm-project/vllm#24885; ``--shutdown-timeout``, which waits for them, came later in
vllm#34730). So when a pod is deleted, everything its engine holds — waiting or running,
and any token the step in progress would have produced after that instant — fails
(``DROPPED``), and requests the Service still sends it before the endpoint update
propagates fail too. The pod is gone once the process exits (``shutdown_s`` after the
SIGTERM, at most the grace period), not after a drain.

**Speed.** As in the queue model, arrivals are not events: :meth:`EngineRouter.advance`
is called before anything reads the replicas (a scrape, an endpoint change) and
dispatches every arrival up to that instant to its replica's engine with
:meth:`gpuscale.serving.Engine.arrive`, which queues it for its arrival time without
running the engine; each engine is then run once to that instant
(:meth:`gpuscale.serving.Engine.run_until`, whose aggregate batch costs O(admitted +
finished) a step and a tight loop of float additions between events). Metrics are
accounted as the steps come back; gauges are read from the engine when scraped.

**What a caller reads.** :meth:`EngineRouter.finish` returns the same
:class:`~gpuscale.sim.requests.RequestLog` the queue model does (arrival, end-to-end
latency, outcome per request, in arrival order), plus per request its TTFT, mean
inter-token latency and queue time (NaN when it never got that far).
"""

from __future__ import annotations

import array
import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from gpuscale.serving import METRICS, Engine, ServingMetrics, Step
from gpuscale.serving._metrics import FINISH_REASONS
from gpuscale.sim.load import ArrivalSource
from gpuscale.sim.requests import DROPPED, TIMED_OUT, UNFINISHED, ArrivalWindows, RequestLog
from gpuscale.sim.specs import EngineCapacity

__all__ = ["VLLM_NAMES", "EngineRouter", "EngineServer", "reads_histograms", "series_keys"]

VLLM_NAMES = frozenset(
    name
    for spec in METRICS
    for name in (
        (f"{spec.name}_bucket", f"{spec.name}_sum", f"{spec.name}_count")
        if spec.kind == "histogram"
        else (f"{spec.name}_total",)
        if spec.kind == "counter"
        else (spec.name,)
    )
)
"""Every series name a simulated vLLM replica exports (counters with ``_total``, as
prometheus_client writes them)."""

_NAN = math.nan


class EngineServer:
    """One replica's engine, its metrics and its busy time (for the GPU exporter)."""

    __slots__ = (
        "accepting",
        "busy",
        "engine",
        "gone_at",
        "metrics",
        "name",
        "stopped_at",
        "tail",
        "track_busy",
    )

    def __init__(
        self,
        name: str,
        capacity: EngineCapacity,
        start: float,
        *,
        track_busy: bool,
        itl: bool = True,
    ) -> None:
        self.name = name
        self.engine = Engine(capacity.config, capacity.cost, itl=itl)
        self.engine.free_at = start  # the program serves from ``start``; no step before
        self.metrics = ServingMetrics(capacity.model_name)
        self.busy: deque[list[float]] = deque()
        """Merged [start, end] spans of engine steps (back-to-back steps are one span)."""
        self.track_busy = track_busy
        self.accepting = True
        self.gone_at = math.inf
        self.stopped_at = math.inf
        """When the process got SIGTERM (vLLM aborts everything then)."""
        self.tail: tuple[float, list[int]] = (-math.inf, [])
        """(end, requests it finished) of the last step run, which may end after the
        instant the engine was run to: a SIGTERM before that end loses those answers."""

    def record(self, steps: Sequence[Step]) -> None:
        """Account steps the engine ran: metrics, and busy spans for the utilisation."""
        metrics = self.metrics
        busy = self.busy
        track = self.track_busy
        for step in steps:
            metrics.record(step)
            if track and step.end > step.start:
                if busy and busy[-1][1] >= step.start:
                    busy[-1][1] = step.end
                else:
                    busy.append([step.start, step.end])

    def utilisation(self, t: float, window: float) -> float:
        """Fraction of ``[t - window, t]`` in which the engine was running a step."""
        low = t - window
        busy = self.busy
        while busy and busy[0][1] <= low:
            busy.popleft()
        covered = 0.0
        for start, end in busy:
            if start >= t:
                break
            covered += min(end, t) - max(start, low)
        return covered / window

    def values(self, *, histograms: bool) -> list[float]:
        """The values of :func:`series_keys`, in that order (histograms zero when not read)."""
        engine = self.engine
        metrics = self.metrics
        values = list(ServingMetrics.gauges(engine).values())
        values += metrics.counters().values()
        values += (float(metrics.success[reason]) for reason in FINISH_REASONS)
        for histogram in metrics.histograms().values():
            if histograms:
                values += (float(count) for _bound, count in histogram.cumulative())
                values += (histogram.sum, float(histogram.count))
            else:
                values += [0.0] * (len(histogram.buckets) + 3)
        return values


def reads_histograms(keep: frozenset[str] | None) -> bool:
    """Whether a scrape that keeps ``keep`` (every name when ``None``) stores any of the
    vLLM histograms' series."""
    return keep is None or any(
        name.endswith(("_bucket", "_sum", "_count")) for name in VLLM_NAMES & keep
    )


def series_keys(model_name: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    """The series of one replica, as :meth:`EngineServer.values` fills them: vLLM's names,
    labels (``engine``, ``model_name``, and ``finished_reason`` / ``le`` where vLLM has
    them) and bucket bounds, written as prometheus_client writes them."""
    labels = (("engine", "0"), ("model_name", model_name))
    keys: list[tuple[tuple[str, str], ...]] = []
    by_kind = {spec.name: spec for spec in METRICS}
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:gpu_cache_usage_perc",
    ):
        keys.append((("__name__", name), *labels))
    for name in ("vllm:num_preemptions", "vllm:prompt_tokens", "vllm:generation_tokens"):
        keys.append((("__name__", f"{name}_total"), *labels))
    for reason in FINISH_REASONS:
        keys.append(
            (
                ("__name__", "vllm:request_success_total"),
                labels[0],
                ("finished_reason", reason),
                labels[1],
            )
        )
    for name in (
        "vllm:time_to_first_token_seconds",
        "vllm:inter_token_latency_seconds",
        "vllm:time_per_output_token_seconds",
        "vllm:e2e_request_latency_seconds",
        "vllm:request_queue_time_seconds",
    ):
        for bound in (*by_kind[name].buckets, math.inf):
            le = "+Inf" if math.isinf(bound) else repr(float(bound))
            keys.append((("__name__", f"{name}_bucket"), labels[0], ("le", le), labels[1]))
        keys.append((("__name__", f"{name}_sum"), *labels))
        keys.append((("__name__", f"{name}_count"), *labels))
    return tuple(keys)


class EngineRouter(ArrivalWindows):
    """A ``vllm`` workload's Service: arrivals in, dispatched to the replicas' engines.

    The same interface as :class:`~gpuscale.sim.requests.Router` (the world, the loader
    and the scrape targets call either), plus per-request TTFT, ITL and queue time.
    """

    def __init__(
        self,
        source: ArrivalSource,
        capacity: EngineCapacity,
        *,
        seed: int,
        round_robin: bool = False,
        track_busy: bool = True,
        histograms: bool = True,
    ) -> None:
        if not source.has_tokens:
            raise ValueError("a vllm workload needs requests with prompt and output tokens")
        self.source = source
        self.capacity = capacity
        self.bounds: list[float] = []
        self.endpoints: list[EngineServer] = []
        self.waiting: deque[tuple[int, int, int]] = deque()
        """(log index, prompt tokens, output tokens) of requests waiting at the Service
        (no replica to route to), oldest first."""
        self.arrivals = array.array("d")
        self.latencies = array.array("d")
        """Per request in arrival order: end-to-end latency, NaN unless served."""
        self.ttft = array.array("d")
        self.itl = array.array("d")
        """Mean inter-token latency of the request (vLLM's per-request TPOT)."""
        self.queue_time = array.array("d")
        self.exceptions: dict[int, int] = {}
        """Log index → outcome, for requests not served."""
        self.arrived = 0
        self.now = 0.0
        self._rng = np.random.default_rng(seed)
        self._round_robin = round_robin
        self._track_busy = track_busy
        self._histograms = histograms
        """Whether anything reads the latency histograms; without, the engines skip the
        per-token intervals (the ITL histogram then stays empty)."""
        self._rr = 0
        self._window = -1
        self._times: list[float] = []
        self._prompts: list[int] = []
        self._outputs: list[int] = []
        self._i = 0

    def new_server(self, name: str, start: float) -> EngineServer:
        """The engine of a replica that serves from ``start``."""
        return EngineServer(
            name, self.capacity, start, track_busy=self._track_busy, itl=self._histograms
        )

    # -- arrivals -------------------------------------------------------------------

    def _next_window(self) -> None:
        self._window += 1
        arrivals = self.source.window(self._window)
        self._times = arrivals.times.tolist()
        self._prompts = np.maximum(arrivals.prompt_tokens, 1).tolist()
        self._outputs = np.maximum(arrivals.output_tokens, 1).tolist()
        self._i = 0

    def advance(self, t: float) -> None:
        """Dispatch every arrival at or before ``t`` and run every engine up to ``t``."""
        if t < self.now:
            return
        self._dispatch_due(t)
        for server in self.endpoints:
            self._run(server, t)
        self.now = t

    def _dispatch(self, i: int, j: int) -> None:
        # Each request is logged at arrival (index = its position in arrival order) with
        # NaN timings; the engine's results fill them in as requests finish.
        times, prompts, outputs = self._times, self._prompts, self._outputs
        self.arrived += j - i
        self.arrivals.extend(times[i:j])
        blank = [_NAN] * (j - i)
        first = len(self.latencies)
        for column in (self.latencies, self.ttft, self.itl, self.queue_time):
            column.extend(blank)
        endpoints = self.endpoints
        count = len(endpoints)
        if count == 0:
            self.waiting.extend(
                zip(range(first, first + j - i), prompts[i:j], outputs[i:j], strict=True)
            )
            return
        if self._round_robin:
            start = self._rr
            targets = [(start + m) % count for m in range(j - i)]
            self._rr = start + (j - i)
        else:
            targets = (self._rng.random(j - i) * count).astype(np.intp).tolist()
        send = self._send
        for offset, target in enumerate(targets):
            k = i + offset
            send(endpoints[target], first + offset, times[k], prompts[k], outputs[k])

    def _send(self, server: EngineServer, index: int, now: float, prompt: int, output: int) -> None:
        """Hand request ``index`` to ``server`` at ``now`` (its arrival, or later when it
        waited at the Service)."""
        if now >= server.stopped_at or now >= server.gone_at:
            self.exceptions[index] = DROPPED
            return
        deadline = self.arrivals[index] + self.capacity.timeout_s
        try:  # the engine runs to it when next read
            server.engine.arrive(str(index), now, prompt, output, deadline=deadline)
        except ValueError:  # longer than the KV cache: vLLM refuses it (max_model_len)
            self.exceptions[index] = DROPPED

    def _run(self, server: EngineServer, until: float) -> None:
        """Run ``server``'s engine through every step that starts before ``until``."""
        engine = server.engine
        if engine.idle:
            return
        _, steps = engine.run_until(-math.inf, until)
        if not steps:
            return
        server.record(steps)
        self._account(steps)
        engine.counts.results.clear()  # the log holds them; the engine need not
        last = steps[-1]
        if last.end > until and last.finished:
            # an aggregated Step also holds finishes of its earlier steps (answered by
            # ``until``); only those at its end, after ``until``, are still on their way
            server.tail = (
                last.end,
                [int(r.id) for r in last.finished if not r.timed_out and r.finished > until],
            )

    def _account(self, steps: Sequence[Step]) -> None:
        latencies, ttft, itl, queued = self.latencies, self.ttft, self.itl, self.queue_time
        exceptions = self.exceptions
        arrivals = self.arrivals
        for step in steps:
            for result in step.finished:
                index = int(result.id)
                if result.timed_out:
                    exceptions[index] = TIMED_OUT
                    continue
                arrival = arrivals[index]
                latencies[index] = result.finished - arrival
                if result.first_token is not None:
                    ttft[index] = result.first_token - arrival
                if result.first_scheduled is not None:
                    queued[index] = result.first_scheduled - arrival
                mean = result.mean_itl
                if mean is not None:
                    itl[index] = mean

    # -- replicas -------------------------------------------------------------------

    def add_endpoint(self, server: EngineServer, now: float) -> None:
        """Start routing to ``server`` at ``now`` (after :meth:`advance` to ``now``);
        requests waiting at the Service are handed out, oldest first."""
        self.endpoints.append(server)
        if not self.waiting:
            return
        waiting, self.waiting = self.waiting, deque()
        count = len(self.endpoints)
        timeout = self.capacity.timeout_s
        for index, prompt, output in waiting:
            if now >= self.arrivals[index] + timeout:
                self.exceptions[index] = TIMED_OUT
                continue
            if self._round_robin:
                target = self._rr % count
                self._rr += 1
            else:
                target = int(self._rng.random() * count)
            self._send(self.endpoints[target], index, now, prompt, output)

    def remove_endpoint(self, server: EngineServer) -> None:
        """Stop routing to ``server`` (after :meth:`advance` to now)."""
        if server in self.endpoints:
            self.endpoints.remove(server)
        server.accepting = False

    def terminate(self, server: EngineServer, now: float) -> None:
        """The replica's process gets SIGTERM at ``now`` (after :meth:`advance` to ``now``):
        vLLM v0.11 aborts everything it holds, so every request not answered by ``now``
        fails, including tokens of the step in progress that would land after ``now``."""
        server.stopped_at = now
        engine = server.engine
        end, answered = server.tail
        if end > now:
            for index in answered:
                self._drop(index, now)
        for request_id in engine.discard():
            self._drop(int(request_id), now)

    def _drop(self, index: int, now: float) -> None:
        """Request ``index`` fails at ``now``: its answer never reaches the client."""
        self.exceptions[index] = DROPPED
        for column in (self.latencies, self.ttft, self.itl, self.queue_time):
            column[index] = _NAN

    def drain_end(self, server: EngineServer) -> float:
        """vLLM does not drain: its process exits on SIGTERM (see :meth:`terminate`)."""
        return server.stopped_at if math.isfinite(server.stopped_at) else self.now

    def retire(self, server: EngineServer, gone_at: float) -> None:
        """The replica's process ended at ``gone_at``: anything it still holds fails."""
        server.gone_at = gone_at
        if server.stopped_at == math.inf:
            self.terminate(server, gone_at)

    def finish(self, t: float, servers: list[EngineServer]) -> RequestLog:
        """End of the run at ``t``: account everything and return the log."""
        self.advance(t)
        timeout = self.capacity.timeout_s
        arrivals = self.arrivals

        def unfinished(index: int) -> int:
            return TIMED_OUT if t >= arrivals[index] + timeout else UNFINISHED

        for server in servers:
            engine = server.engine
            for request in (*engine.running, *engine.waiting, *engine.pending):
                index = int(request.id)
                self._drop(index, t)
                self.exceptions[index] = unfinished(index)
        for index, _prompt, _output in self.waiting:
            self.exceptions[index] = unfinished(index)
        self.waiting = deque()
        count = len(self.latencies)
        outcomes = np.zeros(count, dtype=np.int8)
        if self.exceptions:
            indices = np.fromiter(self.exceptions.keys(), dtype=np.int64)
            outcomes[indices] = np.fromiter(self.exceptions.values(), dtype=np.int8)

        def column(values: array.array[float]) -> np.ndarray:
            return np.frombuffer(values, dtype=np.float64).copy()

        return RequestLog(
            column(self.arrivals),
            column(self.latencies),
            outcomes,
            ttft=column(self.ttft),
            itl=column(self.itl),
            queue_time=column(self.queue_time),
        )
