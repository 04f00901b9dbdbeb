"""The aggregate batch: :meth:`Engine.run_until`'s fast path (``docs/serving.md``, "The
fast path"). Pure.

In aggregate, the running decoders share one decode counter (``engine._d``): a decoder's
``computed`` and ``output`` are kept minus it, so a step advances them all by adding one
to the counter; the batch keeps the sum of their offsets (the context tokens attended),
their count by residue modulo the block size (who needs a new KV block at which step) and
a heap of the counter values at which each finishes. A step then costs O(admitted +
finished) instead of O(running), and :func:`advance` runs step after step in one call,
doing :meth:`Engine.step`'s arithmetic in the same order, so results are the same to the
bit (``tests/unit/serving/test_aggregate.py``). What it cannot take (a deadline passed, a
preemption) it hands back to a plain :meth:`Engine.step` after :func:`leave`.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING

from gpuscale.serving._records import RequestResult, Step, _Request, step_work

if TYPE_CHECKING:
    from gpuscale.serving._engine import Engine

__all__ = ["advance", "enter", "leave"]


def enter(engine: Engine) -> bool:
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
    if engine._batched:
        return True
    running = engine.running
    free_at = engine.free_at
    count = len(running)
    last = running[-1] if running else None
    if last is not None and not (
        last.output > 0 and last.computed == last.tokens - 1 and last.last_token == free_at
    ):
        count -= 1
    d = engine._d
    block_size = engine.config.block_size
    for index in range(count):
        request = running[index]
        if (
            request.output == 0
            or request.computed != request.tokens - 1
            or request.last_token != free_at
        ):
            return False
    residues = engine._residues
    heap = engine._finishing
    total = 0
    for index in range(count):
        request = running[index]
        request.computed -= d
        request.output -= d
        total += request.computed
        residues[request.computed % block_size] += 1
        heap.append((request.output_tokens - 1 - request.output, index, request))
    heapq.heapify(heap)
    engine._seq = count
    engine._offsets = total
    engine._decoders = count
    engine._batched = True
    return True


def leave(engine: Engine) -> None:
    """Write every decoder's own counts back (before a plain step reads them)."""
    if not engine._batched:
        return
    d = engine._d
    block_size = engine.config.block_size
    free_at = engine.free_at
    for index in range(engine._decoders):
        request = engine.running[index]
        request.computed += d
        request.output += d
        request.blocks = -(-request.computed // block_size)
        request.last_token = free_at
    engine._residues = [0] * block_size
    engine._finishing = []
    engine._offsets = 0
    engine._decoders = 0
    engine._batched = False


def _next_deadline(engine: Engine) -> float:
    """The earliest deadline of a request still in the engine (``inf`` if none)."""
    heap = engine._deadline_heap
    while heap and heap[0][2].ended:
        heapq.heappop(heap)
    return heap[0][0] if heap else math.inf


def advance(engine: Engine, t: float, until: float) -> tuple[Step | None, bool]:
    """Run the steps from ``t`` the aggregate batch can take; (their Step, slow?).

    Each step is :meth:`Engine.step`'s arithmetic on the aggregate: the decoders' block need
    is the count of offsets on a block boundary, their context tokens ``offsets +
    n·(d + 1)``, their finishes the heap's top; only the prefill in progress, the
    admitted requests and the finishing ones are visited, so a step costs
    O(admitted + finished), and a run of decode-only steps between two finishes
    costs one pass of float additions (the step durations, in :meth:`Engine.step`'s order).
    ``slow`` asks the caller for a plain :meth:`Engine.step` at the returned end: a deadline
    has passed, a request must be preempted, or the budget runs out inside the batch.
    """
    config = engine.config
    block_size = config.block_size
    budget_full = config.max_num_batched_tokens
    max_seqs = config.max_num_seqs
    cost = engine.cost
    base = cost.base + cost.prefill_token * 0
    per_seq, per_context = cost.decode_seq, cost.context_token
    cost_base, per_prefill = cost.base, cost.prefill_token
    detail = engine.itl
    running, waiting = engine.running, engine.waiting
    residues, heap = engine._residues, engine._finishing
    d, offsets, n = engine._d, engine._offsets, engine._decoders
    free = engine.free_blocks
    prev = engine.free_at
    start = t
    k = prefill_sum = decode_sum = context_sum = generated = prompt_counted = 0
    first: list[float] = []
    itl: list[tuple[float, int]] = []
    finished: list[RequestResult] = []
    admitted: list[str] = []
    stop = min(until, _next_deadline(engine)) if engine._deadlines else until
    slow = False
    pending = engine.pending
    horizon = stop
    while t < until:
        if pending:
            if pending[0].arrival <= t:
                engine._arrive(t)
            if pending:
                arrival = pending[0].arrival
                horizon = arrival if arrival < stop else stop
            else:
                horizon = stop
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
        if partial is None and n and (not waiting or len(running) >= max_seqs):
            # decode-only steps up to and including the next one that finishes requests
            # (nothing can be admitted after it either: no arrival comes before ``horizon``)
            length = heap[0][0] - d + 1
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
                    if detail:
                        itl.append((end - prev, n))
                    prev = t = end
                    context += n
                    steps = 1
                if detail:
                    append = itl.append
                    while steps < length and t < horizon:
                        end = t + (fixed + per_context * context)
                        append((end - t, n))
                        t = end
                        context += n
                        steps += 1
                else:  # the hottest loop: only the clock (and the context) moves
                    # the context counted in a float: a whole number far below 2**53, so
                    # exact, and ``per_context * tokens`` the same product as with the
                    # int (which CPython converts to that float), on the float fast path
                    tokens = before = float(context)
                    more = float(n)
                    for _ in range(length - steps):
                        if t >= horizon:
                            break
                        t += fixed + per_context * tokens
                        tokens += more
                    ran = int(tokens - before) // n
                    steps += ran
                    context += n * ran
                prev = t
                free -= _blocks_needed(residues, d, d + steps, block_size, n)
            else:
                while steps < length and t < horizon:
                    need = residues[-(d + steps) % block_size]
                    if need > free:
                        break
                    end = t + (fixed + per_context * context)
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
            if steps == length:  # the last one finished the heap's top
                count, gone, freed = _finish_decoders(engine, d - 1, t, finished)
                n -= count
                offsets -= gone
                free += freed
            elif t < horizon and t < until:
                slow = True  # out of blocks: the next step preempts
                break
            continue
        # one step that admits, prefills or finishes
        free -= need
        budget = budget_full - n
        scheduled: list[tuple[_Request, int]] = []
        if partial is not None:
            new = min(partial.prompt_tokens + partial.output - partial.computed, budget)
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
            new = min(request.prompt_tokens + request.output, budget)
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
                admitted.append(request.id)
        # the aggregate's n decoders, then the requests scheduled one by one (ints: the
        # sums are the ordinary step's whatever the order)
        prefill, decode, context = step_work(scheduled)
        decode += n
        context += offsets + n * (d + 1)
        # StepCost.seconds written out, the same terms in the same order
        end = t + (cost_base + per_prefill * prefill + per_seq * decode + per_context * context)
        k += 1
        prefill_sum += prefill
        decode_sum += decode
        context_sum += context
        gaps: dict[float, int] = {end - prev: n} if detail and n else {}
        generated += n
        after = d + 1
        if heap and heap[0][0] == d:
            count, gone, freed = _finish_decoders(engine, d, end, finished)
            n -= count
            offsets -= gone
            free += freed
        for request, new in scheduled:
            request.computed += new
            if request.computed < request.prompt_tokens + request.output:
                continue
            request.output += 1
            generated += 1
            if request.first_token is None:
                request.first_token = end
                first.append(end - request.arrival)
                prompt_counted += request.prompt_tokens
            elif detail:
                assert request.last_token is not None
                gap = end - request.last_token
                gaps[gap] = gaps.get(gap, 0) + 1
            request.last_token = end
            if request.output >= request.output_tokens:
                free += request.blocks
                request.blocks = 0
                running.remove(request)
                reason = "length" if request.max_tokens == request.output_tokens else "stop"
                finished.append(engine._finish(request, end, reason))
                continue
            # a decoder from now on: into the aggregate
            request.computed -= after
            request.output -= after
            offsets += request.computed
            residues[request.computed % block_size] += 1
            n += 1
            heapq.heappush(heap, (request.output_tokens - 1 - request.output, engine._seq, request))
            engine._seq += 1
        itl.extend(gaps.items())
        d = after
        prev = t = end
    engine._d, engine._offsets, engine._decoders = d, offsets, n
    engine.free_blocks = free
    if k == 0:
        return None, slow
    engine.counts.busy(start, t)
    engine.free_at = t
    engine.counts.steps += k
    engine.counts.generated += generated
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


def _finish_decoders(
    engine: Engine, at: int, end: float, finished: list[RequestResult]
) -> tuple[int, int, int]:
    """Finish the decoders whose last token was sampled at the step with counter ``at``
    (ending at ``end``), in running order: (how many, their offsets' sum, blocks freed)."""
    heap, residues, running = engine._finishing, engine._residues, engine.running
    block_size = engine.config.block_size
    after = at + 1
    count = gone = freed = 0
    while heap and heap[0][0] == at:
        _, _, request = heapq.heappop(heap)
        offset = request.computed
        gone += offset
        residues[offset % block_size] -= 1
        count += 1
        request.computed = offset + after
        request.output += after
        request.last_token = end
        freed += -(-request.computed // block_size)
        request.blocks = 0
        running.remove(request)
        reason = "length" if request.max_tokens == request.output_tokens else "stop"
        finished.append(engine._finish(request, end, reason))
    return count, gone, freed


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
