"""Speed of the serving model (steps/s, fast path vs one by one) and of the LLM emulator.

1. The pure model: the Azure LLM conv trace (``../shared/traces``, 19,365 requests in an
   hour) replayed through one engine with the H100 × Llama-3.1-8B preset, once stepping
   one by one and once with the aggregated decode runs; both must give the same results.
2. The emulator: ``gpuscale app --serve llm`` as its own process on loopback, driven by
   an asyncio httpx client at fixed concurrency for a few seconds; completed requests/s.

    PYTHONPATH=src .venv/bin/python benchmarks/serving_model.py [--emulator-seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx

from gpuscale.serving import Engine, RequestSpec, ServingMetrics, replay
from gpuscale.serving.presets import preset

TRACE = (
    Path(__file__).resolve().parents[1].parent.parent
    / "shared/traces/AzureLLMInferenceTrace_conv.csv"
)


def load_trace(path: Path) -> list[RequestSpec]:
    specs = []
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    t0 = None
    for index, row in enumerate(rows):
        stamp = datetime.fromisoformat(row["TIMESTAMP"][:26])
        t0 = stamp if t0 is None else t0
        specs.append(
            RequestSpec(
                f"r{index}",
                (stamp - t0).total_seconds(),
                max(1, int(row["ContextTokens"])),
                max(1, int(row["GeneratedTokens"])),
            )
        )
    return specs


def bench_model(specs: list[RequestSpec]) -> None:
    chosen = preset("h100", "llama-3.1-8b")
    outcomes = {}
    for fast in (False, True):
        engine = Engine(chosen.engine_config(), chosen.step_cost())
        metrics = ServingMetrics("llama-3.1-8b")
        started = time.perf_counter()
        results = replay(engine, specs, fast=fast, on_step=metrics.record)
        elapsed = time.perf_counter() - started
        outcomes[fast] = results
        steps = engine.counts.steps
        label = "fast path" if fast else "one by one"
        print(
            f"model {label:10}: {len(specs)} requests, {steps} engine steps in {elapsed:.2f} s "
            f"= {steps / elapsed:,.0f} steps/s; TTFT p50 {metrics.ttft.quantile(0.5):.3f} s "
            f"p99 {metrics.ttft.quantile(0.99):.3f} s, ITL p50 {metrics.itl.quantile(0.5):.4f} s"
        )
    assert outcomes[True] == outcomes[False], "the fast path changed the results"


async def drive(url: str, seconds: float, concurrency: int, max_tokens: int) -> tuple[int, float]:
    done = 0
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def worker() -> None:
            nonlocal done
            while time.monotonic() < stop:
                reply = await client.post(
                    "/v1/completions", json={"prompt": [1] * 128, "max_tokens": max_tokens}
                )
                reply.raise_for_status()
                done += 1

        started = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done, time.monotonic() - started


def bench_emulator(seconds: float, concurrency: int, max_tokens: int) -> None:
    env = dict(os.environ)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuscale",
            "app",
            "--serve",
            "llm",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--gpu",
            "mi300x",
            "--model",
            "qwen2.5-7b",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            found = re.search(r"listening on http://(\S+?):(\d+):", line)
            if found:
                url = f"http://{found.group(1)}:{found.group(2)}"
                break
        else:
            raise SystemExit("the emulator did not start")
        done, elapsed = asyncio.run(drive(url, seconds, concurrency, max_tokens))
        metrics = httpx.get(url + "/metrics").text
        running = re.search(r"vllm:generation_tokens_total\{[^}]*\} (\S+)", metrics)
        print(
            f"emulator: {done} completions ({max_tokens} tokens each, concurrency {concurrency}) "
            f"in {elapsed:.1f} s = {done / elapsed:.1f} requests/s, "
            f"{float(running.group(1)) / elapsed if running else 0:.0f} tokens/s"
        )
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emulator-seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--skip-model", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.skip_model:
        bench_model(load_trace(TRACE))
    bench_emulator(args.emulator_seconds, args.concurrency, args.max_tokens)


if __name__ == "__main__":
    main()
