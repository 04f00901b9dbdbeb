"""``serving.kind: vllm`` in the simulator: an engine per Ready replica, vLLM's series
through the scrape, requests that fail when their replica goes away, and the per-request
TTFT/ITL the summary reports. Real parts throughout: the PromQL engine, KEDA, the HPA."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuscale.inputs import read_trace
from gpuscale.report.summary import summarize
from gpuscale.serving import METRICS
from gpuscale.serving.presets import preset
from gpuscale.sim.load import TraceSource
from gpuscale.sim.requests import DROPPED, SERVED, TIMED_OUT
from gpuscale.sim.serving import VLLM_NAMES, EngineRouter, series_keys
from gpuscale.sim.specs import EngineCapacity
from gpuscale.sim.traces import parse_trace
from gpuscale.sim.world import LoadSpec
from tests.unit.sim.worlds import vllm_inputs

CONV = "/work/shared/traces/AzureLLMInferenceTrace_conv.csv"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
CHOSEN = preset("mi300x", "llama-3.1-8b")
CAPACITY = EngineCapacity(CHOSEN.engine_config(), CHOSEN.step_cost(), MODEL, timeout_s=60.0)


def _trace(rows: list[tuple[float, int, int]]):  # type: ignore[no-untyped-def]
    text = "timestamp,prompt_tokens,output_tokens\n" + "".join(f"{t},{p},{o}\n" for t, p, o in rows)
    return parse_trace(text, source="t.csv", fmt="csv")


def _router(rows: list[tuple[float, int, int]], **kw: object) -> EngineRouter:
    return EngineRouter(TraceSource(_trace(rows)), CAPACITY, seed=0, round_robin=True, **kw)  # type: ignore[arg-type]


def test_series_are_vllms_names_labels_and_buckets() -> None:
    keys = series_keys(MODEL)
    names = {dict(key)["__name__"] for key in keys}
    assert names == VLLM_NAMES
    for key in keys:
        labels = dict(key)
        assert labels["model_name"] == MODEL
        assert labels["engine"] == "0"
    for spec in METRICS:
        if spec.kind == "histogram":
            bounds = [
                dict(key)["le"] for key in keys if dict(key)["__name__"] == f"{spec.name}_bucket"
            ]
            assert bounds == [repr(float(b)) for b in spec.buckets] + ["+Inf"]
    reasons = [dict(k).get("finished_reason") for k in keys]
    assert sorted(r for r in reasons if r) == ["abort", "length", "stop"]


def test_one_request_gets_the_engines_timings() -> None:
    router = _router([(0.0, 100, 10)])
    server = router.new_server("p", 0.0)
    router.add_endpoint(server, 0.0)
    log = router.finish(10.0, [server])
    cost = CHOSEN.step_cost()
    prefill = cost.seconds(100, 0, 100)
    assert log.outcomes.tolist() == [SERVED]
    assert log.ttft is not None
    assert log.itl is not None
    assert log.queue_time is not None
    assert log.ttft[0] == pytest.approx(prefill, rel=1e-12)
    assert log.queue_time[0] == 0.0
    decode = [cost.seconds(0, 1, 100 + k) for k in range(1, 10)]
    assert log.latencies[0] == pytest.approx(prefill + sum(decode), rel=1e-12)
    assert log.itl[0] == pytest.approx(sum(decode) / 9, rel=1e-12)
    values = dict(zip(series_keys(MODEL), server.values(histograms=True), strict=True))
    by_name = {dict(k)["__name__"]: v for k, v in values.items() if "le" not in dict(k)}
    assert by_name["vllm:generation_tokens_total"] == 10
    assert by_name["vllm:prompt_tokens_total"] == 100
    assert by_name["vllm:time_to_first_token_seconds_count"] == 1
    assert by_name["vllm:num_requests_running"] == 0


def test_requests_wait_at_the_service_until_a_replica_is_routed_to() -> None:
    router = _router([(0.0, 50, 5), (1.0, 50, 5), (100.0, 50, 5)])
    router.advance(2.0)
    assert len(router.waiting) == 2
    server = router.new_server("p", 30.0)
    router.add_endpoint(server, 30.0)
    log = router.finish(200.0, [server])
    assert log.outcomes.tolist() == [SERVED, SERVED, SERVED]
    assert log.ttft is not None
    assert log.ttft[0] > 30.0  # sent at 0, first token after the replica came at 30 s
    late = _router([(0.0, 50, 5)])
    late.advance(0.0)
    server = late.new_server("p", 61.0)
    late.add_endpoint(server, 61.0)  # past the 60 s timeout: never sent
    assert late.finish(100.0, [server]).outcomes.tolist() == [TIMED_OUT]


def test_a_deleted_replica_aborts_what_it_holds_and_drops_later_arrivals() -> None:
    """vLLM v0.11 exits on SIGTERM: running and waiting requests fail, so do requests the
    Service still sends before the endpoint update, and requests on other replicas are
    untouched."""
    rows = [(t / 10, 200, 2000) for t in range(4)] + [(2.4, 200, 4), (2.5, 200, 4)]
    router = _router(rows)
    kept, doomed = router.new_server("a", 0.0), router.new_server("b", 0.0)
    router.add_endpoint(kept, 0.0)
    router.add_endpoint(doomed, 0.0)
    router.advance(2.0)
    assert doomed.engine.num_running == 2  # round-robin: requests 1 and 3
    router.terminate(doomed, 2.0)
    router.advance(3.0)  # request 5 goes to "b" (round-robin) before the endpoint update
    router.remove_endpoint(doomed)
    router.retire(doomed, 2.0)
    log = router.finish(60.0, [kept])
    assert log.outcomes.tolist() == [SERVED, DROPPED, SERVED, DROPPED, SERVED, DROPPED]
    assert log.ttft is not None
    assert math.isnan(log.ttft[1])
    assert math.isnan(log.latencies[3])
    assert doomed.engine.idle


def test_a_request_answered_before_the_sigterm_is_served() -> None:
    """A short request finishes inside a decode run beside a long one; the replica gets
    SIGTERM later, while the long one still decodes. Only the long one fails: the short
    one's answer reached the client before the SIGTERM (the older fast path dropped every
    finish of a decode run that was still in progress at the SIGTERM)."""
    router = _router([(0.0, 200, 2000), (0.0, 200, 5)])
    server = router.new_server("a", 0.0)
    router.add_endpoint(server, 0.0)
    router.advance(1.0)  # the short request is done within a few steps (milliseconds)
    router.terminate(server, 1.0)
    router.remove_endpoint(server)
    router.retire(server, 1.0)
    log = router.finish(60.0, [server])
    assert log.outcomes.tolist() == [DROPPED, SERVED]
    assert log.latencies[1] < 1.0
    assert math.isnan(log.latencies[0])


def test_gpu_utilisation_follows_the_engines_busy_time() -> None:
    router = _router([(0.0, 2000, 200), (5.0, 2000, 200)])
    server = router.new_server("p", 0.0)
    router.add_endpoint(server, 0.0)
    router.advance(20.0)
    busy = server.engine.counts.busy_seconds
    assert 0 < busy < 5
    # read as the exporter does, at increasing times: inside the first request's decode
    # the GPU is fully busy, over the whole run it is busy for the engine's step time
    assert server.utilisation(0.5, 0.4) == pytest.approx(1.0)
    assert server.utilisation(20.0, 20.0) == pytest.approx(busy / 20.0, rel=1e-9)
    assert server.utilisation(20.0, 1.0) == 0.0


def _run(inputs, trace, until: float):  # type: ignore[no-untyped-def]
    sim = inputs.simulation(load=LoadSpec(traces={"llm-0": trace}), seed=3)
    return sim, sim.run(until)


def test_a_scaledobject_written_for_vllm_scales_the_simulated_replicas() -> None:
    """The waiting + running query reads the engines' gauges; four times the conv trace's
    rate needs more replicas than the trace itself; TTFT and ITL are reported."""
    trace = read_trace(CONV)
    replicas = {}
    for speedup in (1.0, 4.0):
        sim, result = _run(vllm_inputs(), trace.scaled(speedup).tiled(1200.0), 1200.0)
        spec = (
            summarize(result.records, until=1200.0, pools=result.header.pools).replicas[0].mean_spec
        )
        value = sim.world.metrics.query(
            f'sum(vllm:num_requests_running{{model_name="{MODEL}"}})', int(1200.0 * 1000)
        )
        assert value["data"]["result"], "no vllm:num_requests_running series scraped"
        replicas[speedup] = spec
        log = result.requests["llm/llm-0"]
        assert log.count(SERVED) > 0.9 * len(log)
        assert log.ttft is not None
        assert np.nanpercentile(log.ttft, 50) > 0
    assert replicas[4.0] > replicas[1.0]


def test_histogram_quantile_over_vllms_ttft_buckets_runs_unchanged() -> None:
    query = (
        "histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{"
        'service="{name}"}}[2m]))) * 100'
    )
    sim, result = _run(vllm_inputs(query=query), read_trace(CONV).tiled(900.0), 900.0)
    answer = sim.world.metrics.query(
        query.format(name="llm-0").replace("{{", "{").replace("}}", "}"), 900_000
    )
    [sample] = answer["data"]["result"]
    p90 = float(sample["value"][1]) / 100
    log = result.requests["llm/llm-0"]
    assert log.ttft is not None
    recent = log.ttft[(log.arrivals > 780.0) & (log.outcomes == SERVED)]
    exact = float(np.percentile(recent, 90))
    # bucketed, over a 2m rate of first tokens (not arrivals): within the bucket holding
    # the exact p90 of the last two minutes' requests, or a neighbour
    bounds = [0.0, *next(s.buckets for s in METRICS if s.name.endswith("first_token_seconds"))]
    bucket = next(i for i, b in enumerate(bounds) if b >= exact)
    assert bounds[max(bucket - 2, 0)] <= p90 <= bounds[bucket + 1]
    assert 0.5 * exact <= p90 <= 2 * exact


def test_the_work_estimate_weighs_engine_requests() -> None:
    from gpuscale.sim.budget import ENGINE_REQUEST, estimate_work

    trace = read_trace(CONV)
    estimate = estimate_work(vllm_inputs(), horizon_s=1800.0, traces={"llm-0": trace})
    assert estimate.engine_requests == estimate.requests == len(trace)
    assert estimate.total == estimate.loop_events + ENGINE_REQUEST * len(trace)


def test_slo_attainment_from_the_log() -> None:
    rows = [(0.0, 100, 10), (0.0, 100, 1), (0.0, 4000, 10), (99.9, 4000, 500)]
    router = _router(rows)
    server = router.new_server("p", 0.0)
    router.add_endpoint(server, 0.0)
    log = router.finish(100.0, [server])  # the last one is still to come: unfinished
    assert log.ttft is not None
    assert log.attained() == 0.75
    fast = float(np.nanmax(log.ttft[:2]))
    assert log.attained(ttft_s=fast) == 0.5  # the 4000-token prompt's TTFT is longer
    assert log.attained(itl_s=1e-9) == 0.25  # only the one-token answer has no ITL
    assert log.attained(ttft_s=fast, e2e_s=100.0) == 0.5
