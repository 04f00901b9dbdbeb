"""Benchmark: the simulator's speed (issue 14), this checkout beside a previous version in
one invocation, each case in a fresh process, alternating, medians.

Cases (the production path: manifests and a profile through ``build_inputs``, the real
PromQL engine, KEDA and the HPA, every loop at its default period):

- ``week``: ``AzureLLMInferenceTrace_conv.csv`` tiled to 7 days, one LLM server under a
  ScaledObject on in-flight + queued requests (``sim_trace.run``). Targets: <= 2.0 s wall,
  <= 0.2 x the baseline, <= 150 MB peak RSS.
- ``tutorial``: the tutorial's gauge scenario for 24 h (``sim_tutorial.run``), in process.
  Target: <= 0.25 s.
- ``day``: the conv trace tiled to 1 day (a quicker check of the same path).
- ``requests``: the request path alone — the week's arrivals through one ``Router`` to 3
  replicas of 32 slots, advanced and scraped (``ReplicaServer.snapshot``) every 15 s, no
  control loops; its "records" column counts the requests served.
- ``overload``: the request path on one backlogged replica — 300 requests/s for 30 min to
  4 slots of 1 s (a 75x overload, 60 s timeout), advanced and scraped every 15 s: nearly
  every request waits or times out, so it is served one by one.
- ``coldstart``: scale from zero — 100 requests/s wait at the Service 240 s for the first
  replica (24,000 of them, handed out when it appears), then 30 min served by its 64 slots
  of 0.1 s, advanced and scraped every 15 s.

A run's time is from building the inputs to the result (the trace's reading included, the
interpreter's start-up and imports not); CPU is the child's user + system time; peak RSS is
the child's ``ru_maxrss`` (imports included). The baseline runs from ``git worktree add
--detach`` of ``REF`` (its ``src``, ``tests`` and ``benchmarks``), removed afterwards; both
sides run this file's child code with their own sources first on ``sys.path``.

Run from the repository root::

    .venv/bin/python benchmarks/sim_speed.py [--baseline REF] [--repeats 3] [CASE ...]

It prints one Markdown table with the load average at the start and the end (the machine
is shared: medians of alternated runs, and the CPU seconds, are the figures to compare).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("week", "tutorial", "day", "requests", "overload", "coldstart")
TARGETS = {
    "week": "<= 2.0 s, <= 0.2x, <= 150 MB",
    "tutorial": "<= 0.25 s",
    "day": "",
    "requests": "",
    "overload": "",
    "coldstart": "",
}

_CHILD = r"""
import json, resource, sys, time
root = sys.argv[1]
case = sys.argv[2]
sys.path[:0] = [root + "/src", root + "/benchmarks", root]
if case == "tutorial":
    import sim_tutorial
    work = lambda: sim_tutorial.run(24.0)
elif case == "requests":
    from sim_common import TRACE
    from gpuscale.inputs import read_trace
    from gpuscale.sim.load import TraceSource
    from gpuscale.sim.requests import SERVED, Router
    from gpuscale.sim.specs import RequestCapacity

    class _Result:
        records = ()
        events = 0

    def work():
        seconds = 7 * 86400.0
        trace = read_trace(TRACE).tiled(seconds)
        capacity = RequestCapacity(
            concurrency=32, service_time_s=0.05, prefill_tokens_per_s=20000.0,
            decode_tokens_per_s=150.0, timeout_s=60.0,
        )
        router = Router(TraceSource(trace), capacity, buckets=(0.5, 1.0, 2.0, 5.0, 10.0),
                        seed=1, track_busy=False)
        servers = [router.new_server(f"r{k}", 0.0) for k in range(3)]
        for server in servers:
            router.add_endpoint(server, 0.0)
        t = 0.0
        while t < seconds:
            t += 15.0
            router.advance(t)
            for server in servers:
                server.snapshot(t, router.bounds, latencies=False)
        log = router.finish(seconds, servers)
        result = _Result()
        result.records = range(log.count(SERVED))
        result.requests = {"r": log}
        return None, result
elif case in ("overload", "coldstart"):
    import numpy as np
    from gpuscale.sim.load import TraceSource
    from gpuscale.sim.requests import SERVED, Router
    from gpuscale.sim.specs import RequestCapacity
    from gpuscale.sim.traces import Trace

    class _Result:
        records = ()
        events = 0

    def work():
        seconds = 1800.0
        if case == "overload":
            rate, cold = 300.0, 0.0
            capacity = RequestCapacity(concurrency=4, service_time_s=1.0, timeout_s=60.0)
        else:
            rate, cold = 100.0, 240.0
            capacity = RequestCapacity(concurrency=64, service_time_s=0.1, timeout_s=300.0)
        count = int(rate * (cold + seconds))
        tokens = np.zeros(count, dtype=np.int64)
        trace = Trace(np.arange(count) / rate, tokens, tokens, has_tokens=False)
        router = Router(TraceSource(trace), capacity, buckets=(0.5, 1.0, 2.0, 5.0, 10.0),
                        seed=1, track_busy=False)
        router.advance(cold)  # before the first replica: every arrival waits at the Service
        server = router.new_server("r0", cold)
        router.add_endpoint(server, cold)
        t = cold
        while t < cold + seconds:
            t += 15.0
            router.advance(t)
            server.snapshot(t, router.bounds, latencies=False)
        log = router.finish(t, [server])
        result = _Result()
        result.records = range(log.count(SERVED))
        result.requests = {"r": log}
        return None, result
else:
    import sim_trace
    days = 7 if case == "week" else 1
    work = lambda: sim_trace.run(1, days * 86400)
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
out = work()
wall = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
result = out[1]
print(json.dumps({
    "wall": wall,
    "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
    "rss_mb": r1.ru_maxrss / 1024,
    "records": len(result.records),
    "events": result.events,
    "requests": sum(len(log) for log in result.requests.values()),
}))
"""


def _child(root: Path, case: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), case],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("cases", nargs="*", default=["week", "tutorial"], help=", ".join(CASES))
    parser.add_argument("--baseline", help="git revision to run beside this checkout")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="gpuscale-sim-speed-") as tmp:
        sides: list[tuple[str, Path]] = []
        worktree = Path(tmp) / "baseline"
        if options.baseline:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(worktree), options.baseline],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            sides.append((f"`{options.baseline}`", worktree))
        sides.append(("this checkout", ROOT))
        try:
            runs: dict[tuple[str, str], list[dict[str, float]]] = {}
            for _ in range(options.repeats):
                for case in options.cases:
                    for label, root in sides:
                        runs.setdefault((case, label), []).append(_child(root, case))
        finally:
            if options.baseline:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(worktree)],
                    cwd=ROOT,
                    check=False,
                    capture_output=True,
                )
    load_end = os.getloadavg()
    lines = [
        "`.venv/bin/python benchmarks/sim_speed.py"
        + (f" --baseline {options.baseline}" if options.baseline else "")
        + f" --repeats {options.repeats} {' '.join(options.cases)}` — CPython "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f} at the start, "
        f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f} at the end; medians of "
        f"{options.repeats} alternated runs, each in a fresh process",
        "",
        "| case | version | wall | CPU | peak RSS | engine actions | requests | records | "
        "ratio (wall, CPU) | target |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for case in options.cases:
        base = runs.get((case, sides[0][0])) if len(sides) == 2 else None
        for label, _root in sides:
            got = runs[(case, label)]
            wall, cpu = _median(got, "wall"), _median(got, "cpu")
            ratio = ""
            if base is not None and label == "this checkout":
                ratio = f"{wall / _median(base, 'wall'):.2f}x, {cpu / _median(base, 'cpu'):.2f}x"
            lines.append(
                f"| {case} | {label} | {wall:.2f} s | {cpu:.2f} s | "
                f"{_median(got, 'rss_mb'):.0f} MB | {int(got[0]['events']):,} | "
                f"{int(got[0]['requests']):,} | {int(got[0]['records']):,} | {ratio} | "
                f"{TARGETS[case] if label == 'this checkout' else ''} |"
            )
        if base is not None:
            mine = runs[(case, "this checkout")][0]
            same = all(base[0][k] == mine[k] for k in ("events", "requests", "records"))
            lines.append(f"| | | | | | | | {'same counts' if same else 'COUNTS DIFFER'} | | |")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
