"""Profile the simulator (cProfile) on one simulated day of the conv trace or the
tutorial's gauge scenario, and print where the time goes, by the parts of the simulator.

cProfile charges its own overhead per call, so small functions called often look larger
than they are: read the shares, not the seconds. Run from the repository root::

    .venv/bin/python benchmarks/sim_profile.py [day|tutorial] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PARTS = {
    "request dispatch (Router._dispatch)": "requests.py:{}(_dispatch)",
    "replica snapshots (ReplicaServer.snapshot)": "replica.py:{}(snapshot)",
    "scrapes (ScrapeManager._collect)": "scrape.py:{}(_collect)",
    "scaler syncs (KEDA poll + HPA, scaler_loop._scaler_sync)": "scaler_loop.py:{}(_scaler_sync)",
    "  KEDA poll (ScaledObjectLoops.check)": "keda.py:{}(check)",
    "  HPA sync (ScaledObjectLoops.sync)": "keda.py:{}(sync)",
    "    HPA model (reconcile_detailed)": "controller.py:{}(reconcile_detailed)",
    "  PromQL (PromQLBackend.instant)": "metrics.py:{}(instant)",
    "cluster autoscaler loop (AutoscalerLoop.run)": "autoscaler_loop.py:{}(run)",
    "timeline records (Recorder.write)": "recorder.py:{}(write)",
    "trace reading (read_trace)": "inputs.py:{}(read_trace)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("case", nargs="?", choices=["day", "tutorial"], default="day")
    parser.add_argument("--top", type=int, default=25)
    options = parser.parse_args()
    if options.case == "day":
        import sim_trace

        sim_trace.run(1, 3600.0)  # warm the imports and caches

        def work() -> None:
            sim_trace.run(1, 86400.0)
    else:
        import sim_tutorial

        sim_tutorial.run(1.0)

        def work() -> None:
            sim_tutorial.run(24.0)

    profiler = cProfile.Profile()
    profiler.runcall(work)
    stats = pstats.Stats(profiler)
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(entry[3] for entry in raw.values())
    print(f"cProfile of {options.case}: {total:.2f} s under the profiler\n")
    print("| part | cumulative | share |\n|---|---:|---:|")
    for label, pattern in PARTS.items():
        file_part, function = pattern.split(":{}")
        # the largest: a name defined twice in a file counts its outermost
        cumulative = max(
            [
                entry[3]
                for (path, _line, name), entry in raw.items()
                if path.endswith("/" + file_part) and f"({name})" == function
            ]
            or [0.0]
        )
        print(f"| {label} | {cumulative:.3f} s | {cumulative / total:.0%} |")
    print()
    stats.sort_stats("tottime").print_stats(options.top)


if __name__ == "__main__":
    main()
