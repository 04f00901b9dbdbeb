"""Properties of ``serving.kind: vllm`` simulations over slices of the three saved traces
(Azure conv, Azure code, Mooncake conversation), through the MI300X × Llama 3.1 8B preset
on a DOKS MI300X profile (``tests.unit.sim.worlds.vllm_inputs``): TTFT and ITL
percentiles are reported and move in the expected direction when capacity (replicas) or
``max_num_seqs`` changes. Small slices (a minute or two, sped up), fixed replica counts
(minReplicaCount = maxReplicaCount, all warm at the start) so each example runs in well
under a second; hypothesis picks the slice, the speed-up and the replica count.

"Expected direction" allows one engine step of slack (:data:`SLACK`): with a light load a
bigger batch can make a request wait for one slightly longer step (the serving model's
own property tests, ``tests/unit/serving/test_properties.py``, found such cases).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.inputs import read_trace
from gpuscale.report.summary import summarize
from gpuscale.serving.presets import preset
from gpuscale.sim.requests import SERVED
from gpuscale.sim.traces import Trace
from gpuscale.sim.world import LoadSpec
from tests.unit.sim.worlds import vllm_inputs

TRACES = Path("/work/shared/traces")
FILES = (
    "AzureLLMInferenceTrace_conv.csv",
    "AzureLLMInferenceTrace_code.csv",
    "mooncake_conversation_trace.jsonl",
)
_COST = preset("mi300x", "llama-3.1-8b").step_cost()
SLACK = _COST.seconds(2048, 256, 256 * 8192)
"""The longest step the preset can take (a full token budget beside 256 long decodes)."""
SPAN = 60.0
BUDGET = settings(
    derandomize=True,
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_loaded: dict[str, Trace] = {}


def _trace(name: str) -> Trace:
    if name not in _loaded:
        _loaded[name] = read_trace(TRACES / name)
    return _loaded[name]


def _slice(trace: Trace, start: float, speedup: float) -> Trace:
    """``SPAN`` seconds of ``trace`` from ``start`` (as a fraction of it), sped up."""
    lo_t = start * max(trace.span - SPAN, 0.0)
    lo, hi = np.searchsorted(trace.offsets, [lo_t, lo_t + SPAN])
    hi = max(hi, lo + 1)
    part = Trace(
        offsets=trace.offsets[lo:hi] - trace.offsets[lo],
        prompt_tokens=trace.prompt_tokens[lo:hi],
        output_tokens=trace.output_tokens[lo:hi],
        source=trace.source,
        has_tokens=True,
        format=trace.format,
    )
    return part.scaled(speedup)


def _p95s(trace: Trace, *, replicas: int, seqs: int) -> tuple[float, float, int]:
    inputs = vllm_inputs(max_num_seqs=seqs, replicas=(replicas, replicas))
    until = trace.span + 150.0
    result = inputs.simulation(load=LoadSpec(traces={"llm-0": trace}), seed=5).run(until)
    log = result.requests["llm/llm-0"]
    stats = summarize(
        result.records, until=until, pools=result.header.pools, requests=result.requests
    ).requests[0]
    assert log.ttft is not None
    served = log.outcomes == SERVED
    assert stats.ttft_p95_s == pytest.approx(float(np.percentile(log.ttft[served], 95)))
    assert stats.ttft_p50_s is not None
    itl = stats.itl_p95_s if stats.itl_p95_s is not None else 0.0
    return stats.ttft_p95_s, itl, int(np.count_nonzero(served))


slices = st.tuples(st.sampled_from(FILES), st.floats(0.0, 1.0), st.sampled_from([1.0, 4.0, 8.0]))


@BUDGET
@given(slices)
def test_a_smaller_max_num_seqs_trades_ttft_for_itl(case: tuple[str, float, float]) -> None:
    """Fewer sequences per batch: requests queue longer for a slot (TTFT no better, and
    clearly worse under 8x load) but each step is shorter (ITL no worse)."""
    name, start, speedup = case
    trace = _slice(_trace(name), start, speedup)
    tight_ttft, tight_itl, tight_served = _p95s(trace, replicas=1, seqs=4)
    wide_ttft, wide_itl, wide_served = _p95s(trace, replicas=1, seqs=256)
    assert wide_served >= tight_served * 0.99
    assert tight_ttft >= wide_ttft - SLACK
    assert tight_itl <= wide_itl + SLACK
    if speedup == 8.0 and len(trace) >= 100:  # a loaded slice (the code trace idles at times)
        assert tight_ttft > wide_ttft


@BUDGET
@given(slices)
def test_more_replicas_never_give_a_worse_ttft_or_itl(case: tuple[str, float, float]) -> None:
    name, start, speedup = case
    trace = _slice(_trace(name), start, speedup)
    one_ttft, one_itl, _ = _p95s(trace, replicas=1, seqs=256)
    three_ttft, three_itl, _ = _p95s(trace, replicas=3, seqs=256)
    assert three_ttft <= one_ttft + SLACK
    assert three_itl <= one_itl + SLACK
    if speedup == 8.0 and len(trace) >= 100:  # a loaded slice (the code trace idles at times)
        assert three_ttft < one_ttft


@pytest.mark.parametrize("name", FILES)
def test_replicas_follow_each_traces_load(name: str) -> None:
    """The ScaledObject on vLLM's waiting + running gauges asks for more replicas when the
    same trace arrives four times faster."""
    means = {}
    for speedup in (1.0, 4.0):
        trace = _trace(name).scaled(speedup).tiled(600.0)
        sim = vllm_inputs().simulation(load=LoadSpec(traces={"llm-0": trace}), seed=2)
        result = sim.run(600.0)
        stats = summarize(result.records, until=600.0, pools=result.header.pools)
        means[speedup] = stats.replicas[0].mean_spec
    assert means[4.0] > means[1.0]
