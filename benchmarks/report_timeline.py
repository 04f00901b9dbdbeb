"""How long ``gpuscale report`` takes on long timelines: decoding, the read-off summary, the
prediction-vs-reality comparison, the six PNGs and the HTML page. No target in the issues;
the number says whether a week-long simulation's report is a wait (it should not be).

Run: .venv/bin/python benchmarks/report_timeline.py [--days 7] [--every 15]
It builds a synthetic timeline with one record every EVERY seconds for DAYS days (replicas
wandering between 1 and 8, a sinusoidal request rate, an HPA decision every 20 records),
encodes it, then times each step on two copies side by side (best of 3, wall and CPU).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable

from gpuscale.report import (
    ReportRun,
    compare_timelines,
    render_plots,
    report_html,
    timeline_basics,
)
from gpuscale.timeline import (
    Decision,
    Header,
    Record,
    Timeline,
    WorkloadState,
    decode_lines,
    encode_header,
    encode_record,
)


def _timeline(days: float, every: float) -> Timeline:
    rng = random.Random(1)
    records, spec, cost = [], 1, 0.0
    for index in range(int(days * 86400 / every)):
        t = index * every
        rate = 5 + 3 * math.sin(t / 3600)
        decisions: tuple[Decision, ...] = ()
        if index % 20 == 0:
            spec = max(1, min(8, spec + rng.choice((-1, 0, 1))))
            decisions = (Decision("hpa", "scale", "SucceededRescale", "deployment/ns/w"),)
        cost += spec * 1.99 * every / 3600
        state = WorkloadState(
            "ns/w",
            spec,
            spec,
            spec,
            spec,
            {"Ready": spec},
            {"query:s0": rate * 10, "hpa:s0": rate * 10 / spec},
        )
        records.append(
            Record(
                t=t,
                workloads=(state,),
                nodes={"gpu": {"ready": spec}},
                cost_usd=cost,
                load={"request_rate": rate},
                decisions=decisions,
            )
        )
    return Timeline(Header(world="simulate", meta={"threshold": 10}), tuple(records))


def _best(step: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--every", type=float, default=15.0)
    args = parser.parse_args()
    timeline = _timeline(args.days, args.every)
    lines = [encode_header(timeline.header), *(encode_record(r) for r in timeline.records)]
    runs = [ReportRun("a", timeline), ReportRun("b", timeline)]
    print(f"{len(timeline.records):,} records per timeline, {args.days:g} days, two timelines")
    steps: list[tuple[str, Callable[[], object]]] = [
        ("decode one timeline", lambda: decode_lines(lines)),
        ("timeline_basics, one", lambda: timeline_basics(timeline)),
        ("compare_timelines", lambda: compare_timelines(timeline, timeline)),
        ("render_plots (6 PNGs)", lambda: render_plots(runs)),
        ("report_html (plots included)", lambda: report_html(runs)),
    ]
    for name, step in steps:
        wall, cpu = _best(step)
        print(f"{name:32s} wall {wall:6.2f} s   cpu {cpu:6.2f} s")


if __name__ == "__main__":
    main()
