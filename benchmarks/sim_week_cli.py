"""Benchmark: the 7-day replay from the command line (issue 14: "`gpuscale simulate` on a
7-day trace shows progress and finishes in the measured time from the command line").

The world is ``benchmarks/sim_speed.py``'s ``week`` case — ``tests.unit.sim.worlds``'
LLM server under a ScaledObject on in-flight + queued requests, the conv trace tiled to
7 days — written to a temporary directory as the manifests and ``gpuscale.yaml`` a user
would have, then run as ``python -m gpuscale simulate DIR --trace ... --until 7d -o json``
in a fresh process, beside the same world run in process (``sim_trace.run``), alternated.
It prints the command's wall and CPU time, the in-process run's, the difference (start-up,
the summary and the JSON), the progress lines the command wrote to stderr, and whether
both runs agree on the requests served.

Run from the repository root::

    .venv/bin/python benchmarks/sim_week_cli.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks"), str(ROOT)]

from sim_common import TRACE  # noqa: E402
from tests.unit.sim.worlds import LLM_MANIFESTS, LLM_PROFILE, LLM_WORKLOAD  # noqa: E402

_IN_PROCESS = r"""
import json, resource, sys, time
sys.path[:0] = [sys.argv[1] + "/src", sys.argv[1] + "/benchmarks", sys.argv[1]]
import sim_trace
from gpuscale.sim.requests import SERVED
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
sim, result, _ = sim_trace.run(1, 7 * 86400)
wall = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
served = sum(log.count(SERVED) for log in result.requests.values())
print(json.dumps({"wall": wall, "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime,
                  "served": served}))
"""


def _write_world(directory: Path) -> None:
    """The week's world as files: one workload, ``llm-0``, as ``llm_inputs(1)`` builds it."""
    (directory / "llm.yaml").write_text(LLM_MANIFESTS.format(name="llm-0"))
    (directory / "gpuscale.yaml").write_text(
        LLM_PROFILE.format(min_nodes=2, max_nodes=20, workloads=LLM_WORKLOAD.format(name="llm-0"))
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(world: Path) -> dict[str, Any]:
    argv = [
        sys.executable, "-m", "gpuscale", "simulate", str(world), "--trace", TRACE,
        "--workload", "llm-0", "--until", "7d", "--seed", "1", "--max-work", "2e7", "-o", "json",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT / "src")
    cpu0, t0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    summary = json.loads(done.stdout)
    progress = [line for line in done.stderr.splitlines() if "progress:" in line]
    return {"wall": wall, "cpu": cpu, "summary": summary, "progress": progress}


def _in_process() -> dict[str, Any]:
    cpu0 = _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    got["process_cpu"] = _children_cpu() - cpu0
    return got


def _served(document: dict[str, Any]) -> int:
    """The requests served in the command's JSON output (its one workload)."""
    return sum(int(row["served"]) for row in document["summary"]["requests"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    load_start = os.getloadavg()
    commands: list[dict[str, Any]] = []
    inside: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gpuscale-week-cli-") as tmp:
        world = Path(tmp)
        _write_world(world)
        for _ in range(options.repeats):
            commands.append(_command(world))
            inside.append(_in_process())
    load_end = os.getloadavg()

    def med(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(float(r[key]) for r in runs)

    served_cli = _served(commands[0]["summary"])
    print(
        f"`.venv/bin/python benchmarks/sim_week_cli.py --repeats {options.repeats}` — load "
        f"average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; medians of "
        f"{options.repeats} alternated runs\n"
    )
    print("| run | wall | CPU |")
    print("|---|---:|---:|")
    print(f"| `gpuscale simulate ... --until 7d -o json` | {med(commands, 'wall'):.2f} s | "
          f"{med(commands, 'cpu'):.2f} s |")  # fmt: skip
    print(f"| the same world in process (`sim_trace.run`, the `week` case) | "
          f"{med(inside, 'wall'):.2f} s | {med(inside, 'cpu'):.2f} s |")  # fmt: skip
    print(f"| the command's own part (start-up, reading, summary, JSON) | "
          f"{med(commands, 'wall') - med(inside, 'wall'):.2f} s | "
          f"{med(commands, 'cpu') - med(inside, 'cpu'):.2f} s |")  # fmt: skip
    print()
    served_in = int(inside[0]["served"])
    print(f"requests served: command {served_cli:,} and in process {served_in:,} — "
          f"{'the same' if served_cli == served_in else 'DIFFERENT'}")  # fmt: skip
    progress: list[str] = commands[0]["progress"]
    print(f"progress lines on stderr (not a terminal: a line every 10 s): {len(progress)}")
    for line in progress:
        print(f"    {line}")


if __name__ == "__main__":
    main()
