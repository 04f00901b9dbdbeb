"""The fit of ``gpuscale calibrate``: observations made from the engine itself (the same
readings the client takes: first-token time at concurrency 1, the mean token interval of
a full batch's window) give back the step cost they were made with."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.serving import Engine, EngineConfig, RequestSpec, StepCost
from gpuscale.serving.calibration import Observation, fit_step_cost, plan_sweep

TRUE = StepCost(base=0.012, prefill_token=8e-5, decode_seq=4e-4, context_token=9e-7)
CONFIG = EngineConfig(num_gpu_blocks=20000)


def _run(
    cost: StepCost, concurrency: int, prompt: int, output: int
) -> list[list[tuple[float, int]]]:
    """Per request, (time, tokens so far) at every token, as a streaming client sees it."""
    engine = Engine(CONFIG, cost)
    for i in range(concurrency):
        engine.add(RequestSpec(f"r{i}", 0.0, prompt, output, max_tokens=output))
    seen: dict[str, list[tuple[float, int]]] = {f"r{i}": [] for i in range(concurrency)}
    now = 0.0
    while not engine.idle:
        step = engine.step(now)
        assert step is not None
        for request_id, count in step.tokens:
            seen[request_id].append((step.end, count))
        now = step.end
    return list(seen.values())


def observe(cost: StepCost, overhead: float = 0.0) -> list[Observation]:
    out = []
    for point in plan_sweep(concurrencies=(1, 4, 16), output_tokens=32, ttft_repeats=1):
        streams = _run(cost, point.concurrency, point.prompt_tokens, point.output_tokens)
        if point.kind == "ttft":
            out.append(Observation("ttft", streams[0][0][0] + overhead, 1, point.prompt_tokens))
            continue
        start = max(s[0][0] for s in streams)
        end = min(s[-1][0] for s in streams)
        spans = tokens = 0.0
        contexts = []
        for s in streams:
            inside = [(t, n) for t, n in s if start <= t <= end]
            spans += inside[-1][0] - inside[0][0]
            tokens += inside[-1][1] - inside[0][1]
            contexts.append(point.prompt_tokens + (inside[0][1] + inside[-1][1] - 1) / 2)
        context = len(streams) * sum(contexts) / len(contexts)
        out.append(
            Observation("itl", spans / tokens, point.concurrency, point.prompt_tokens, context)
        )
    return out


def test_the_fit_recovers_the_engine_s_step_cost() -> None:
    fit = fit_step_cost(observe(TRUE, overhead=0.002))
    for name in ("base", "prefill_token", "decode_seq", "context_token"):
        assert getattr(fit.cost, name) == pytest.approx(getattr(TRUE, name), rel=0.01), name
    assert fit.overhead == pytest.approx(0.002, rel=0.05)
    assert fit.residuals["itl"] < 0.01
    assert fit.ranges["concurrency"] == (1.0, 16.0)
    assert fit.dropped == ()


@settings(max_examples=25, deadline=None)
@given(
    base=st.floats(0.002, 0.05),
    prefill=st.floats(1e-5, 3e-4),
    decode=st.floats(1e-5, 1e-3),
    context=st.floats(1e-8, 2e-6),
)
def test_any_step_cost_is_recovered(
    base: float, prefill: float, decode: float, context: float
) -> None:
    true = StepCost(base=base, prefill_token=prefill, decode_seq=decode, context_token=context)
    fit = fit_step_cost(observe(true))
    assert fit.cost.base == pytest.approx(base, rel=0.02)
    assert fit.cost.prefill_token == pytest.approx(prefill, rel=0.02)
    assert fit.cost.decode_seq == pytest.approx(decode, rel=0.05)
    assert fit.cost.context_token == pytest.approx(context, rel=0.05, abs=2e-9)


def test_a_negative_term_is_dropped_and_the_rest_refitted() -> None:
    data = observe(StepCost(base=0.01, prefill_token=1e-4, decode_seq=0.0, context_token=1e-6))
    fit = fit_step_cost(data)
    assert fit.cost.decode_seq == pytest.approx(0.0, abs=1e-6)
    assert fit.cost.base == pytest.approx(0.01, rel=0.02)


@pytest.mark.parametrize(
    ("keep", "message"),
    [
        (lambda o: o.kind == "ttft", "cannot determine"),
        (lambda o: o.kind == "itl" or o.prompt_tokens == 16, "one prompt length"),
        (lambda o: o.kind == "ttft" or o.concurrency == 4, "one concurrency"),
    ],
)
def test_too_little_data_is_refused(keep, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_step_cost([o for o in observe(TRUE) if keep(o)])


def test_the_plan_stays_within_the_prompt_limit() -> None:
    plan = plan_sweep(max_prompt_tokens=300, concurrencies=(2,))
    assert max(p.prompt_tokens for p in plan) == 300
    assert {p.kind for p in plan} == {"ttft", "itl"}
    with pytest.raises(ValueError, match="max_prompt_tokens"):
        plan_sweep(max_prompt_tokens=8)
