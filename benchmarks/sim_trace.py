"""Benchmark: request-level replay of AzureLLMInferenceTrace_conv.csv (target: 7 days in
<= 15 s wall on 2 cores), and how wall time grows with duration and workload count.

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

from sim_common import TimedBackend, llm_pool, llm_scalers, llm_workload, timed

from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import SimulationSpec
from gpuscale.sim.testing import FakeMetricsBackend
from gpuscale.sim.traces import read_trace
from gpuscale.sim.world import LoadSpec

TRACE = "/work/shared/traces/AzureLLMInferenceTrace_conv.csv"


def run(workloads: int, seconds: float, seed: int = 1):
    trace = read_trace(TRACE)
    tiled = trace.tiled(seconds)
    names = [f"llm-{i}" for i in range(workloads)]
    spec = SimulationSpec(
        tuple(llm_workload(n) for n in names),
        (llm_pool(max_nodes=20 * workloads, min_nodes=2 * workloads),),
    )
    backend = TimedBackend(FakeMetricsBackend())
    sim = Simulation(
        spec,
        metrics=backend,
        seed=seed,
        scalers={n: llm_scalers(n) for n in names},
        load=LoadSpec(traces=dict.fromkeys(names, tiled)),
    )
    result = sim.run(seconds)
    return result, backend, len(tiled) * workloads


def row(label: str, workloads: int, seconds: float) -> str:
    t = timed(lambda: run(workloads, seconds))
    result, backend, requests = t.value
    served = sum(log.count(0) for log in result.requests.values())
    own = t.cpu_s - backend.query_s
    return (
        f"| {label} | {workloads} | {seconds / 3600:g} h | {requests:,} | {t.wall_s:.2f} s | "
        f"{t.cpu_s:.2f} s | {backend.query_s:.2f} s | {own:.2f} s | {result.events:,} | "
        f"{backend.queries:,} | {result.scrapes:,} | {requests / own:,.0f} | "
        f"{served / max(requests, 1):.3f} |"
    )


HEADER = (
    "| case | workloads | virtual time | requests | wall | CPU | of which fake queries | "
    "CPU without queries | engine actions | queries | scrapes | requests per CPU-second "
    "(without queries) | served fraction |\n"
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
