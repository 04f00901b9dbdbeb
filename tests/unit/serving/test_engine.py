"""The step model against schedules worked out by hand from vLLM's v1 scheduler rules.

Each case names the rule of ``vllm/v1/core/sched/scheduler.py`` it exercises. Step costs
are chosen so durations are exact in binary floating point where times are compared.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.serving import Engine, EngineConfig, RequestSpec, ServingMetrics, StepCost, replay
from gpuscale.serving._batch import _blocks_needed

COST = StepCost(base=1.0, prefill_token=0.125, decode_seq=0.25, context_token=0.0)


def spec(name: str, prompt: int, output: int, arrival: float = 0.0, **kw: object) -> RequestSpec:
    return RequestSpec(name, arrival, prompt, output, **kw)  # type: ignore[arg-type]


def test_admission_stops_at_max_num_seqs() -> None:
    engine = Engine(
        EngineConfig(num_gpu_blocks=100, max_num_seqs=2, max_num_batched_tokens=100), COST
    )
    for name in ("r0", "r1", "r2"):
        engine.add(spec(name, 8, 3))
    first = engine.step(0.0)
    assert first is not None
    assert first.admitted == ("r0", "r1")
    assert (first.prefill_tokens, first.decode_seqs, first.context_tokens) == (16, 0, 16)
    assert first.end == 1.0 + 16 * 0.125
    assert first.tokens == (("r0", 1), ("r1", 1))
    assert engine.num_waiting == 1
    second = engine.step(first.end)
    assert second is not None
    assert (second.prefill_tokens, second.decode_seqs, second.context_tokens) == (0, 2, 18)
    assert second.admitted == ()
    third = engine.step(second.end)
    assert third is not None
    assert [r.id for r in third.finished] == ["r0", "r1"]
    assert [r.finish_reason for r in third.finished] == ["stop", "stop"]
    fourth = engine.step(third.end)
    assert fourth is not None
    assert fourth.admitted == ("r2",)
    result = next(r for r in replay(engine, []) if r.id == "r2")
    assert result.queue_time == third.end
    assert result.ttft == fourth.end


def test_token_budget_chunks_prefill_and_leftover_budget_admits_the_next() -> None:
    engine = Engine(
        EngineConfig(num_gpu_blocks=100, max_num_seqs=4, max_num_batched_tokens=8), COST
    )
    engine.add(spec("long", 20, 2))
    engine.add(spec("short", 4, 2))
    chunks = []
    t = 0.0
    for _ in range(3):
        step = engine.step(t)
        assert step is not None
        chunks.append((step.prefill_tokens, step.admitted, step.tokens))
        t = step.end
    assert chunks == [
        (8, ("long",), ()),
        (8, (), ()),
        (8, ("short",), (("long", 1), ("short", 1))),
    ]


def test_waiting_request_without_blocks_waits_and_is_not_preempting() -> None:
    config = EngineConfig(num_gpu_blocks=4, max_num_seqs=4, max_num_batched_tokens=64, block_size=4)
    engine = Engine(config, COST)
    engine.add(spec("a", 8, 2))
    engine.add(spec("b", 5, 2))
    step = engine.step(0.0)
    assert step is not None
    assert step.admitted == ("a",)
    assert engine.num_waiting == 1
    assert engine.free_blocks == 1


def test_preemption_takes_the_newest_running_request_and_recomputes_it() -> None:
    config = EngineConfig(num_gpu_blocks=5, max_num_seqs=4, max_num_batched_tokens=64, block_size=4)
    engine = Engine(config, COST)
    engine.add(spec("r0", 7, 3))
    engine.add(spec("r1", 4, 5))
    s1 = engine.step(0.0)
    assert s1 is not None
    assert s1.admitted == ("r0", "r1")
    assert engine.free_blocks == 1
    s2 = engine.step(s1.end)
    assert s2 is not None
    assert s2.preempted == ()
    assert engine.free_blocks == 0
    s3 = engine.step(s2.end)
    assert s3 is not None
    assert s3.preempted == ("r1",)
    assert s3.tokens == (("r0", 3),)
    assert [r.id for r in s3.finished] == ["r0"]
    assert engine.free_blocks == 4
    assert engine.num_waiting == 1
    s4 = engine.step(s3.end)
    assert s4 is not None
    assert s4.prefill_tokens == 6
    assert s4.tokens == (("r1", 3),)
    assert s4.admitted == ()
    results = replay(engine, [])
    r1 = next(r for r in results if r.id == "r1")
    assert r1.preemptions == 1
    assert r1.output_tokens == 5
    assert r1.ttft == s1.end
    assert engine.free_blocks == config.usable_blocks


def test_preempted_request_goes_to_the_front_of_the_queue() -> None:
    config = EngineConfig(num_gpu_blocks=5, max_num_seqs=2, max_num_batched_tokens=64, block_size=4)
    engine = Engine(config, COST)
    for name, prompt, out in (("r0", 7, 3), ("r1", 4, 5), ("r2", 1, 1)):
        engine.add(spec(name, prompt, out))
    t = 0.0
    for _ in range(3):
        step = engine.step(t)
        assert step is not None
        t = step.end
    assert [request.id for request in engine.waiting] == ["r1", "r2"]


def test_deadline_aborts_and_frees_blocks() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=100), COST)
    engine.add(spec("slow", 16, 100, deadline=5.0))
    results = replay(engine, [])
    assert [(r.id, r.finish_reason) for r in results] == [("slow", "abort")]
    assert engine.free_blocks == engine.config.usable_blocks
    metrics = ServingMetrics("m")
    assert metrics.success["abort"] == 0


def test_deadlines_out_of_order_abort_each_request_at_its_own() -> None:
    # "early" is added after "late" with an earlier deadline: the fast path (the aggregate
    # batch) must stop for each, as stepping one by one does
    outcomes = []
    for fast in (True, False):
        engine = Engine(EngineConfig(num_gpu_blocks=100), COST)
        engine.add(spec("late", 4, 50, deadline=20.0))
        engine.add(spec("early", 4, 50, deadline=5.0))
        engine.add(spec("last", 4, 50, deadline=30.0))
        engine.run_until(0.0, 100.0, fast=fast)
        outcomes.append(list(engine.counts.results))
    assert outcomes[0] == outcomes[1]
    ended = {result.id: result for result in outcomes[0]}
    for name, deadline in (("early", 5.0), ("late", 20.0), ("last", 30.0)):
        assert ended[name].finish_reason == "abort"
        assert deadline <= ended[name].finished < deadline + 2.0  # a step is under 2 s
    assert [result.id for result in outcomes[0]] == ["early", "late", "last"]


def test_length_when_output_reaches_max_tokens() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=100), COST)
    results = replay(engine, [spec("a", 4, 3, max_tokens=3)])
    assert results[0].finish_reason == "length"
    assert results[0].output_tokens == 3


def test_request_that_cannot_fit_the_cache_is_refused_at_add() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=3, block_size=4), COST)
    with pytest.raises(ValueError, match="need 3 KV blocks, the cache has 2"):
        engine.add(spec("big", 8, 4))


@pytest.mark.parametrize(
    ("prompt", "output", "message"), [(0, 3, "prompt_tokens"), (4, 0, "output_tokens")]
)
def test_arrive_refuses_what_a_request_spec_refuses(prompt: int, output: int, message: str) -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=10), COST)
    with pytest.raises(ValueError, match=f"request r: {message} must be >= 1"):
        engine.arrive("r", 0.0, prompt, output)
    with pytest.raises(ValueError, match=f"request r: {message} must be >= 1"):
        spec("r", prompt, output)
    assert engine.idle


def test_arrive_refuses_an_arrival_out_of_order_and_a_repeated_id() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=10), COST)
    engine.arrive("a", 2.0, 4, 3, deadline=9.0)
    with pytest.raises(ValueError, match="request b arrives before a"):
        engine.arrive("b", 1.0, 4, 3)
    with pytest.raises(ValueError, match="request a is already in the engine"):
        engine.arrive("a", 3.0, 4, 3)
    assert engine.num_waiting == 1


def test_a_result_cannot_be_changed() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=100), COST)
    result = replay(engine, [spec("a", 4, 3, max_tokens=3)])[0]
    with pytest.raises(AttributeError):
        result.finish_reason = "stop"  # type: ignore[misc]
    assert result.finish_reason == "length"


def test_step_before_the_last_one_ends_is_refused() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=10), COST)
    engine.add(spec("a", 4, 3))
    step = engine.step(0.0)
    assert step is not None
    with pytest.raises(ValueError, match="before the last one ends"):
        engine.step(step.end - 0.5)


@pytest.mark.parametrize(
    ("field", "value"),
    [("num_gpu_blocks", 1), ("max_num_seqs", 0), ("block_size", 0), ("max_num_batched_tokens", -1)],
)
def test_config_rejects_nonsense(field: str, value: int) -> None:
    kwargs = {"num_gpu_blocks": 10, field: value}
    with pytest.raises(ValueError, match=field):
        EngineConfig(**kwargs)


def test_cost_rejects_negative_and_zero() -> None:
    with pytest.raises(ValueError, match="base"):
        StepCost(base=-1.0, prefill_token=0.0, decode_seq=0.0, context_token=0.0)
    with pytest.raises(ValueError, match="must take time"):
        StepCost(base=0.0, prefill_token=0.0, decode_seq=0.0, context_token=1.0)


def test_metrics_follow_vllm_accounting() -> None:
    engine = Engine(EngineConfig(num_gpu_blocks=5, max_num_batched_tokens=64, block_size=4), COST)
    metrics = ServingMetrics("m")
    replay(engine, [spec("r0", 7, 3), spec("r1", 4, 5)], on_step=metrics.record)
    assert metrics.prompt_tokens == 11
    assert metrics.generation_tokens == 8
    assert metrics.preemptions == 1
    assert metrics.success == {"stop": 2, "length": 0, "abort": 0}
    assert metrics.ttft.count == 2
    assert metrics.itl.count == 8 - 2
    assert metrics.e2e.count == metrics.queue_time.count == 2


@given(
    offsets=st.lists(st.integers(min_value=0, max_value=200), max_size=20),
    first=st.integers(min_value=0, max_value=100),
    steps=st.integers(min_value=0, max_value=70),
    block_size=st.sampled_from([1, 4, 16]),
)
def test_blocks_needed_counts_every_block_boundary(offsets, first, steps, block_size) -> None:
    """The closed form against counting step by step which decoder crosses a boundary."""
    residues = [0] * block_size
    for offset in offsets:
        residues[offset % block_size] += 1
    expected = sum(
        (offset + j) % block_size == 0 for offset in offsets for j in range(first, first + steps)
    )
    got = _blocks_needed(residues, first, first + steps, block_size, len(offsets))
    assert got == expected
