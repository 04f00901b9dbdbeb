"""Benchmark: the ``serving.kind: vllm`` model against the queue model on the same trace
replay (issue 15's budget: the vllm model's 7-day replay of the conv trace at most 3× the
queue model's time on the same machine).

Both run the production path, alternating: manifests and a profile read by build_inputs,
the real PromQL engine, KEDA's poll, the HPA, scrapes, the cluster autoscaler. The queue
model is ``tests.unit.sim.worlds.llm_inputs`` (in-flight + queued requests, 32 slots,
token rates); the vllm model is ``vllm_inputs`` (the same Deployment running ``vllm
serve``, the MI300X × Llama 3.1 8B preset, a ScaledObject on
``vllm:num_requests_waiting + vllm:num_requests_running``).

Without ``--baseline`` the runs share one process (the first queue run is cold). With
``--baseline REF`` every run is its own process, and a ``git worktree add --detach`` of
``REF`` (removed afterwards) runs beside this checkout, alternated: run by run, REF's queue
and vllm models, then this checkout's; each side's sources first on ``sys.path``. Each
vllm run also prints a digest of its whole result (every request's arrival, latency,
outcome, TTFT, ITL and queue time, and every record), so that equal digests show the two
sides computed the same run.

Run from the repository root:
  PYTHONPATH=src .venv/bin/python benchmarks/sim_vllm.py week          # 7 days, once each
  PYTHONPATH=src .venv/bin/python benchmarks/sim_vllm.py hours --repeat 3   # 2 h, 3 pairs
  .venv/bin/python benchmarks/sim_vllm.py day --repeat 3 --baseline 3693258
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECONDS = {"week": 7 * 86400.0, "day": 86400.0, "hours": 7200.0}

_CHILD = r"""
import hashlib, json, resource, sys, time
root, model, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
sys.path[:0] = [root + "/src", root + "/benchmarks", root]
from sim_common import TRACE
from tests.unit.sim.worlds import llm_inputs, vllm_inputs
from gpuscale.inputs import read_trace
from gpuscale.sim.requests import SERVED
from gpuscale.sim.world import LoadSpec

r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
tiled = read_trace(TRACE).tiled(seconds)
inputs = llm_inputs(1) if model == "queue" else vllm_inputs()
result = inputs.simulation(load=LoadSpec(traces={"llm-0": tiled}), seed=1).run(seconds)
wall = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
log = result.requests["llm/llm-0"]
digest = hashlib.sha256()
for column in (log.arrivals, log.latencies, log.outcomes, log.ttft, log.itl, log.queue_time):
    if column is not None:
        digest.update(column.tobytes())
for record in result.records:
    digest.update(repr(record).encode())
print(json.dumps({
    "wall": wall,
    "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
    "requests": len(log),
    "served": log.count(SERVED) / max(len(log), 1),
    "digest": digest.hexdigest()[:16],
}))
"""


def _load() -> float:
    return os.getloadavg()[0]


def _child(root: Path, model: str, seconds: float) -> dict[str, float | str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), model, str(seconds)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _in_process(seconds: float, repeat: int) -> None:
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
    from sim_common import TRACE, timed
    from tests.unit.sim.worlds import llm_inputs, vllm_inputs

    from gpuscale.inputs import read_trace
    from gpuscale.sim.requests import SERVED
    from gpuscale.sim.world import LoadSpec

    def run(model: str) -> tuple[int, float]:
        tiled = read_trace(TRACE).tiled(seconds)
        inputs = llm_inputs(1) if model == "queue" else vllm_inputs()
        result = inputs.simulation(load=LoadSpec(traces={"llm-0": tiled}), seed=1).run(seconds)
        log = result.requests["llm/llm-0"]
        return len(log), log.count(SERVED) / max(len(log), 1)

    print("| model | virtual time | requests | served | CPU | wall | load average |")
    print("|---|---|---|---|---|---|---|")
    cpu: dict[str, list[float]] = {"queue": [], "vllm": []}
    for _ in range(repeat):
        for model in ("queue", "vllm"):
            t = timed(lambda m=model: run(m))  # type: ignore[misc]
            requests, served = t.value
            cpu[model].append(t.cpu_s)
            print(
                f"| {model} | {seconds / 3600:g} h | {requests:,} | {served:.3f} | "
                f"{t.cpu_s:.2f} s | {t.wall_s:.2f} s | {_load():.1f} |",
                flush=True,
            )
    queue, vllm = statistics.median(cpu["queue"]), statistics.median(cpu["vllm"])
    print(f"\nmedian CPU: queue {queue:.2f} s, vllm {vllm:.2f} s, ratio {vllm / queue:.1f}x")


def _side_by_side(seconds: float, repeat: int, baseline: str) -> None:
    print(
        "| side | model | virtual time | requests | served | CPU | wall | load average | digest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    cpu: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuscale-sim-vllm-") as tmp:
        worktree = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(worktree), baseline],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        sides = ((f"`{baseline}`", worktree), ("this checkout", ROOT))
        try:
            for _ in range(repeat):
                for label, root in sides:
                    for model in ("queue", "vllm"):
                        got = _child(root, model, seconds)
                        cpu.setdefault((label, model), []).append(float(got["cpu"]))
                        print(
                            f"| {label} | {model} | {seconds / 3600:g} h | {got['requests']:,} | "
                            f"{got['served']:.3f} | {got['cpu']:.2f} s | {got['wall']:.2f} s | "
                            f"{_load():.1f} | {got['digest'] if model == 'vllm' else ''} |",
                            flush=True,
                        )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(worktree)],
                cwd=ROOT,
                check=False,
                capture_output=True,
            )
    print()
    medians = {key: statistics.median(values) for key, values in cpu.items()}
    for label, _root in sides:
        queue, vllm = medians[(label, "queue")], medians[(label, "vllm")]
        print(
            f"{label}: median CPU queue {queue:.2f} s, vllm {vllm:.2f} s, ratio {vllm / queue:.2f}x"
        )
    before, after = medians[(sides[0][0], "vllm")], medians[(sides[1][0], "vllm")]
    print(f"vllm model, this checkout / {sides[0][0]}: {after / before:.2f}x CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("case", choices=list(SECONDS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", help="git revision to run beside this checkout")
    args = parser.parse_args()
    if args.baseline:
        _side_by_side(SECONDS[args.case], args.repeat, args.baseline)
    else:
        _in_process(SECONDS[args.case], args.repeat)


if __name__ == "__main__":
    main()
