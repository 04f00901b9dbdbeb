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
loop a simulator uses; it advances runs of identical decode-only steps without building
per-step objects (:meth:`Engine._decode_run`), and ``tests/unit/serving`` proves it lands
in exactly the state that stepping one by one does.
"""

from __future__ import annotations

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

    # -- state the metrics read -------------------------------------------------------

    @property
    def num_running(self) -> int:
        return len(self.running)

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    @property
    def kv_cache_usage(self) -> float:
        """Fraction of usable blocks held (vLLM's ``BlockPool.get_usage``)."""
        return 1.0 - self.free_blocks / self.config.usable_blocks

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting

    def held_blocks(self) -> int:
        """Blocks the requests hold (equals ``usable_blocks - free_blocks`` unless leaking)."""
        return sum(request.blocks for request in self.running)

    # -- requests in ----------------------------------------------------------------

    def add(self, spec: RequestSpec) -> None:
        """Queue a request at the back of the waiting queue.

        A request whose prompt and output can never fit the cache is refused here
        (vLLM refuses prompts longer than ``max_model_len`` at the API server).
        """
        if spec.id in self._by_id:
            raise ValueError(f"request {spec.id} is already in the engine")
        need = -(-(spec.prompt_tokens + spec.output_tokens) // self.config.block_size)
        if need > self.config.usable_blocks:
            raise ValueError(
                f"request {spec.id}: {spec.prompt_tokens + spec.output_tokens} tokens need "
                f"{need} KV blocks, the cache has {self.config.usable_blocks}"
            )
        request = _Request(spec)
        self.latest_arrival = max(self.latest_arrival, spec.arrival)
        if spec.deadline is not None:
            self._deadlines += 1
        self._by_id[spec.id] = request
        self.waiting.append(request)

    def abort(self, request_id: str, now: float) -> RequestResult | None:
        """Drop a request (the client went away); its blocks return to the pool."""
        request = self._by_id.get(request_id)
        if request is None:
            return None
        if request in self.running:
            self.running.remove(request)
        else:
            self.waiting.remove(request)
        return self._finish(request, now, "abort")

    # -- one step -------------------------------------------------------------------

    def step(self, now: float) -> Step | None:
        """Schedule and run one step starting at ``now``; ``None`` when there is no work."""
        if now < self.free_at:
            raise ValueError(f"a step starts at {now} before the last one ends at {self.free_at}")
        aborted = self._expire(now)
        if self.idle:
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
        as it waits for vLLM's ``schedule()`` call. With ``fast`` (the default), runs of
        decode-only steps in which nothing could change but the token counts come back
        as one aggregated :class:`Step`; the engine's state is the same either way.
        """
        steps: list[Step] = []
        t = max(now, self.free_at, self.latest_arrival)
        while t < until and not self.idle:
            run = self._decode_run(t, until) if fast else None
            step = run if run is not None else self.step(t)
            if step is None:
                break
            steps.append(step)
            t = step.end
        return t, steps

    def _decode_run(self, now: float, until: float) -> Step | None:
        """Advance k >= 1 decode-only steps at once, or return ``None`` to step normally.

        Eligible when every running request is decoding, they all fit the token budget,
        and no waiting request can be admitted (none waits, or ``max_num_seqs`` are
        running). The run carries on through steps that finish requests (the batch
        shrinks; their blocks return to the pool) as long as nothing could be admitted
        after them, and stops before the first step that would need more blocks than are
        free, start at or after ``until`` or a deadline, or follow a finish while requests
        wait. Each step is the arithmetic :meth:`step` does, in the same order (its
        duration is :meth:`StepCost.seconds` with no prefill, written out), so times and
        metrics agree to the last bit.
        """
        running = self.running
        n = len(running)
        config = self.config
        if n == 0 or n > config.max_num_batched_tokens:
            return None
        waiting = bool(self.waiting)
        if waiting and n < config.max_num_seqs:
            return None
        if now < self.free_at:
            return None
        block_size = config.block_size
        residues = [0] * block_size
        context = 0
        for request in running:
            if request.output == 0 or request.computed != request.tokens - 1:
                return None
            residues[request.computed % block_size] += 1
            context += request.computed + 1
        stop = until
        if self._deadlines:
            for request in (*running, *self.waiting):
                deadline = request.spec.deadline
                if deadline is not None and deadline < stop:
                    stop = deadline
        # requests by the step (0-based, within the run) whose token finishes them
        finishing: dict[int, list[_Request]] = {}
        for request in running:
            last = request.spec.output_tokens - request.output - 1
            finishing.setdefault(last, []).append(request)
        cost = self.cost
        # StepCost.seconds(0, n, context) term by term: ((base + 0·prefill) + d·n) + c·context
        base = cost.base + cost.prefill_token * 0
        per_seq, per_context = cost.decode_seq, cost.context_token
        free = self.free_blocks
        detail = self.itl
        ends: list[float] = []
        batch: list[int] = []
        done: list[tuple[_Request, int, float]] = []
        busy = self.counts.busy_seconds
        t = now
        k = 0
        total_context = 0
        generated = 0
        for last in sorted(finishing):
            # steps k..last run with the same batch; ``last`` finishes some of it
            length = last + 1 - k
            fixed = base + per_seq * n
            needed = _blocks_needed(residues, k, last + 1, block_size)
            if needed <= free:
                # blocks suffice for the whole segment: only the clock can stop it
                steps = 0
                while steps < length and t < stop:
                    end = t + (fixed + per_context * context)
                    busy += end - t
                    if detail:
                        ends.append(end)
                        batch.append(n)
                    context += n
                    t = end
                    steps += 1
                free -= (
                    needed
                    if steps == length
                    else _blocks_needed(residues, k, k + steps, block_size)
                )
            else:
                steps = 0
                while steps < length and t < stop:
                    new_blocks = residues[(-(k + steps)) % block_size]
                    if new_blocks > free:
                        break
                    end = t + (fixed + per_context * context)
                    busy += end - t
                    free -= new_blocks
                    if detail:
                        ends.append(end)
                        batch.append(n)
                    context += n
                    t = end
                    steps += 1
            # context summed over the segment's steps, exactly (integers)
            total_context += steps * (context - steps * n) + n * steps * (steps - 1) // 2
            generated += n * steps
            k += steps
            if steps < length:
                break
            for request in finishing[last]:
                computed = request.computed + k
                free += -(-computed // block_size)
                residues[request.computed % block_size] -= 1
                context -= computed + 1
                n -= 1
                done.append((request, k, t))
            if waiting:
                break
        if k == 0:
            return None
        itl: list[tuple[float, int]] = []
        if detail:
            first: dict[float, int] = {}
            for request in running:
                assert request.last_token is not None
                gap = ends[0] - request.last_token
                first[gap] = first.get(gap, 0) + 1
            itl = list(first.items())
            itl.extend((ends[j] - ends[j - 1], batch[j]) for j in range(1, k))
        finished: list[RequestResult] = []
        if done:
            gone = {id(request) for request, _steps, _end in done}
            self.running = [request for request in running if id(request) not in gone]
            for request, steps, end in done:
                request.computed += steps
                request.output += steps
                request.last_token = end
                spec = request.spec
                reason = "length" if spec.max_tokens == spec.output_tokens else "stop"
                request.blocks = 0  # already back in ``free`` (the run needed them)
                finished.append(self._finish(request, end, reason))
        for request in self.running:
            request.computed += k
            request.output += k
            request.blocks = -(-request.computed // block_size)
            request.last_token = t
        self.free_blocks = free
        self.free_at = t
        self.counts.steps += k
        self.counts.generated += generated
        self.counts.busy_seconds = busy
        return Step(
            now,
            t,
            k,
            0,
            generated,
            total_context,
            generated=generated,
            itl=tuple(itl),
            finished=tuple(finished),
        )


def _blocks_needed(residues: list[int], first: int, stop: int, block_size: int) -> int:
    """New KV blocks decode steps ``first``..``stop - 1`` of a run take: a request whose
    computed tokens were ``c`` at the run's start (``residues[c % block_size]`` counts
    them) needs one at step ``j`` when ``c + j`` is a multiple of the block size."""
    if stop <= first:
        return 0
    total = 0
    for residue, count in enumerate(residues):
        if count:
            m = -residue % block_size  # steps j with j % block_size == m
            total += count * ((stop - 1 - m) // block_size - (first - 1 - m) // block_size)
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
