"""``gpuscale load``'s OpenAI mode against the emulator on loopback: the trace's lengths
arrive exactly (the engine counts the same tokens), every request streams, and TTFT and
ITL percentiles are reported as it goes and at the end."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from gpuscale.live.load import LoadReport, RequestSpec, WallClock, from_trace, run_load
from tests.integration.serving.conftest import Running

pytestmark = pytest.mark.integration

ROWS = [(0.0, 37, 5), (0.05, 512, 12), (0.1, 1, 3), (0.12, 2000, 20), (0.2, 130, 9)]


@pytest.mark.parametrize(
    "emulator",
    [{"step_cost": (("base", 0.01), ("decode_seq", 0.001))}],
    indirect=True,
)
def test_trace_lengths_are_exact_and_tokens_are_timed(emulator: Running) -> None:
    seen: list[LoadReport] = []

    async def go() -> LoadReport:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await run_load(
                from_trace(ROWS),
                client=client,
                targets=lambda: [emulator.url],
                request=RequestSpec(openai_model="llama-3.1-8b"),
                clock=WallClock(),
                timeout=30.0,
                on_progress=seen.append,
                progress_every=0.05,
            )

    report = asyncio.run(go())
    assert (report.sent, report.ok, dict(report.http_errors)) == (5, 5, {})
    metrics = emulator.server.metrics
    assert metrics.prompt_tokens == sum(p for _, p, _ in ROWS)
    assert metrics.generation_tokens == sum(o for _, _, o in ROWS)
    assert len(report.ttft) == 5
    assert len(report.itl) == sum(o - 1 for _, _, o in ROWS)
    # Each token interval is at least one engine step (base 10 ms).
    assert report.itl[0] >= 0.009
    # The 2000-token prompt's first token waits for its prefill: base + 2000 prefill tokens.
    assert report.ttft[-1] > report.ttft[0]
    assert seen
    assert seen[-1].sent < 5  # progress came while the run went on
    text = "\n".join(report.lines())
    assert "TTFT p50" in text
    assert "ITL p50" in text
    doc = report.as_dict()
    assert doc["ttft_seconds"]["p99"] == report.ttft[-1]
    assert doc["itl_seconds"]["p50"] is not None


def test_a_bad_model_is_an_http_error_not_a_crash(emulator: Running) -> None:
    async def go() -> LoadReport:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await run_load(
                from_trace(ROWS[:2]),
                client=client,
                targets=lambda: [emulator.url],
                request=RequestSpec(openai_model="no-such-model"),
                clock=WallClock(),
            )

    report = asyncio.run(go())
    assert dict(report.http_errors) == {404: 2}
    assert report.ttft == ()
