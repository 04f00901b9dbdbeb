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
counter, per-request offsets, a heap of finishing steps; :mod:`gpuscale.serving._batch`)
so a step costs O(admitted + finished) rather than O(running), and many steps come back
in one aggregated :class:`Step`; ``tests/unit/serving`` proves it lands in exactly the
state that stepping one by one does. The records (settings, requests, steps) are in
:mod:`gpuscale.serving._records`.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable

from gpuscale.serving import _batch
from gpuscale.serving._records import (
    EngineConfig,
    RequestResult,
    RequestSpec,
    Step,
    StepCost,
    _Counts,
    _Request,
    check_tokens,
    step_work,
)

__all__ = [
    "Engine",
    "EngineConfig",
    "RequestResult",
    "RequestSpec",
    "Step",
    "StepCost",
    "replay",
]


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
        self._usable_blocks = config.usable_blocks
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
        # the aggregate batch (:func:`gpuscale.serving._batch.enter`): valid while ``_batched``
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
        _batch.leave(self)
        return sum(request.blocks for request in self.running)

    # -- requests in ----------------------------------------------------------------

    def add(self, spec: RequestSpec) -> None:
        """Queue a request at the back of the waiting queue.

        A request whose prompt and output can never fit the cache is refused here
        (vLLM refuses prompts longer than ``max_model_len`` at the API server).
        """
        self.waiting.append(
            self._admit(
                spec.id,
                spec.arrival,
                spec.prompt_tokens,
                spec.output_tokens,
                max_tokens=spec.max_tokens,
                deadline=spec.deadline,
            )
        )
        self.latest_arrival = max(self.latest_arrival, spec.arrival)

    def arrive(
        self,
        request_id: str,
        arrival: float,
        prompt_tokens: int,
        output_tokens: int,
        *,
        max_tokens: int | None = None,
        deadline: float | None = None,
    ) -> None:
        """Queue a request (a :class:`RequestSpec`'s fields, in its order) that arrives at
        ``arrival``, which may be later than the engine has run to: it joins
        the waiting queue at the first step that starts at or after its arrival, exactly
        as if :meth:`run_until` had been run to its arrival and :meth:`add` called then.
        Arrivals must come in order. This lets a simulator hand over every arrival at once
        and run the engine only when something reads it, without building a spec each.
        """
        check_tokens(request_id, prompt_tokens, output_tokens)
        pending = self.pending
        if pending and arrival < pending[-1].arrival:
            raise ValueError(f"request {request_id} arrives before {pending[-1].id}")
        pending.append(
            self._admit(
                request_id,
                arrival,
                prompt_tokens,
                output_tokens,
                max_tokens=max_tokens,
                deadline=deadline,
            )
        )

    def _admit(
        self,
        request_id: str,
        arrival: float,
        prompt_tokens: int,
        output_tokens: int,
        *,
        max_tokens: int | None,
        deadline: float | None,
    ) -> _Request:
        """A new request's state, once it is known to fit (vLLM's ``max_model_len``)."""
        if request_id in self._by_id:
            raise ValueError(f"request {request_id} is already in the engine")
        need = -(-(prompt_tokens + output_tokens) // self.config.block_size)
        if need > self._usable_blocks:
            raise ValueError(
                f"request {request_id}: {prompt_tokens + output_tokens} tokens need "
                f"{need} KV blocks, the cache has {self._usable_blocks}"
            )
        request = _Request(
            request_id,
            arrival,
            prompt_tokens,
            output_tokens,
            max_tokens=max_tokens,
            deadline=deadline,
        )
        if deadline is not None:
            self._deadlines += 1
            heapq.heappush(self._deadline_heap, (deadline, self._added, request))
            self._added += 1
        self._by_id[request_id] = request
        return request

    def _arrive(self, now: float) -> None:
        """Move the pending requests that have arrived by ``now`` to the waiting queue."""
        pending, waiting = self.pending, self.waiting
        while pending and pending[0].arrival <= now:
            waiting.append(pending.popleft())

    def abort(self, request_id: str, now: float) -> RequestResult | None:
        """Drop a request (the client went away); its blocks return to the pool."""
        request = self._by_id.get(request_id)
        if request is None:
            return None
        _batch.leave(self)
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
        _batch.leave(self)
        every = (*self.running, *self.waiting, *self.pending)
        ids = [request.id for request in every]
        for request in every:
            request.ended = True
            del self._by_id[request.id]
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
        _batch.leave(self)
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
            new = request.prompt_tokens + request.output - request.computed
            new = min(new, budget)
            need = -(-(request.computed + new) // block_size) - request.blocks
            schedulable = True
            while need > self.free_blocks:
                victim = running.pop()
                self._preempt(victim)
                preempted.append(victim.id)
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
                    admitted.append(request.id)
        prefill, decode, context = step_work(scheduled)
        end = now + self.cost.seconds(prefill, decode, context)
        self.free_at = end
        self.counts.steps += 1
        self.counts.busy(now, end)
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
            if request.computed < request.prompt_tokens + request.output:
                continue
            request.output += 1
            tokens.append((request.id, request.output))
            if request.first_token is None:
                request.first_token = end
                first.append(end - request.arrival)
                prompt_counted += request.prompt_tokens
            elif self.itl:
                assert request.last_token is not None
                gap = end - request.last_token
                itl[gap] = itl.get(gap, 0) + 1
            request.last_token = end
            if request.output >= request.output_tokens:
                self.running.remove(request)
                reason = "length" if request.max_tokens == request.output_tokens else "stop"
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
        del self._by_id[request.id]
        if request.deadline is not None:
            self._deadlines -= 1
        result = RequestResult(  # by position: the fields' order (the hot path's cost)
            request.id,
            request.arrival,
            now,
            reason,
            request.prompt_tokens,
            request.output,
            request.first_scheduled,
            request.first_token,
            request.preemptions,
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
            if request.deadline is not None and request.deadline <= now
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
        the aggregate batch can take (:func:`gpuscale.serving._batch.advance`) come back
        as one aggregated :class:`Step`, the others one by one; the engine's state is the
        same either way.
        """
        steps: list[Step] = []
        t = max(now, self.free_at, self.latest_arrival)
        pending = self.pending
        while t < until:
            if not self.running and not self.waiting:
                if not pending or pending[0].arrival >= until:
                    break
                t = max(t, pending[0].arrival)  # idle until the next arrival
            if fast and _batch.enter(self):
                run, slow = _batch.advance(self, t, until)
                if run is not None:
                    steps.append(run)
                    t = run.end
                if not slow:
                    continue
                _batch.leave(self)
            step = self.step(t)
            if step is None:
                break
            steps.append(step)
            t = step.end
        self._arrive(until)
        return t, steps


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
