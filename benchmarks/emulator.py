"""The LLM emulator's sustained request rate and what its metrics cost.

``gpuscale app --serve llm`` runs as its own process on loopback with a step cost small
enough (``--step-cost base=0.002``, every other term 0) that the engine is not what
limits the rate: what is measured is the emulator's HTTP, streaming and bookkeeping.
Alternating rounds, side by side in one run, medians:

1. **Sustained rate**: an asyncio httpx client at fixed concurrency, 16-token answers,
   whole and streamed; completed requests/s and the server's own CPU per request (from
   ``/proc/<pid>/stat``, so the client's share of the 2 cores does not count).
2. **Metrics overhead, scrapes**: the same load with a scraper reading ``/metrics`` 10
   times a second (a Prometheus scraping at 100 ms, 150x the usual 15 s) vs none:
   the throughput ratio, and the server CPU of one scrape.
3. **Metrics overhead, per step**: in process, the conv trace's first 10 minutes replayed
   through one engine with ``ServingMetrics.record`` on every step vs without.

    PYTHONPATH=src .venv/bin/python benchmarks/emulator.py [--seconds 6] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from gpuscale.serving import Engine, ServingMetrics, replay
from gpuscale.serving.presets import preset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving_model import TRACE, load_trace

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def start() -> tuple[subprocess.Popen[str], str]:
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
            "--step-cost",
            "base=0.002,prefill_token=0,decode_seq=0,context_token=0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r"listening on http://(\S+?):(\d+):", line)
        if found:
            return proc, f"http://{found.group(1)}:{found.group(2)}"
    raise SystemExit("the emulator did not start")


async def drive(
    url: str, seconds: float, concurrency: int, *, stream: bool, scrape_hz: float
) -> tuple[int, int, float]:
    """(completions, scrapes, elapsed) of one round."""
    done = scrapes = 0
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=concurrency + 2)
    body = {"prompt": [1] * 64, "max_tokens": 16, "stream": stream}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def worker() -> None:
            nonlocal done
            while time.monotonic() < stop:
                reply = await client.post("/v1/completions", json=body)
                reply.raise_for_status()
                done += 1

        async def scraper() -> None:
            nonlocal scrapes
            while scrape_hz and time.monotonic() < stop:
                (await client.get("/metrics")).raise_for_status()
                scrapes += 1
                await asyncio.sleep(1 / scrape_hz)

        started = time.monotonic()
        await asyncio.gather(scraper(), *(worker() for _ in range(concurrency)))
        return done, scrapes, time.monotonic() - started


def scrape_cost(proc: subprocess.Popen[str], url: str, count: int = 300) -> tuple[float, float]:
    """(median scrape latency, server CPU per scrape), the engine idle."""
    latencies = []
    with httpx.Client(base_url=url) as client:
        before = cpu_seconds(proc.pid)
        for _ in range(count):
            began = time.perf_counter()
            client.get("/metrics").raise_for_status()
            latencies.append(time.perf_counter() - began)
        spent = cpu_seconds(proc.pid) - before
    return statistics.median(latencies), spent / count


def per_step(rounds: int) -> None:
    specs = [s for s in load_trace(TRACE) if s.arrival < 600]
    chosen = preset("h100", "llama-3.1-8b")
    timings: dict[bool, list[float]] = {False: [], True: []}
    steps = 0
    for _ in range(rounds):
        for with_metrics in (False, True):
            engine = Engine(chosen.engine_config(), chosen.step_cost())
            metrics = ServingMetrics("m")
            began = time.perf_counter()
            replay(engine, specs, on_step=metrics.record if with_metrics else None)
            timings[with_metrics].append(time.perf_counter() - began)
            steps = engine.counts.steps
    plain, recorded = (statistics.median(timings[k]) for k in (False, True))
    print(
        f"per step: {len(specs)} requests, {steps} engine steps: {plain:.2f} s without metrics, "
        f"{recorded:.2f} s with ServingMetrics.record (x{recorded / plain:.2f}, "
        f"{(recorded - plain) / steps * 1e6:.1f} µs per step); medians of {rounds}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    proc, url = start()
    try:
        latency, cpu = scrape_cost(proc, url)
        print(f"scrape: median {latency * 1000:.2f} ms, server CPU {cpu * 1000:.2f} ms per scrape")
        rates: dict[tuple[bool, float], list[float]] = {}
        cpu_per: dict[tuple[bool, float], list[float]] = {}
        for _ in range(args.rounds):
            for stream in (False, True):
                for hz in (0.0, 10.0):
                    before = cpu_seconds(proc.pid)
                    done, _, elapsed = asyncio.run(
                        drive(url, args.seconds, args.concurrency, stream=stream, scrape_hz=hz)
                    )
                    spent = cpu_seconds(proc.pid) - before
                    rates.setdefault((stream, hz), []).append(done / elapsed)
                    cpu_per.setdefault((stream, hz), []).append(spent / max(done, 1))
        for stream in (False, True):
            base = statistics.median(rates[stream, 0.0])
            scraped = statistics.median(rates[stream, 10.0])
            print(
                f"{'streamed' if stream else 'whole':8} concurrency {args.concurrency}: "
                f"{base:.0f} requests/s, server CPU "
                f"{statistics.median(cpu_per[stream, 0.0]) * 1000:.2f} ms per request; "
                f"with /metrics scraped 10/s {scraped:.0f} requests/s (x{scraped / base:.3f})"
            )
    finally:
        proc.terminate()
        proc.wait(10)
    per_step(args.rounds)


if __name__ == "__main__":
    main()
