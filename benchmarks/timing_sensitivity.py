"""Sensitivity of the tutorial's headline figures to the loops' timing (issue 13).

How much the flap period, the time to the desired replicas, the time to Ready capacity
and the GPU-hours move across seeds (10 by default) and across each latency of the
profile's ``timing`` section at the ends of its plausible range (the others at their
defaults), and on the exact grid (every latency 0). The tutorial (``gpuscale demo``'s
first run, namespace kube-system) and its fix, 40 minutes of virtual time each.

Run from the repository root (writes the table to stdout; docs/timing.md quotes it):
  PYTHONPATH=src .venv/bin/python benchmarks/timing_sensitivity.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

from sim_common import SCENARIO

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.report.summary import summarize
from gpuscale.sim.inputs import SimulationInputs, build_inputs, timing_options
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.timing import Latencies
from gpuscale.sim.world import LoadSpec

ROOT = Path(__file__).resolve().parents[1]
UNTIL = 2400.0

# (label, field, value): the plausible range's ends, each with the other latencies at
# their defaults
VARIANTS: tuple[tuple[str, str, float], ...] = (
    ("hpa_reconcile 5ms", "hpa_reconcile_s", 0.005),
    ("hpa_reconcile 200ms", "hpa_reconcile_s", 0.2),
    ("keda_poll 2ms", "keda_poll_s", 0.002),
    ("keda_poll 100ms", "keda_poll_s", 0.1),
    ("keda_start 20ms", "keda_start_s", 0.02),
    ("keda_start 2s", "keda_start_s", 2.0),
    ("autoscaler_run_once 50ms", "autoscaler_run_once_s", 0.05),
    ("autoscaler_run_once 2s", "autoscaler_run_once_s", 2.0),
    ("pod_start 1s", "pod_start_s", 1.0),
    ("pod_start 5s", "pod_start_s", 5.0),
    ("spread 0", "spread", 0.0),
    ("spread 1", "spread", 1.0),
)


def _inputs(folder: str) -> SimulationInputs:
    path = ROOT / "examples" / folder
    return build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system" if folder == "tutorial" else "default",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )


def _figures(inputs: SimulationInputs, seed: int) -> tuple[float | None, float, float, float]:
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    sim = inputs.simulation(load=LoadSpec(scenario=scenario), seed=seed)
    result = sim.run(UNTIL)
    stats = summarize(result.records, until=UNTIL, pools=result.header.pools)
    (reaction,) = stats.reactions
    gpu = sum(p.gpu_hours for p in stats.pools)
    assert reaction.to_desired_s is not None
    assert reaction.to_ready_s is not None
    return stats.replicas[0].flap_period_s, reaction.to_desired_s, reaction.to_ready_s, gpu


def _span(values: Sequence[float | None], unit: str = "s", digits: int = 1) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "—"
    low, mid, high = min(known), statistics.median(known), max(known)
    if high - low < 0.5 * 10**-digits:
        return f"{mid:.{digits}f} {unit}"
    return f"{mid:.{digits}f} ({low:.{digits}f}–{high:.{digits}f}) {unit}"


def _row(label: str, inputs: SimulationInputs, fixed: SimulationInputs, seeds: range) -> str:
    runs = [_figures(inputs, s) for s in seeds]
    fixed_runs = [_figures(fixed, s) for s in seeds]
    return (
        f"| {label} | {_span([r[0] for r in runs])} | "
        f"{_span([r[1] for r in runs])} / {_span([r[1] for r in fixed_runs])} | "
        f"{_span([r[2] for r in runs])} / {_span([r[2] for r in fixed_runs])} | "
        f"{_span([r[3] for r in runs], 'h', 3)} / {_span([r[3] for r in fixed_runs], 'h', 3)} |"
    )


def _with(inputs: SimulationInputs, timing: Latencies) -> SimulationInputs:
    return replace(inputs, spec=replace(inputs.spec, timing=timing))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    seeds = range(args.seeds)
    tutorial, fixed = _inputs("tutorial"), _inputs("tutorial-fixed")
    default = timing_options(read_profile(ROOT / "examples/tutorial/gpuscale.yaml").timing)
    print(
        f"| timing ({args.seeds} seeds: median (min–max)) | flap period | to desired "
        "(tutorial / fixed) | to Ready capacity (tutorial / fixed) | GPU-hours "
        "(tutorial / fixed) |"
    )
    print("|---|---|---|---|---|")
    print(_row("default", tutorial, fixed, seeds))
    for label, name, value in VARIANTS:
        timing = replace(default, **{name: value})
        print(_row(label, _with(tutorial, timing), _with(fixed, timing), seeds))
    print(
        _row("exact grid (all 0)", _with(tutorial, Latencies()), _with(fixed, Latencies()), seeds)
    )


if __name__ == "__main__":
    main()
