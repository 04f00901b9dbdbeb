"""The references on the vLLM serving model: the clairvoyant schedule sizes each minute
with the engine itself, and the floors of the TTFT / ITL SLOs are each request alone on
an idle engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuscale.cli._tune_score import Scored, warn_unreachable
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.serving import Engine, RequestSpec, replay
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.specs import EngineCapacity, SimWorkload
from gpuscale.sim.traces import Trace
from gpuscale.tune.references import LowerBound, alone_on_engine, clairvoyant_schedule, floors
from gpuscale.tune.slo import parse_slos, percentile

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "vllm"


@pytest.fixture(scope="module")
def workload() -> SimWorkload:
    manifests = read_manifests([EXAMPLE])
    profile = read_profile(EXAMPLE / "gpuscale.yaml")
    return build_inputs(manifests, profile).spec.workload("vllm-llama")


def _trace(seconds: float, rate: float, prompt: int, output: int, seed: int = 5) -> Trace:
    rng = np.random.default_rng(seed)
    offsets = np.sort(rng.uniform(0.0, seconds, int(seconds * rate)))
    n = len(offsets)
    prompts = rng.integers(prompt // 2, prompt * 3 // 2, n)
    outputs = rng.integers(output // 2, output * 3 // 2, n)
    return Trace(offsets, prompts.astype(np.int64), outputs.astype(np.int64))


def _late_on(capacity: EngineCapacity, trace: Trace, replicas: int) -> int:
    """Requests later than the target on ``replicas`` idle engines dealt them in turn."""
    late = 0
    for r in range(replicas):
        specs = [
            RequestSpec(str(i), t, p, o, deadline=t + capacity.timeout_s)
            for i, (t, p, o) in enumerate(trace)
            if i % replicas == r
        ]
        engine = Engine(capacity.config, capacity.cost, itl=False)
        for result in replay(engine, specs):
            assert capacity.latency_target_s is not None
            late += result.timed_out or result.e2e > capacity.latency_target_s
    return late


def test_each_minute_gets_the_fewest_engines_that_answer_it_on_time(
    workload: SimWorkload,
) -> None:
    capacity = workload.capacity
    assert isinstance(capacity, EngineCapacity)
    # Long prompts at a rate one engine cannot prefill within the 30 s target.
    trace = _trace(60.0, 4.0, 12_000, 300)
    _, needs = clairvoyant_schedule(trace=trace, workload=workload, lead_s=0.0, until=60.0, most=16)
    (need,) = needs
    assert need >= 2  # the old work / 60 s sizing gave 1 or 2 at full utilisation
    assert _late_on(capacity, trace, need) == 0
    assert _late_on(capacity, trace, need - 1) > 0


def test_a_ttft_slo_sizes_the_minute_for_its_percentile(workload: SimWorkload) -> None:
    trace = _trace(60.0, 4.0, 6_000, 200)
    late_only = clairvoyant_schedule(
        trace=trace, workload=workload, lead_s=0.0, until=60.0, most=16
    )[1]
    with_ttft = clairvoyant_schedule(
        trace=trace,
        workload=workload,
        lead_s=0.0,
        until=60.0,
        most=16,
        slos=parse_slos(["ttft_p95<=500ms"]),
    )[1]
    assert with_ttft[0] > late_only[0]


def test_the_ttft_floor_is_one_prefill_alone(workload: SimWorkload) -> None:
    capacity = workload.capacity
    assert isinstance(capacity, EngineCapacity)
    cost, budget = capacity.cost, capacity.config.max_num_batched_tokens
    prompt = budget // 2  # one chunk: one step reads its own prompt's context
    trace = Trace(np.array([0.0, 5.0]), np.array([prompt, 3 * budget]), np.array([40, 1]))
    ttft, itl = alone_on_engine(capacity, trace, itl=True)
    assert ttft[0] == pytest.approx(
        cost.base + cost.prefill_token * prompt + cost.context_token * prompt
    )
    assert ttft[1] > 3 * cost.base + cost.prefill_token * 3 * budget  # three chunks
    assert itl[0] == pytest.approx(cost.base + cost.decode_seq, rel=0.2)
    assert np.isnan(itl[1])  # a one-token answer has no inter-token latency
    found = floors(capacity, trace, parse_slos(["ttft_p50<=1s", "late<=1%"]))
    assert found == {"ttft_p50": pytest.approx(percentile(ttft.tolist(), 50))}


def test_a_percentile_slo_below_its_floor_is_said_to_be_out_of_reach(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bound = LowerBound(1.0, 1.0, 0.0, 10, "gpu", 1.99, floors={"ttft_p95": 2.5})
    part = Scored("holdout", {}, bound, (), 60.0)
    warn_unreachable([part], parse_slos(["ttft_p95<=3s"]))
    assert capsys.readouterr().err == ""
    warn_unreachable([part], parse_slos(["ttft_p95<=2s"]))
    err = capsys.readouterr().err
    assert "no configuration can meet ttft_p95<=2s on holdout" in err
    assert "2.500 s" in err


def test_a_request_that_never_fits_the_cache_is_refused_not_a_crash(
    workload: SimWorkload,
) -> None:
    capacity = workload.capacity
    assert isinstance(capacity, EngineCapacity)
    cache = capacity.config.usable_blocks * capacity.config.block_size
    trace = Trace(np.array([0.0, 1.0]), np.array([1_000, cache]), np.array([10, 10]))
    ttft, _ = alone_on_engine(capacity, trace, itl=False)
    assert np.isfinite(ttft[0])
    assert np.isinf(ttft[1])  # vLLM refuses it; it never has a first token
    _, needs = clairvoyant_schedule(
        trace=trace,
        workload=workload,
        lead_s=0.0,
        until=60.0,
        most=4,
        slos=parse_slos(["ttft_p50<=1s"]),
    )
    assert needs == (1,)
