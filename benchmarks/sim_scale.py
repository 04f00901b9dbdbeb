"""Benchmark: how the simulator's time grows with virtual time, requests, workloads and
nodes (issue 14), as a table and a log-log plot in ``docs/benchmarks/``.

Every case is the LLM world of ``sim_trace`` (servers under ScaledObjects on in-flight +
queued requests, MI300X nodes, the real PromQL engine, KEDA and the HPA) replaying
``AzureLLMInferenceTrace_conv.csv``:

- ``virtual time``: one workload, the trace tiled to 3 h, 12 h, 1 d, 2 d;
- ``requests``: one workload for 6 h, the trace replayed 0.25, 1, 4 and 16 times as fast
  (``Trace.scaled``), so the requests grow and the control loops stay the same;
- ``workloads``: 1, 10, 30 and 100 workloads sharing one cluster for 1 day, each
  replaying the trace 10 times slower (48,000 requests a day each), so the control loops
  dominate;
- ``nodes``: one workload for 1 h on a pool held at 10, 100 and 1,000 nodes
  (``min_nodes``).

Each case runs in a fresh process (``sim_speed``'s child protocol is not needed: the case
is built and run here, timed from building the inputs to the result). Run from the
repository root::

    .venv/bin/python benchmarks/sim_scale.py [--quick] [--write]

``--quick`` stops every dimension before its largest case; ``--write`` writes
``docs/benchmarks/sim_scale.md`` and ``docs/benchmarks/sim_scale.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks" / "sim_scale.md"
PLOT = ROOT / "docs" / "benchmarks" / "sim_scale.png"

# (dimension, value, workloads, seconds, speed-up, pool nodes or None)
CASES: list[tuple[str, float, int, float, float, int | None]] = [
    *(("virtual time", h, 1, h * 3600.0, 1.0, None) for h in (3, 12, 24, 48)),
    *(("requests", s, 1, 6 * 3600.0, s, None) for s in (0.25, 1, 4, 16)),
    *(("workloads", n, n, 86400.0, 0.1, None) for n in (1, 10, 30, 100)),
    *(("nodes", n, 1, 3600.0, 1.0, n) for n in (10, 100, 1000)),
]
UNITS = {"virtual time": "hours", "requests": "× speed", "workloads": "", "nodes": ""}

_CHILD = r"""
import json, resource, sys, time
sys.path[:0] = [sys.argv[1] + "/src", sys.argv[1] + "/benchmarks", sys.argv[1]]
workloads, seconds, speedup = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
nodes = None if sys.argv[5] == "-" else int(sys.argv[5])
from sim_common import TRACE
from tests.unit.sim.worlds import LLM_MANIFESTS, LLM_PROFILE, LLM_WORKLOAD, llm_inputs
from gpuscale.inputs import read_trace
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.world import LoadSpec
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
trace = read_trace(TRACE)
if speedup != 1.0:
    trace = trace.scaled(speedup)
tiled = trace.tiled(seconds)
if nodes is None and workloads <= 50:
    inputs = llm_inputs(workloads)
elif nodes is None:
    # llm_inputs's pool would allow 20 nodes a workload; a profile pool holds at most 1,000
    names = [f"llm-{i}" for i in range(workloads)]
    inputs = build_inputs(
        ManifestSet(
            load_text("---\n".join(LLM_MANIFESTS.format(name=n) for n in names), "llm.yaml")
        ),
        load_profile_text(
            LLM_PROFILE.format(min_nodes=2 * workloads, max_nodes=1000,
                               workloads="".join(LLM_WORKLOAD.format(name=n) for n in names)),
            "gpuscale.yaml",
        ),
    )
else:
    inputs = build_inputs(
        ManifestSet(load_text(LLM_MANIFESTS.format(name="llm-0"), "llm.yaml")),
        load_profile_text(
            LLM_PROFILE.format(min_nodes=nodes, max_nodes=min(nodes + 20, 1000),
                               workloads=LLM_WORKLOAD.format(name="llm-0")),
            "gpuscale.yaml",
        ),
    )
names = [w.name for w in inputs.spec.workloads]
sim = inputs.simulation(load=LoadSpec(traces=dict.fromkeys(names, tiled)), seed=1)
result = sim.run(seconds)
wall = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "wall": wall,
    "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
    "rss_mb": r1.ru_maxrss / 1024,
    "requests": sum(len(log) for log in result.requests.values()),
    "events": result.events,
    "nodes": max(sum(sum(p.values()) for p in r.nodes.values()) for r in result.records),
}))
"""


def _run(workloads: int, seconds: float, speedup: float, nodes: int | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [str(workloads), str(seconds), str(speedup), "-" if nodes is None else str(nodes)]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log(wall) on log(value): 1 is linear."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def _plot(series: dict[str, list[tuple[float, float]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(series), figsize=(4 * len(series), 3.4))
    for ax, (dimension, points) in zip(axes, series.items(), strict=True):
        xs, ys = zip(*points, strict=True)
        ax.loglog(xs, ys, "o-", label="measured")
        ax.loglog(
            [xs[0], xs[-1]], [ys[0], ys[0] * xs[-1] / xs[0]], "--", color="grey", label="linear"
        )
        ax.set_xlabel(f"{dimension} {UNITS[dimension]}".strip())
        ax.set_ylabel("CPU seconds")
        ax.set_title(f"{dimension} (slope {_slope(list(points)):.2f})")
        ax.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(PLOT, dpi=90)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true")
    options = parser.parse_args()
    load_start = os.getloadavg()[0]
    cases = CASES
    if options.quick:
        last = {d: max(v for dd, v, *_ in CASES if dd == d) for d in UNITS}
        cases = [c for c in CASES if c[1] != last[c[0]]]
    rows = [
        "| dimension | value | workloads | virtual time | requests | nodes (peak) | wall | "
        "CPU | peak RSS | engine actions | CPU µs per request | CPU ms per engine action |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    series: dict[str, list[tuple[float, float]]] = {}
    for dimension, value, workloads, seconds, speedup, nodes in cases:
        got = _run(workloads, seconds, speedup, nodes)
        series.setdefault(dimension, []).append((value, got["cpu"]))
        rows.append(
            f"| {dimension} | {value:g} | {workloads} | {seconds / 3600:g} h | "
            f"{int(got['requests']):,} | {int(got['nodes']):,} | {got['wall']:.2f} s | "
            f"{got['cpu']:.2f} s | {got['rss_mb']:.0f} MB | {int(got['events']):,} | "
            f"{got['cpu'] / max(got['requests'], 1) * 1e6:.2f} | "
            f"{got['cpu'] / max(got['events'], 1) * 1e3:.3f} |"
        )
        print(rows[-1], flush=True)
    slopes = [
        f"- {dimension}: log-log slope {_slope(points):.2f}"
        for dimension, points in series.items()
        if len(points) > 1
    ]
    page = [
        "# Benchmark: how the simulator scales",
        "",
        f"`.venv/bin/python benchmarks/sim_scale.py{' --quick' if options.quick else ''} "
        f"--write` (load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at "
        "the end; each case once, in a fresh process; the machine is shared). See the "
        "script's docstring for the cases.",
        "",
        *rows,
        "",
        "Slope of log(CPU seconds) on log(value) (1 = linear):",
        "",
        *slopes,
        "",
        "![CPU seconds against each dimension, log-log](sim_scale.png)",
    ]
    text = "\n".join(page) + "\n"
    sys.stdout.write(text)
    if options.write:
        DOC.write_text(text, encoding="utf-8")
        _plot(series)


if __name__ == "__main__":
    main()
