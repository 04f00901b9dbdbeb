"""Benchmark: the ``serving.kind: vllm`` model against the queue model on the same trace
replay (issue 15's budget: the vllm model's 7-day replay of the conv trace at most 3× the
queue model's time on the same machine).

Both run the production path in one process, alternating: manifests and a profile read
by build_inputs, the real PromQL engine, KEDA's poll, the HPA, scrapes, the cluster
autoscaler. The queue model is ``tests.unit.sim.worlds.llm_inputs`` (in-flight + queued
requests, 32 slots, token rates); the vllm model is ``vllm_inputs`` (the same Deployment
running ``vllm serve``, the MI300X × Llama 3.1 8B preset, a ScaledObject on
``vllm:num_requests_waiting + vllm:num_requests_running``).

Run:
  PYTHONPATH=src .venv/bin/python benchmarks/sim_vllm.py week          # 7 days, once each
  PYTHONPATH=src .venv/bin/python benchmarks/sim_vllm.py hours --repeat 3   # 2 h, 3 pairs
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim_common import TRACE, load_average, timed
from tests.unit.sim.worlds import llm_inputs, vllm_inputs

from gpuscale.inputs import read_trace
from gpuscale.sim.requests import SERVED
from gpuscale.sim.world import LoadSpec


def run(model: str, seconds: float):  # type: ignore[no-untyped-def]
    tiled = read_trace(TRACE).tiled(seconds)
    inputs = llm_inputs(1) if model == "queue" else vllm_inputs()
    sim = inputs.simulation(load=LoadSpec(traces={"llm-0": tiled}), seed=1)
    result = sim.run(seconds)
    log = result.requests["llm/llm-0"]
    return len(log), log.count(SERVED) / max(len(log), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", choices=["week", "hours"])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    seconds = 7 * 86400.0 if args.case == "week" else 7200.0
    print("| model | virtual time | requests | served | CPU | wall | load average |")
    print("|---|---|---|---|---|---|---|")
    cpu: dict[str, list[float]] = {"queue": [], "vllm": []}
    for _ in range(args.repeat):
        for model in ("queue", "vllm"):
            t = timed(lambda m=model: run(m, seconds))
            requests, served = t.value
            cpu[model].append(t.cpu_s)
            print(
                f"| {model} | {seconds / 3600:g} h | {requests:,} | {served:.3f} | "
                f"{t.cpu_s:.2f} s | {t.wall_s:.2f} s | {load_average():.1f} |",
                flush=True,
            )
    queue, vllm = statistics.median(cpu["queue"]), statistics.median(cpu["vllm"])
    print(f"\nmedian CPU: queue {queue:.2f} s, vllm {vllm:.2f} s, ratio {vllm / queue:.1f}x")


if __name__ == "__main__":
    main()
