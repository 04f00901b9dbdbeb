"""Benchmark: the tutorial gauge scenario for 24 hours of virtual time (target <= 1 s wall).

The production path: examples/tutorial/ read by build_inputs, the real PromQL engine, the
real KEDA poll and HPA, every loop at the profile's periods.

Run: .venv/bin/python benchmarks/sim_tutorial.py [--hours 24] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from sim_common import SCENARIO, load_average, timed, tutorial_inputs

from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.world import LoadSpec


def run(hours: float):  # type: ignore[no-untyped-def]
    inputs = tutorial_inputs()
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    sim = inputs.simulation(load=LoadSpec(scenario=scenario), seed=1)
    result = sim.run(hours * 3600)
    return sim, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best = None
    for _ in range(args.repeat):
        t = timed(lambda: run(args.hours))
        if best is None or t.wall_s < best.wall_s:
            best = t
    assert best is not None
    sim, result = best.value
    backend = sim.world.metrics
    print(
        "| case | virtual time | wall | CPU | engine actions | actions per CPU-second | "
        "records | scrapes | queries (evaluated) | load average |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| tutorial gauge | {args.hours:g} h | {best.wall_s:.3f} s | {best.cpu_s:.3f} s | "
        f"{result.events:,} | {result.events / best.cpu_s:,.0f} | {len(result.records):,} | "
        f"{result.scrapes:,} | {backend.queries:,} ({backend.evaluations:,}) | "
        f"{load_average():.1f} |"
    )


if __name__ == "__main__":
    main()
