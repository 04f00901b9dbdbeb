"""Benchmark: request-level replay of AzureLLMInferenceTrace_conv.csv (target: 7 days in
<= 15 s wall on 2 cores), and how the time grows with duration and workload count.

The production path: manifests and a profile read by build_inputs (an LLM server with a
ScaledObject on in-flight + queued requests), the real PromQL engine, the real KEDA poll
(30 s) and HPA (15 s), scrapes every 30 s, the cluster autoscaler every 10 s.

Run:
  .venv/bin/python benchmarks/sim_trace.py week            # one workload, trace tiled to 7 days
  .venv/bin/python benchmarks/sim_trace.py duration        # 1, 2, 4 days
  .venv/bin/python benchmarks/sim_trace.py workloads       # 1, 10, 50 workloads x 1 hour
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# the LLM world is a test fixture (tests/unit/sim/worlds.py), imported from the repository root
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sim_common import TRACE, load_average, timed
from tests.unit.sim.worlds import llm_inputs

from gpuscale.inputs import read_trace
from gpuscale.sim.requests import SERVED
from gpuscale.sim.world import LoadSpec


def run(workloads: int, seconds: float, seed: int = 1):  # type: ignore[no-untyped-def]
    trace = read_trace(TRACE)
    tiled = trace.tiled(seconds)
    inputs = llm_inputs(workloads)
    names = [w.name for w in inputs.spec.workloads]
    sim = inputs.simulation(load=LoadSpec(traces=dict.fromkeys(names, tiled)), seed=seed)
    result = sim.run(seconds)
    return sim, result, len(tiled) * workloads


def row(label: str, workloads: int, seconds: float) -> str:
    t = timed(lambda: run(workloads, seconds))
    sim, result, requests = t.value
    backend = sim.world.metrics
    served = sum(log.count(SERVED) for log in result.requests.values())
    return (
        f"| {label} | {workloads} | {seconds / 3600:g} h | {requests:,} | {t.wall_s:.2f} s | "
        f"{t.cpu_s:.2f} s | {result.events:,} | {result.events / t.cpu_s:,.0f} | "
        f"{requests / t.cpu_s:,.0f} | {backend.queries:,} ({backend.evaluations:,}) | "
        f"{result.scrapes:,} | {served / max(requests, 1):.3f} | {load_average():.1f} |"
    )


HEADER = (
    "| case | workloads | virtual time | requests | wall | CPU | engine actions | "
    "actions per CPU-second | requests per CPU-second | queries (evaluated) | scrapes | "
    "served fraction | load average |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", choices=["week", "duration", "workloads"])
    args = parser.parse_args()
    print(HEADER)
    if args.case == "week":
        print(row("conv tiled to 7 days", 1, 7 * 86400))
    elif args.case == "duration":
        for days in (1, 2, 4):
            print(row(f"conv tiled to {days} d", 1, days * 86400), flush=True)
    else:
        for n in (1, 10, 50):
            print(row("conv, 1 hour", n, 3600), flush=True)


if __name__ == "__main__":
    main()
