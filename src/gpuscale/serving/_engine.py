"""One vLLM replica, step by step: continuous batching, chunked prefill, a paged KV cache.

Models vLLM's v1 engine core as read at vllm-project/vllm@00024d31 (the v0.11 line):

- ``vllm/v1/core/sched/scheduler.py`` ``Scheduler.schedule``: every step first gives each
  *running* request the tokens it still lacks (one for a decoding request, the rest of the
  prompt, capped by the step's token budget, for one still in prefill), in order; a request
  whose KV blocks cannot be had preempts the *last* running request (FCFS policy:
  ``self.running.pop()``), which frees its blocks, forgets its computed tokens (recompute,
  the v1 default) and goes back to the *front* of the waiting queue; if the request itself
  was the last one, it is the one preempted and the step's running pass ends. Only when no
  request was preempted in this step are *waiting* requests admitted, in queue order, while
  ``len(running) < max_num_seqs`` and budget remains; each gets ``min(remaining tokens,
  budget)`` tokens (chunked prefill), and admission stops at the first one whose blocks
  cannot be had (no preemption for waiting requests).
- ``vllm/v1/core/kv_cache_manager.py`` ``allocate_slots`` and ``block_pool.py``: a request
  holds ``ceil(computed tokens / block_size)`` blocks; scheduling ``n`` more tokens needs
  ``ceil((computed + n) / block_size)`` minus what it holds, refused when fewer are free.
  One block of the pool is vLLM's null block, never handed out; usage is
  ``1 - free / (num_blocks - 1)``. Prefix caching is not modelled (every prompt misses).
- ``Scheduler.update_from_output``: a request whose computed tokens reach its full length
  (prompt plus tokens generated so far) samples one new token at the end of the step; a
  prefill chunk that stops short samples nothing. Reaching ``output_tokens`` finishes it
  (``length`` when that is ``max_tokens``, ``stop`` otherwise) and frees its blocks.

What the model adds: a step's duration is :class:`StepCost` of the step's work (prefill
tokens, decoding sequences, context tokens attended), and a request may carry a deadline
after which it is aborted (the client gave up), checked when a step starts.

Pure: the engine holds explicit state, the caller passes the time in and gets
:class:`Step` records (events) out; nothing reads a clock. :meth:`Engine.run_until` is the
loop a simulator uses; it keeps the running decoders in aggregate (one shared decode
counter, per-request offsets, a heap of finishing steps: :meth:`Engine._batch`) so a step
costs O(admitted + finished) rather than O(running) and comes back in one aggregated
:class:`Step` (:meth:`Engine._advance`), and ``tests/unit/serving`` proves it lands in
exactly the state that stepping one by one does.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "Engine",
    "EngineConfig",
    "RequestResult",
    "RequestSpec",
    "Step",
    "StepCost",
    "replay",
]


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """The engine settings of one replica (vLLM's flags of the same names)."""

    num_gpu_blocks: int
    """KV-cache blocks in the pool, vLLM's null block included (``--num-gpu-blocks-override``
    or what the memory profile left after weights)."""
    max_num_seqs: int = 256
    """Most requests running at once (``--max-num-seqs``; vLLM's default 256 on GPUs)."""
    max_num_batched_tokens: int = 2048
    """Token budget of one step (``--max-num-batched-tokens``; vLLM sizes the default by
    GPU and usage context, 2048 for the OpenAI server on most GPUs)."""
    block_size: int = 16
    """Tokens per KV block (``--block-size``, 16 by default on CUDA and ROCm)."""

    def __post_init__(self) -> None:
        for name in ("num_gpu_blocks", "max_num_seqs", "max_num_batched_tokens", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, not {value!r}")
        if self.num_gpu_blocks < 2:
            raise ValueError("num_gpu_blocks must be >= 2 (one is vLLM's null block)")

    @property
    def usable_blocks(self) -> int:
        """Blocks requests can hold: the pool minus the null block."""
        return self.num_gpu_blocks - 1


@dataclass(frozen=True, slots=True)
class StepCost:
    """Seconds one engine step takes, as a linear function of its work.

    ``base + prefill_token * prefill tokens + decode_seq * decoding sequences +
    context_token * context tokens``, where context tokens are every scheduled request's
    tokens in the KV cache after the step (what attention reads). The decode-bound part
    (``base``) is reading the weights once; ``context_token`` reading the KV cache.
    """

    base: float
    """Seconds of a step whatever its size (weights read once, launch overhead)."""
    prefill_token: float
    """Seconds per prompt token computed (compute-bound matmuls)."""
    decode_seq: float
    """Seconds per decoding sequence (sampling, per-sequence kernels)."""
    context_token: float
    """Seconds per token of context attended (KV-cache reads)."""

    def __post_init__(self) -> None:
        for name in ("base", "prefill_token", "decode_seq", "context_token"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.base <= 0 and self.prefill_token <= 0 and self.decode_seq <= 0:
            raise ValueError("a step must take time: set base, prefill_token or decode_seq > 0")

    def seconds(self, prefill_tokens: int, decode_seqs: int, context_tokens: int) -> float:
        """Duration of a step with this work (one expression, so every path agrees)."""
        return (
            self.base
            + self.prefill_token * prefill_tokens
            + self.decode_seq * decode_seqs
            + self.context_token * context_tokens
        )


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request as it reaches the engine."""

    id: str
    arrival: float
    """Seconds (the caller's clock) at which it entered the waiting queue."""
    prompt_tokens: int
    output_tokens: int
    """Tokens it generates before it stops (``max_tokens`` when it runs to the limit)."""
    max_tokens: int | None = None
    """The request's ``max_tokens``; when equal to ``output_tokens`` it ends in ``length``."""
    deadline: float | None = None
    """Absolute time after which it is aborted if unfinished (a client timeout)."""

    def __post_init__(self) -> None:
        if self.prompt_tokens < 1:
            raise ValueError(f"request {self.id}: prompt_tokens must be >= 1")
        if self.output_tokens < 1:
            raise ValueError(f"request {self.id}: output_tokens must be >= 1")


@dataclass(frozen=True, slots=True)
class RequestResult:
    """How one request ended: vLLM's per-request timings (``vllm/v1/metrics/stats.py``)."""

    id: str
    arrival: float
    finished: float
    finish_reason: str
    """``stop``, ``length`` or ``abort`` (vLLM's ``FinishReason`` strings)."""
    prompt_tokens: int
    output_tokens: int
    """Tokens generated (fewer than asked when aborted)."""
    first_scheduled: float | None
    first_token: float | None
    preemptions: int

    @property
    def timed_out(self) -> bool:
        return self.finish_reason == "abort"

    @property
    def queue_time(self) -> float | None:
        """Arrival to first scheduled (``vllm:request_queue_time_seconds``)."""
        return None if self.first_scheduled is None else self.first_scheduled - self.arrival

    @property
    def ttft(self) -> float | None:
        """Arrival to first token (``vllm:time_to_first_token_seconds``)."""
        return None if self.first_token is None else self.first_token - self.arrival

    @property
    def e2e(self) -> float:
        """Arrival to finish (``vllm:e2e_request_latency_seconds``)."""
        return self.finished - self.arrival

    @property
    def mean_itl(self) -> float | None:
        """Mean time between tokens after the first (vLLM's per-request TPOT)."""
        if self.first_token is None or self.output_tokens < 2:
            return None
        return (self.finished - self.first_token) / (self.output_tokens - 1)


class _Request:
    """A request's mutable state inside the engine (vLLM's ``Request``)."""

    __slots__ = (
        "blocks",
        "computed",
        "ended",
        "first_scheduled",
        "first_token",
        "last_token",
        "output",
        "preemptions",
        "spec",
    )

    def __init__(self, spec: RequestSpec) -> None:
        self.spec = spec
        self.computed = 0
        self.output = 0
        self.blocks = 0
        self.ended = False
        self.preemptions = 0
        self.first_scheduled: float | None = None
        self.first_token: float | None = None
        self.last_token: float | None = None

    @property
    def tokens(self) -> int:
        return self.spec.prompt_tokens + self.output


@dataclass(frozen=True, slots=True)
class Step:
    """What one engine step (or a run of identical decode steps) did."""

    start: float
    end: float
    steps: int
    """Engine steps covered: 1, or more for an aggregated run of decode-only steps."""
    prefill_tokens: int
    decode_seqs: int
    """Decoding sequences, summed over the steps covered (per step for a single one)."""
    context_tokens: int
    """Context tokens attended, summed over the steps covered."""
    tokens: tuple[tuple[str, int], ...] = ()
    """(request id, tokens generated so far) for every token sampled at ``end`` (single
    steps only: an aggregated run reports ``generated`` and ``itl`` instead)."""
    generated: int = 0
    """Tokens sampled in total."""
    first_tokens: tuple[float, ...] = ()
    """TTFT of each request that got its first token."""
    itl: tuple[tuple[float, int], ...] = ()
    """(inter-token interval, how many tokens had it) for tokens after a request's first."""
    prompt_tokens_counted: int = 0
    """Prompt tokens of requests that got their first token (``vllm:prompt_tokens``)."""
    finished: tuple[RequestResult, ...] = ()
    preempted: tuple[str, ...] = ()
    admitted: tuple[str, ...] = ()
    """Requests scheduled for the first time (their queue time ends at ``start``)."""


@dataclass(slots=True)
class _Counts:
    """Totals since the engine started, for tests and the metrics."""

    steps: int = 0
    preemptions: int = 0
    generated: int = 0
    busy_seconds: float = 0.0
    results: list[RequestResult] = field(default_factory=list)


class Engine:
    """One replica's scheduler and KV cache; the caller owns the clock.

    Use :meth:`add` when a request arrives, then :meth:`step` (one step, which the caller
    waits out in real time) or :meth:`run_until` (a simulator's loop). A step starting at
    ``now`` ends at ``Step.end``; the next may start no earlier.
    """

    def __init__(self, config: EngineConfig, cost: StepCost, *, itl: bool = True) -> None:
        self.config = config
        self.cost = cost
        self.itl = itl
        """Report every token's interval in :attr:`Step.itl` (the ITL histogram's input);
        a caller that reads no ITL histogram passes ``False`` and gets ``()``, which spares
        a list entry per step of a run. Per-request timings are kept either way."""
        self.waiting: deque[_Request] = deque()
        self.pending: deque[_Request] = deque()
        """Requests given by :meth:`arrive` whose arrival no step has reached yet."""
        self.running: list[_Request] = []
        self.free_blocks = config.usable_blocks
        self.free_at = float("-inf")
        """When the step in progress ends; a new step may not start before."""
        self.counts = _Counts()
        self.latest_arrival = float("-inf")
        """Arrival of the newest request added; :meth:`run_until` starts no earlier."""
        self._by_id: dict[str, _Request] = {}
        self._deadlines = 0
        """Requests in the engine that carry a deadline (none: no expiry scan)."""
        self._deadline_heap: list[tuple[float, int, _Request]] = []
        """(deadline, order added, request); entries of ended requests are skipped."""
        self._added = 0
        # the aggregate batch (:meth:`_batch`): valid while ``_batched``
        self._batched = False
        self._d = 0
        """The decode counter shared by the batch (steps taken in aggregate)."""
        self._decoders = 0
        """Running requests held in aggregate: the first ``_decoders`` of ``running``."""
        self._offsets = 0
        """Sum of the decoders' ``computed - _d``."""
        self._residues = [0] * config.block_size
        """Decoders by ``(computed - _d) % block_size``."""
        self._finishing: list[tuple[int, int, _Request]] = []
        """Heap of (counter value at the step that finishes it, running order, decoder)."""
        self._seq = 0

    # -- state the metrics read -------------------------------------------------------

    @property
    def num_running(self) -> int:
        return len(self.running)

    @property
    def num_waiting(self) -> int:
        return len(self.waiting) + len(self.pending)

    @property
    def kv_cache_usage(self) -> float:
        """Fraction of usable blocks held (vLLM's ``BlockPool.get_usage``)."""
        return 1.0 - self.free_blocks / self.config.usable_blocks

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting and not self.pending

    def held_blocks(self) -> int:
        """Blocks the requests hold (equals ``usable_blocks - free_blocks`` unless leaking)."""
        self._unbatch()
        return sum(request.blocks for request in self.running)

    # -- requests in ----------------------------------------------------------------

    def add(self, spec: RequestSpec) -> None:
        """Queue a request at the back of the waiting queue.

        A request whose prompt and output can never fit the cache is refused here
        (vLLM refuses prompts longer than ``max_model_len`` at the API server).
        """
        self.waiting.append(self._admit(spec))
        self.latest_arrival = max(self.latest_arrival, spec.arrival)

    def arrive(self, spec: RequestSpec) -> None:
        """Queue a request that arrives at ``spec.arrival``, which may be later than the
        engine has run to: it joins the waiting queue at the first step that starts at or
        after its arrival, exactly as if :meth:`run_until` had been run to its arrival and
        :meth:`add` called then. Arrivals must come in order. This lets a simulator hand
        over every arrival at once and run the engine only when something reads it.
        """
        pending = self.pending
        if pending and spec.arrival < pending[-1].spec.arrival:
            raise ValueError(f"request {spec.id} arrives before {pending[-1].spec.id}")
        pending.append(self._admit(spec))

    def _admit(self, spec: RequestSpec) -> _Request:
        """A new request's state, once it is known to fit (vLLM's ``max_model_len``)."""
        if spec.id in self._by_id:
            raise ValueError(f"request {spec.id} is already in the engine")
        need = -(-(spec.prompt_tokens + spec.output_tokens) // self.config.block_size)
        if need > self.config.usable_blocks:
            raise ValueError(
                f"request {spec.id}: {spec.prompt_tokens + spec.output_tokens} tokens need "
                f"{need} KV blocks, the cache has {self.config.usable_blocks}"
            )
        request = _Request(spec)
        if spec.deadline is not None:
            self._deadlines += 1
            heapq.heappush(self._deadline_heap, (spec.deadline, self._added, request))
            self._added += 1
        self._by_id[spec.id] = request
        return request

    def _arrive(self, now: float) -> None:
        """Move the pending requests that have arrived by ``now`` to the waiting queue."""
        pending, waiting = self.pending, self.waiting
        while pending and pending[0].spec.arrival <= now:
            waiting.append(pending.popleft())

    def abort(self, request_id: str, now: float) -> RequestResult | None:
        """Drop a request (the client went away); its blocks return to the pool."""
        request = self._by_id.get(request_id)
        if request is None:
            return None
        self._unbatch()
        if request in self.running:
            self.running.remove(request)
        elif request in self.waiting:
            self.waiting.remove(request)
        else:
            self.pending.remove(request)
        return self._finish(request, now, "abort")

    def discard(self) -> list[str]:
        """Forget every request, running then waiting, without results; return their ids.

        For a replica whose process is gone (vLLM v0.11 exits on SIGTERM): nothing runs
        on this engine again, so the pool is left as it was (its usage gauge reads as at
        the SIGTERM)."""
        self._unbatch()
        every = (*self.running, *self.waiting, *self.pending)
        ids = [request.spec.id for request in every]
        for request in every:
            request.ended = True
            del self._by_id[request.spec.id]
        self.running.clear()
        self.waiting.clear()
        self.pending.clear()
        self._deadline_heap.clear()
        self._deadlines = 0
        return ids

    # -- one step -------------------------------------------------------------------

    def step(self, now: float) -> Step | None:
        """Schedule and run one step starting at ``now``; ``None`` when there is no work."""
        if now < self.free_at:
            raise ValueError(f"a step starts at {now} before the last one ends at {self.free_at}")
        self._unbatch()
        self._arrive(now)
        aborted = self._expire(now)
        if not self.running and not self.waiting:
            if aborted:
                return Step(now, now, 0, 0, 0, 0, finished=tuple(aborted))
            return None
        config = self.config
        block_size = config.block_size
        budget = config.max_num_batched_tokens
        scheduled: list[tuple[_Request, int]] = []
        preempted: list[str] = []
        running = self.running
        index = 0
        while index < len(running) and budget > 0:
            request = running[index]
            new = request.spec.prompt_tokens + request.output - request.computed
            new = min(new, budget)
            need = -(-(request.computed + new) // block_size) - request.blocks
            schedulable = True
            while need > self.free_blocks:
                victim = running.pop()
                self._preempt(victim)
                preempted.append(victim.spec.id)
                if victim is request:
                    schedulable = False
                    break
            if not schedulable:
                break
            self.free_blocks -= need
            request.blocks += need
            scheduled.append((request, new))
            budget -= new
            index += 1
        admitted: list[str] = []
        if not preempted:
            waiting = self.waiting
            while waiting and budget > 0 and len(running) < config.max_num_seqs:
                request = waiting[0]
                new = min(request.tokens, budget)
                need = -(-new // block_size)
                if need > self.free_blocks:
                    break
                waiting.popleft()
                self.free_blocks -= need
                request.blocks = need
                running.append(request)
                scheduled.append((request, new))
                budget -= new
                if request.first_scheduled is None:
                    request.first_scheduled = now
                    admitted.append(request.spec.id)
        prefill = decode = context = 0
        for request, new in scheduled:
            reached = request.computed + new
            if (
                new == 1
                and request.output > 0
                and reached == request.spec.prompt_tokens + request.output
            ):
                decode += 1
            else:
                prefill += new
            context += reached
        end = now + self.cost.seconds(prefill, decode, context)
        self.free_at = end
        self.counts.steps += 1
        self.counts.busy_seconds += end - now
        return self._finish_step(
            now=now,
            end=end,
            scheduled=scheduled,
            prefill=prefill,
            decode=decode,
            context=context,
            preempted=preempted,
            admitted=admitted,
            aborted=aborted,
        )

    def _finish_step(
        self,
        *,
        now: float,
        end: float,
        scheduled: list[tuple[_Request, int]],
        prefill: int,
        decode: int,
        context: int,
        preempted: list[str],
        admitted: list[str],
        aborted: list[RequestResult],
    ) -> Step:
        tokens: list[tuple[str, int]] = []
        first: list[float] = []
        itl: dict[float, int] = {}
        prompt_counted = 0
        finished = list(aborted)
        for request, new in scheduled:
            request.computed += new
            if request.computed < request.spec.prompt_tokens + request.output:
                continue
            request.output += 1
            tokens.append((request.spec.id, request.output))
            if request.first_token is None:
                request.first_token = end
                first.append(end - request.spec.arrival)
                prompt_counted += request.spec.prompt_tokens
            elif self.itl:
                assert request.last_token is not None
                gap = end - request.last_token
                itl[gap] = itl.get(gap, 0) + 1
            request.last_token = end
            if request.output >= request.spec.output_tokens:
                self.running.remove(request)
                spec = request.spec
                reason = "length" if spec.max_tokens == spec.output_tokens else "stop"
                finished.append(self._finish(request, end, reason))
        self.counts.generated += len(tokens)
        return Step(
            now,
            end,
            1,
            prefill,
            decode,
            context,
            tokens=tuple(tokens),
            generated=len(tokens),
            first_tokens=tuple(first),
            itl=tuple(itl.items()),
            prompt_tokens_counted=prompt_counted,
            finished=tuple(finished),
            preempted=tuple(preempted),
            admitted=tuple(admitted),
        )

    def _preempt(self, request: _Request) -> None:
        """vLLM's ``_preempt_request``: free the blocks, forget the work, front of the queue."""
        self.free_blocks += request.blocks
        request.blocks = 0
        request.computed = 0
        request.preemptions += 1
        self.counts.preemptions += 1
        self.waiting.appendleft(request)

    def _finish(self, request: _Request, now: float, reason: str) -> RequestResult:
        self.free_blocks += request.blocks
        request.blocks = 0
        request.ended = True
        del self._by_id[request.spec.id]
        spec = request.spec
        if spec.deadline is not None:
            self._deadlines -= 1
        result = RequestResult(
            id=spec.id,
            arrival=spec.arrival,
            finished=now,
            finish_reason=reason,
            prompt_tokens=spec.prompt_tokens,
            output_tokens=request.output,
            first_scheduled=request.first_scheduled,
            first_token=request.first_token,
            preemptions=request.preemptions,
        )
        self.counts.results.append(result)
        return result

    def _expire(self, now: float) -> list[RequestResult]:
        """Abort every request whose deadline has passed (checked as a step starts)."""
        if not self._deadlines:
            return []
        expired = [
            request
            for request in (*self.running, *self.waiting)
            if request.spec.deadline is not None and request.spec.deadline <= now
        ]
        results = []
        for request in expired:
            if request in self.running:
                self.running.remove(request)
            else:
                self.waiting.remove(request)
            results.append(self._finish(request, now, "abort"))
        return results

    # -- many steps -----------------------------------------------------------------

    def run_until(self, now: float, until: float, *, fast: bool = True) -> tuple[float, list[Step]]:
        """Run every step that starts before ``until``; return (time free, steps).

        The last step may end after ``until``: a request arriving meanwhile waits for it,
        as it waits for vLLM's ``schedule()`` call. With ``fast`` (the default), the steps
        the aggregate batch can take (:meth:`_advance`) come back as one aggregated
        :class:`Step`, the others one by one; the engine's state is the same either way.
        """
        steps: list[Step] = []
        t = max(now, self.free_at, self.latest_arrival)
        pending = self.pending
        while t < until:
            if not self.running and not self.waiting:
                if not pending or pending[0].spec.arrival >= until:
                    break
                t = max(t, pending[0].spec.arrival)  # idle until the next arrival
            if fast and self._batch():
                run, slow = self._advance(t, until)
                if run is not None:
                    steps.append(run)
                    t = run.end
                if not slow:
                    continue
                self._unbatch()
            step = self.step(t)
            if step is None:
                break
            steps.append(step)
            t = step.end
        self._arrive(until)
        return t, steps

    # -- the aggregate batch (run_until's fast path) ----------------------------------

    def _batch(self) -> bool:
        """Hold the running decoders in aggregate (O(running), once after a plain step).

        Possible when every running request but the last is decoding and sampled its
        last token at the end of the last step (``free_at``), which is how steps leave
        them unless the budget ran out mid-batch or a request was preempted. The last
        may be a prefill in progress (chunked prefill leaves at most one, the last).
        In aggregate, a decoder's ``computed`` and ``output`` are kept *minus* the shared
        decode counter ``_d`` (both grow by one per step), its ``blocks`` is not kept
        (it is ``ceil(computed / block_size)``), and the batch keeps the sum of the
        offsets, their count by residue modulo the block size (who needs a new block at
        which step) and a heap of the counter values at which each one finishes.
        """
        if self._batched:
            return True
        running = self.running
        free_at = self.free_at
        count = len(running)
        last = running[-1] if running else None
        if last is not None and not (
            last.output > 0 and last.computed == last.tokens - 1 and last.last_token == free_at
        ):
            count -= 1
        d = self._d
        block_size = self.config.block_size
        for index in range(count):
            request = running[index]
            if (
                request.output == 0
                or request.computed != request.tokens - 1
                or request.last_token != free_at
            ):
                return False
        residues = self._residues
        heap = self._finishing
        total = 0
        for index in range(count):
            request = running[index]
            request.computed -= d
            request.output -= d
            total += request.computed
            residues[request.computed % block_size] += 1
            heap.append((request.spec.output_tokens - 1 - request.output, index, request))
        heapq.heapify(heap)
        self._seq = count
        self._offsets = total
        self._decoders = count
        self._batched = True
        return True

    def _unbatch(self) -> None:
        """Write every decoder's own counts back (before a plain step reads them)."""
        if not self._batched:
            return
        d = self._d
        block_size = self.config.block_size
        free_at = self.free_at
        for index in range(self._decoders):
            request = self.running[index]
            request.computed += d
            request.output += d
            request.blocks = -(-request.computed // block_size)
            request.last_token = free_at
        self._residues = [0] * block_size
        self._finishing = []
        self._offsets = 0
        self._decoders = 0
        self._batched = False

    def _next_deadline(self) -> float:
        """The earliest deadline of a request still in the engine (``inf`` if none)."""
        heap = self._deadline_heap
        while heap and heap[0][2].ended:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def _advance(self, t: float, until: float) -> tuple[Step | None, bool]:
        """Run the steps from ``t`` the aggregate batch can take; (their Step, slow?).

        Each step is :meth:`step`'s arithmetic on the aggregate: the decoders' block need
        is the count of offsets on a block boundary, their context tokens ``offsets +
        n·(d + 1)``, their finishes the heap's top; only the prefill in progress, the
        admitted requests and the finishing ones are visited, so a step costs
        O(admitted + finished), and a run of decode-only steps between two finishes
        costs one pass of float additions (the step durations, in :meth:`step`'s order).
        ``slow`` asks the caller for a plain :meth:`step` at the returned end: a deadline
        has passed, a request must be preempted, or the budget runs out inside the batch.
        """
        config = self.config
        block_size = config.block_size
        budget_full = config.max_num_batched_tokens
        max_seqs = config.max_num_seqs
        cost = self.cost
        base = cost.base + cost.prefill_token * 0
        per_seq, per_context = cost.decode_seq, cost.context_token
        cost_base, per_prefill = cost.base, cost.prefill_token
        detail = self.itl
        running, waiting = self.running, self.waiting
        residues, heap = self._residues, self._finishing
        d, offsets, n = self._d, self._offsets, self._decoders
        free = self.free_blocks
        prev = self.free_at
        busy = self.counts.busy_seconds
        start = t
        k = prefill_sum = decode_sum = context_sum = generated = prompt_counted = 0
        first: list[float] = []
        itl: list[tuple[float, int]] = []
        finished: list[RequestResult] = []
        admitted: list[str] = []
        stop = min(until, self._next_deadline()) if self._deadlines else until
        slow = False
        pending = self.pending
        horizon = stop
        while t < until:
            if pending:
                if pending[0].spec.arrival <= t:
                    self._arrive(t)
                horizon = min(stop, pending[0].spec.arrival) if pending else stop
            if not running and not waiting:
                break
            if t >= stop:
                slow = True
                break
            partial = running[-1] if len(running) > n else None
            if n > budget_full or (n == budget_full and partial is not None):
                # a guard: the budget would run out inside the batch. Admission keeps the
                # running requests within the budget, so plain steps never leave this
                slow = True
                break
            need = residues[-d % block_size]
            if need > free:
                slow = True
                break
            if (
                partial is None
                and n
                and (not waiting or len(running) >= max_seqs)
                and heap[0][0] > d
            ):
                # decode-only steps up to the next finish: only blocks and the clock stop them
                length = heap[0][0] - d
                fixed = base + per_seq * n
                context = offsets + n * (d + 1)
                # at most one new block per decoder every block_size steps: when even that
                # fits, count the blocks exactly only for the steps actually run
                enough = n * -(-length // block_size) <= free or (
                    _blocks_needed(residues, d, d + length, block_size, n) <= free
                )
                steps = 0
                if enough:
                    if prev != t and t < horizon:  # the first step follows an earlier end
                        end = t + (fixed + per_context * context)
                        busy += end - t
                        if detail:
                            itl.append((end - prev, n))
                        prev = t = end
                        context += n
                        steps = 1
                    if detail:
                        append = itl.append
                        while steps < length and t < horizon:
                            end = t + (fixed + per_context * context)
                            span = end - t
                            busy += span
                            append((span, n))
                            t = end
                            context += n
                            steps += 1
                    else:
                        while steps < length and t < horizon:
                            end = t + (fixed + per_context * context)
                            busy += end - t
                            t = end
                            context += n
                            steps += 1
                    prev = t
                    free -= _blocks_needed(residues, d, d + steps, block_size, n)
                else:
                    while steps < length and t < horizon:
                        need = residues[-(d + steps) % block_size]
                        if need > free:
                            break
                        end = t + (fixed + per_context * context)
                        busy += end - t
                        free -= need
                        if detail:
                            itl.append((end - prev, n))
                        prev = t = end
                        context += n
                        steps += 1
                context_sum += steps * (context - steps * n) + n * steps * (steps - 1) // 2
                decode_sum += n * steps
                generated += n * steps
                k += steps
                d += steps
                if steps < length and t < horizon and t < until:
                    slow = True  # out of blocks: the next step preempts
                    break
                continue
            # one step that admits, prefills or finishes
            free -= need
            budget = budget_full - n
            scheduled: list[tuple[_Request, int]] = []
            if partial is not None:
                new = min(partial.spec.prompt_tokens + partial.output - partial.computed, budget)
                extra = -(-(partial.computed + new) // block_size) - partial.blocks
                if extra > free:
                    free += need
                    slow = True  # the prefill in progress preempts
                    break
                free -= extra
                partial.blocks += extra
                scheduled.append((partial, new))
                budget -= new
            while waiting and budget > 0 and len(running) < max_seqs:
                request = waiting[0]
                new = min(request.tokens, budget)
                extra = -(-new // block_size)
                if extra > free:
                    break
                waiting.popleft()
                free -= extra
                request.blocks = extra
                running.append(request)
                scheduled.append((request, new))
                budget -= new
                if request.first_scheduled is None:
                    request.first_scheduled = t
                    admitted.append(request.spec.id)
            prefill = 0
            decode = n
            context = offsets + n * (d + 1)
            for request, new in scheduled:
                reached = request.computed + new
                if (
                    new == 1
                    and request.output > 0
                    and reached == request.spec.prompt_tokens + request.output
                ):
                    decode += 1
                else:
                    prefill += new
                context += reached
            # StepCost.seconds written out, the same terms in the same order
            end = t + (cost_base + per_prefill * prefill + per_seq * decode + per_context * context)
            busy += end - t
            k += 1
            prefill_sum += prefill
            decode_sum += decode
            context_sum += context
            gaps: dict[float, int] = {end - prev: n} if detail and n else {}
            generated += n
            after = d + 1
            while heap and heap[0][0] == d:
                _, _, request = heapq.heappop(heap)
                offset = request.computed
                offsets -= offset
                residues[offset % block_size] -= 1
                n -= 1
                request.computed = offset + after
                request.output += after
                request.last_token = end
                free += -(-request.computed // block_size)
                request.blocks = 0
                running.remove(request)
                spec = request.spec
                reason = "length" if spec.max_tokens == spec.output_tokens else "stop"
                finished.append(self._finish(request, end, reason))
            for request, new in scheduled:
                request.computed += new
                spec = request.spec
                if request.computed < spec.prompt_tokens + request.output:
                    continue
                request.output += 1
                generated += 1
                if request.first_token is None:
                    request.first_token = end
                    first.append(end - spec.arrival)
                    prompt_counted += spec.prompt_tokens
                elif detail:
                    assert request.last_token is not None
                    gap = end - request.last_token
                    gaps[gap] = gaps.get(gap, 0) + 1
                request.last_token = end
                if request.output >= spec.output_tokens:
                    free += request.blocks
                    request.blocks = 0
                    running.remove(request)
                    reason = "length" if spec.max_tokens == spec.output_tokens else "stop"
                    finished.append(self._finish(request, end, reason))
                    continue
                # a decoder from now on: into the aggregate
                request.computed -= after
                request.output -= after
                offsets += request.computed
                residues[request.computed % block_size] += 1
                n += 1
                heapq.heappush(heap, (spec.output_tokens - 1 - request.output, self._seq, request))
                self._seq += 1
            itl.extend(gaps.items())
            d = after
            prev = t = end
        self._d, self._offsets, self._decoders = d, offsets, n
        self.free_blocks = free
        self.counts.busy_seconds = busy
        if k == 0:
            return None, slow
        self.free_at = t
        self.counts.steps += k
        self.counts.generated += generated
        return (
            Step(
                start,
                t,
                k,
                prefill_sum,
                decode_sum,
                context_sum,
                generated=generated,
                first_tokens=tuple(first),
                itl=tuple(itl),
                prompt_tokens_counted=prompt_counted,
                finished=tuple(finished),
                admitted=tuple(admitted),
            ),
            slow,
        )


def _blocks_needed(residues: list[int], first: int, stop: int, block_size: int, n: int) -> int:
    """New KV blocks decode steps ``first``..``stop - 1`` take: a decoder whose offset is
    ``c`` (``residues[c % block_size]`` counts them; ``n`` in all) needs one at step ``j``
    when ``c + j`` is a multiple of the block size. Every ``block_size`` steps each needs
    one; the rest are the residues ``-j % block_size`` of the remaining steps, a run of
    consecutive indices going down (two slices when it wraps)."""
    steps = stop - first
    if steps <= 0:
        return 0
    full, rest = divmod(steps, block_size)
    total = full * n
    if rest:
        top = -first % block_size  # the first remaining step's residue; then top - 1, ...
        low = top - rest + 1
        if low >= 0:
            total += sum(residues[low : top + 1])
        else:
            total += sum(residues[: top + 1]) + sum(residues[block_size + low :])
    return total


def replay(
    engine: Engine,
    requests: list[RequestSpec],
    *,
    fast: bool = True,
    on_step: Callable[[Step], None] | None = None,
) -> list[RequestResult]:
    """Feed ``requests`` (sorted by arrival) to ``engine`` and run it dry; return results.

    The simulator's loop in miniature, and what the tests and benchmarks drive: steps run
    between arrivals, a request arriving during a step waits for the next one.
    """
    t = float("-inf")
    for spec in requests:
        if spec.arrival < t:
            raise ValueError(f"request {spec.id} arrives at {spec.arrival}, before {t}")
        _, steps = engine.run_until(t, spec.arrival, fast=fast)
        if on_step is not None:
            for step in steps:
                on_step(step)
        t = spec.arrival
        engine.add(spec)
    _, steps = engine.run_until(t, float("inf"), fast=fast)
    if on_step is not None:
        for step in steps:
            on_step(step)
    return list(engine.counts.results)
