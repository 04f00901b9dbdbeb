"""The emulator's TTFT under a fixed load is what the pure model predicts for that load.

Requests go one after another (each waits for the previous to finish), so the load is
fixed and the model's answer is one prefill step; the median TTFT a streaming client
measures must be within 10 % of it (issue 15's evidence). The L40S preset's prefill
steps (~175 ms for 1536 tokens) dwarf the loopback and event-loop overheads.
"""

from __future__ import annotations

import json
import statistics
import time

import httpx
import pytest

from gpuscale.serving import Engine, RequestSpec, replay
from tests.integration.serving.conftest import Running

pytestmark = pytest.mark.integration

PROMPT = 1536
REQUESTS = 15


def predicted_ttft(emulator: Running) -> float:
    template = emulator.server.loop.engine
    engine = Engine(template.config, template.cost)
    results = replay(engine, [RequestSpec("r", 0.0, PROMPT, 4, max_tokens=4)])
    ttft = results[0].ttft
    assert ttft is not None
    return ttft


def test_ttft_matches_the_model(emulator: Running) -> None:
    expected = predicted_ttft(emulator)
    measured = []
    with httpx.Client(base_url=emulator.url, timeout=30) as client:
        for _ in range(REQUESTS):
            started = time.perf_counter()
            first = None
            with client.stream(
                "POST",
                "/v1/completions",
                json={"prompt": [7] * PROMPT, "max_tokens": 4, "stream": True},
            ) as reply:
                for line in reply.iter_lines():
                    if line.startswith("data: {") and first is None:
                        payload = json.loads(line.removeprefix("data: "))
                        if payload["choices"] and payload["choices"][0]["text"]:
                            first = time.perf_counter() - started
            assert first is not None
            measured.append(first)
    median = statistics.median(measured)
    print(f"TTFT median {median * 1000:.1f} ms, model {expected * 1000:.1f} ms")
    assert abs(median - expected) <= 0.1 * expected, (median, expected)
