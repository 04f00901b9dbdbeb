"""The aggregate batch (``Engine.run_until``'s fast path) against the plain reference,
stepping one by one, on random request streams (hypothesis, derandomized).

The streams are made to reach every branch of the aggregate: KV pools small enough that
requests are preempted (recompute) and the batch must fall back to a plain step, token
budgets smaller than ``max_num_seqs`` (the budget runs out inside the batch), prompts
longer than the budget (chunked prefill across steps), deadlines that abort waiting and
running requests, and client aborts between calls. After every call both engines must be
in the same observable state, and at the end give the same results and metrics to the bit.
"""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.serving import Engine, EngineConfig, RequestSpec, ServingMetrics, StepCost

COST = StepCost(base=0.013, prefill_token=3e-5, decode_seq=7e-5, context_token=1.1e-6)
SETTINGS = settings(derandomize=True, max_examples=150, deadline=None, database=None)

events = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=1.5),  # gap since the previous event
        st.integers(min_value=1, max_value=200),  # prompt tokens
        st.integers(min_value=1, max_value=90),  # output tokens
        st.one_of(st.none(), st.floats(min_value=0.05, max_value=8.0)),  # timeout
        st.one_of(st.none(), st.integers(min_value=0, max_value=60)),  # abort an earlier one
        st.sampled_from([0.0, 0.0, 0.0, 0.004, 0.03]),  # the engine idles first (``now``)
    ),
    min_size=1,
    max_size=50,
)


def drive(cfg: EngineConfig, stream, *, fast: bool, itl: bool = True):  # type: ignore[no-untyped-def]
    engine = Engine(cfg, COST, itl=itl)
    metrics = ServingMetrics("m")
    states = []
    calls = 0
    t = float("-inf")
    now = 0.0
    for index, (gap, prompt, output, timeout, abort, lag) in enumerate(stream):
        now += gap
        # ``run_until(now, ...)`` with ``now`` after the last step's end: the batch then
        # starts with a gap since its tokens' last ones
        start = max(t, engine.free_at) + lag if lag else t
        _, steps = engine.run_until(start, now, fast=fast)
        calls += len(steps)
        for step in steps:
            metrics.record(step)
        t = now
        total = prompt + output
        if -(-total // cfg.block_size) <= cfg.usable_blocks:
            engine.add(
                RequestSpec(
                    f"r{index}",
                    now,
                    prompt,
                    output,
                    max_tokens=output if index % 3 == 0 else None,
                    deadline=None if timeout is None else now + timeout,
                )
            )
        if abort is not None and abort < index:
            engine.abort(f"r{abort}", now)
        states.append(
            (
                engine.num_running,
                engine.num_waiting,
                engine.free_blocks,
                engine.free_at,
                engine.counts.steps,
                engine.counts.busy_seconds,
                len(engine.counts.results),
            )
        )
    _, steps = engine.run_until(t, float("inf"), fast=fast)
    calls += len(steps)
    for step in steps:
        metrics.record(step)
    assert engine.idle
    assert engine.held_blocks() == 0
    assert engine.free_blocks == cfg.usable_blocks
    return states, list(engine.counts.results), asdict(metrics), (engine, calls)


@SETTINGS
@given(
    stream=events,
    blocks=st.integers(min_value=8, max_value=120),
    seqs=st.integers(min_value=1, max_value=12),
    budget=st.one_of(st.integers(min_value=1, max_value=40), st.integers(41, 400)),
    block_size=st.sampled_from([4, 16]),
    itl=st.booleans(),
)
def test_aggregate_engine_equals_stepping_one_by_one(  # noqa: PLR0917 (hypothesis)
    stream, blocks, seqs, budget, block_size, itl
) -> None:
    cfg = EngineConfig(
        num_gpu_blocks=blocks,
        max_num_seqs=seqs,
        max_num_batched_tokens=budget,
        block_size=block_size,
    )
    slow_states, slow, slow_metrics, (slow_engine, _) = drive(cfg, stream, fast=False, itl=itl)
    fast_states, fast, fast_metrics, (fast_engine, _) = drive(cfg, stream, fast=True, itl=itl)
    assert fast_states == slow_states
    assert fast == slow
    assert fast_metrics == slow_metrics
    assert fast_engine.counts.steps == slow_engine.counts.steps
    assert fast_engine.counts.preemptions == slow_engine.counts.preemptions
    assert fast_engine.counts.busy_seconds == slow_engine.counts.busy_seconds
    assert fast_engine.free_at == slow_engine.free_at


def test_the_streams_reach_preemption_aborts_and_long_runs() -> None:
    """The generator is not vacuous: a small pool preempts, deadlines abort, and the fast
    path still takes most steps in aggregate."""
    cfg = EngineConfig(num_gpu_blocks=12, max_num_seqs=8, max_num_batched_tokens=64, block_size=4)
    stream = [(0.01, 12, 20, 0.25 if i % 4 == 0 else None, None, 0.0) for i in range(12)]
    stream.append((0.02, 10, 5, None, 11, 0.0))
    slow_states, slow, _, (slow_engine, slow_calls) = drive(cfg, stream, fast=False)
    fast_states, fast, _, (fast_engine, fast_calls) = drive(cfg, stream, fast=True)
    assert fast == slow
    assert fast_states == slow_states
    assert slow_engine.counts.preemptions > 0
    assert sum(result.finish_reason == "abort" for result in slow) >= 2  # deadline and client
    assert fast_engine.counts.steps == slow_engine.counts.steps == slow_calls > 100
    assert fast_calls < slow_calls / 3


def drive_arrivals(cfg: EngineConfig, stream, *, itl: bool = True):  # type: ignore[no-untyped-def]
    """The simulator's way: every arrival handed over with :meth:`Engine.arrive` without
    running the engine, which runs only when something needs it (here: a client abort)."""
    engine = Engine(cfg, COST, itl=itl)
    metrics = ServingMetrics("m")
    t = float("-inf")
    now = 0.0
    for index, (gap, prompt, output, timeout, abort, _lag) in enumerate(stream):
        now += gap
        if abort is not None and abort < index:
            _, steps = engine.run_until(t, now)
            for step in steps:
                metrics.record(step)
            t = now
        if -(-(prompt + output) // cfg.block_size) <= cfg.usable_blocks:
            engine.arrive(
                f"r{index}",
                now,
                prompt,
                output,
                max_tokens=output if index % 3 == 0 else None,
                deadline=None if timeout is None else now + timeout,
            )
        if abort is not None and abort < index:
            engine.abort(f"r{abort}", now)
    _, steps = engine.run_until(t, float("inf"))
    for step in steps:
        metrics.record(step)
    assert engine.idle
    assert engine.free_blocks == cfg.usable_blocks
    return list(engine.counts.results), asdict(metrics), engine


@SETTINGS
@given(
    stream=events,
    blocks=st.integers(min_value=8, max_value=120),
    seqs=st.integers(min_value=1, max_value=12),
    budget=st.one_of(st.integers(min_value=1, max_value=40), st.integers(41, 400)),
    itl=st.booleans(),
)
def test_arrivals_handed_over_at_once_equal_adding_each_in_time(
    stream, blocks, seqs, budget, itl
) -> None:
    cfg = EngineConfig(
        num_gpu_blocks=blocks, max_num_seqs=seqs, max_num_batched_tokens=budget, block_size=4
    )
    stream = [(*event[:5], 0.0) for event in stream]
    _, slow, slow_metrics, (slow_engine, _) = drive(cfg, stream, fast=False, itl=itl)
    fast, fast_metrics, fast_engine = drive_arrivals(cfg, stream, itl=itl)
    assert fast == slow
    assert fast_metrics == slow_metrics
    assert fast_engine.counts.steps == slow_engine.counts.steps
    assert fast_engine.counts.busy_seconds == slow_engine.counts.busy_seconds
    assert fast_engine.free_at == slow_engine.free_at
