"""Benchmark and evidence for ``gpuscale tune`` (issue 16): on each shared trace, the
recommendation for ``late<=1%`` against the user's configuration, KEDA's defaults, the
clairvoyant schedule and the lower bound; the trials per second with ``--jobs`` and on a
local 2-CPU Ray beside the process pool.

The system is ``benchmarks/tune_llm/`` (a DOKS MI300X pool and an LLM on the queue model).
Each case runs the real command line (``python -m gpuscale tune ... -o json``) and reads
its JSON.

Run:
  .venv/bin/python benchmarks/tune_traces.py evidence      # every trace, --holdout 30%
  .venv/bin/python benchmarks/tune_traces.py vllm --trials 100  # examples/vllm (vLLM model)
  .venv/bin/python benchmarks/tune_traces.py starts --trials 100  # Mooncake TTFT: the start
  .venv/bin/python benchmarks/tune_traces.py speed         # 200 trials, code trace, --jobs 2
  .venv/bin/python benchmarks/tune_traces.py ray           # trials/s: --jobs 2 vs local Ray
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = ROOT / "benchmarks" / "tune_llm"
TRACES = ROOT.parent / "shared" / "traces"
if not TRACES.is_dir():
    TRACES = Path("/work/shared/traces")
NAMES = (
    "AzureLLMInferenceTrace_conv.csv",
    "AzureLLMInferenceTrace_code.csv",
    "mooncake_conversation_trace.jsonl",
)


def tune(
    trace: Path, *extra: str, slo: str = "late<=1%", system: Path = SYSTEM
) -> tuple[dict[str, Any], float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = [sys.executable, "-m", "gpuscale", "tune", str(system), "--trace", str(trace)]
    started = time.monotonic()
    done = subprocess.run(
        [*args, "--slo", slo, "-o", "json", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout), time.monotonic() - started


def _shown(slo: str, value: float | None) -> str:
    if value is None:
        return "failed requests: never answered"
    return f"{value:.2%} late" if slo.startswith("late") else f"{value:.3f} s"


def _row(part: dict[str, Any], trace: str, slo: str) -> list[str]:
    rows, bound = part["rows"], part["lower_bound"]["dollars"]
    clair = rows["clairvoyant"]["dollars"]
    out = []
    for label in ("your config", "KEDA defaults", "recommended", "clairvoyant"):
        if label not in rows:
            continue
        r = rows[label]
        out.append(
            f"| {trace} | {part['part']} | {label} | ${r['dollars']:.2f} | {r['gpu_hours']:.2f} | "
            f"{slo} {'met' if r['slo_met'] else 'MISSED'} ({_shown(slo, r['slo_values'][slo])}) | "
            f"{r['dollars'] / bound:.2f}× | {r['dollars'] / clair:.2f}× | "
            f"{r['replica_changes']} | {r['cold_starts']} |"
        )
    out.append(
        f"| {trace} | {part['part']} | lower bound | ${bound:.2f} | | | 1.00× | "
        f"{bound / clair:.2f}× | | |"
    )
    return out


def evidence(trials: int, system: Path = SYSTEM, slos: tuple[str, ...] = ()) -> None:
    print(
        "| trace | part | configuration | dollars | GPU-hours | SLO | ×lower bound | "
        "×clairvoyant | replica changes | cold starts |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    if slos:
        cases = [(name, slo) for name in NAMES for slo in slos]
    else:
        cases = [(name, "late<=1%") for name in NAMES] + [(NAMES[2], "late<=2%")]
    for name, slo in cases:
        document, wall = tune(
            TRACES / name,
            "--holdout",
            "30%",
            "--trials",
            str(trials),
            "--jobs",
            "2",
            slo=slo,
            system=system,
        )
        for part in document["parts"]:
            print("\n".join(_row(part, name, slo)))
            floors = "".join(
                f", {key} floor {value:.3f} s"
                for key, value in part["lower_bound"]["floors"].items()
            )
            print(
                f"<!-- {part['part']}: unavoidably late "
                f"{part['lower_bound']['unavoidable_late']:.2%}{floors}; clairvoyant needs per "
                f"minute {part['clairvoyant_needs']} -->"
            )
        changes = (document["recommended"] or {}).get("changes", {})
        print(
            f"<!-- {name}: {document['trials']} trials in {wall:.0f} s wall, "
            f"{document['trials_per_second']:.1f} trials/s; changes: {json.dumps(changes)} -->"
        )


def speed() -> None:
    trace = TRACES / "AzureLLMInferenceTrace_code.csv"
    document, wall = tune(trace, "--trials", "160", "--front-trials", "40", "--jobs", "2")
    print(
        f"200 trials on {trace.name} with --jobs 2: {wall:.1f} s wall for the whole command "
        f"({document['trials_per_second']:.1f} trials/s in the study); target <= 300 s"
    )


def ray() -> None:
    trace = TRACES / "AzureLLMInferenceTrace_code.csv"
    common = ("--trials", "60", "--front-trials", "0", "--jobs", "2")
    pool, pool_wall = tune(trace, *common)
    on_ray, ray_wall = tune(trace, *common, "--ray-address", "local")
    ratio = on_ray["trials_per_second"] / pool["trials_per_second"]
    print(
        f"60 trials, --jobs 2: {pool['trials_per_second'] * 60:.0f} trials/min (command "
        f"{pool_wall:.1f} s); local Ray (2 CPUs, batches of 2): "
        f"{on_ray['trials_per_second'] * 60:.0f} trials/min (command {ray_wall:.1f} s, Ray "
        f"start-up included); ratio Ray/pool {ratio:.2f}"
    )


def _slow_first_tokens(problem: Any, settings: Any, here: Any, part: Any) -> None:
    """Which requests wait over 2 s for their first token in ``settings``' run of
    ``part``: how many, per minute, and their prompts."""
    import numpy as np

    from gpuscale.sim.inputs import build_inputs
    from gpuscale.tune.space import apply

    manifests, _, profile = apply(
        problem.space, settings, here.manifests, problem.scaled_object, here.profile
    )
    inputs = build_inputs(manifests, profile, namespace=problem.namespace)
    run = inputs.simulation(load=here.load, seed=problem.seed).run(part.until)
    log = run.requests[inputs.workload_key(problem.workload)]
    assert len(log) == len(part.trace)
    ttft = np.asarray(log.ttft, dtype=float)
    answered = ~np.isnan(ttft)
    slow = answered & (ttft > 2.0)
    minutes = np.bincount((log.arrivals[slow] // 60).astype(int), minlength=int(part.until // 60))
    prompts = np.asarray(part.trace.prompt_tokens, dtype=float)
    print(
        f"{part.name}, 8 held: {int(slow.sum())} of {int(answered.sum())} answered requests "
        f"wait over 2 s for a first token; per minute {minutes.tolist()}; their prompts' "
        f"median {np.median(prompts[slow]):.0f} and 90th percentile "
        f"{np.percentile(prompts[slow], 90):.0f} tokens (the part's median "
        f"{np.median(prompts):.0f})"
    )


def starts(trials: int) -> None:
    """Mooncake at ``ttft_p95<=2s`` on examples/vllm: the recommendation of a
    ``--trials`` run, re-run on each part from the replicas each part starts with, and
    replicas held at 8-10, and the space's most eager configuration (lowest threshold,
    polling and scale-up period; most replicas, scale-up pods and scale-down window):
    how much of its result the starting state sets."""
    sys.path.insert(0, str(ROOT / "src"))  # this worktree's gpuscale, as tune() runs it
    from gpuscale.cli._simulate import prepare
    from gpuscale.cli._tune_score import clairvoyant, on_part, parts, start_replicas
    from gpuscale.sim.world import LoadSpec
    from gpuscale.tune.objective import TuneProblem, evaluate
    from gpuscale.tune.slo import parse_slos
    from gpuscale.tune.space import Settings, derive_space

    vllm, trace, slo = ROOT / "examples" / "vllm", TRACES / NAMES[2], "ttft_p95<=2s"
    args = ("--holdout", "30%", "--trials", str(trials), "--jobs", "2")
    document, _ = tune(trace, *args, slo=slo, system=vllm)
    ready = prepare(
        manifests=[vllm],
        profile=None,
        scenario=None,
        trace=trace,
        trace_format="auto",
        workload=None,
        speedup=1.0,
        until=None,
        namespace="default",
        max_work=None,
    )
    (name,) = ready.traces
    workload = ready.inputs.spec.workload(name)
    space, so = derive_space(ready.loaded, ready.profile, workload)
    cut = parts(ready, holdout=0.3, validate_trace=None, until=None, trace_format="auto", speedup=1)
    problem = TuneProblem(
        ready.loaded,
        ready.profile,
        so,
        space,
        name,
        "default",
        LoadSpec(),
        1.0,
        0,
        parse_slos([slo]),
        ready.kube_version,
    )
    recommended = Settings(**document["recommended"]["settings"])
    ranges = {p.name: (p.low, p.high) for p in space.params if p.kind != "choice"}
    eager = space.settings(
        {
            "threshold": ranges["threshold"][0],
            "polling_interval": ranges["polling_interval"][0],
            "scale_up_period": ranges["scale_up_period"][0],
            **{
                name: ranges[name][1]
                for name in (
                    "min_replicas",
                    "max_replicas",
                    "scale_up_pods",
                    "scale_down_stabilization",
                )
            },
        }
    )
    print(f"the space's most eager: {json.dumps(eager.as_dict())}")
    begin = {
        part.name: start_replicas(clairvoyant(problem, workload, part)[0]) for part in cut if part
    }
    print(f"recommended changes: {json.dumps(document['recommended']['changes'])}")
    for part in cut:
        assert part is not None
        runs = [(f"recommended from {n}", recommended, n) for n in sorted(set(begin.values()))]
        runs += [
            (f"held at {n}", dataclasses.replace(space.current, min_replicas=n, max_replicas=n), n)
            for n in (8, 9, 10)
        ]
        runs.append(("the space's most eager", eager, begin[part.name]))
        for label, settings, start in runs:
            outcome = evaluate(on_part(problem, part, start), settings)
            if label == "held at 8":
                _slow_first_tokens(problem, settings, on_part(problem, part, start), part)
            print(
                f"{part.name} (starts with {begin[part.name]}): {label}: ${outcome.dollars:.2f}, "
                f"ttft_p95 {outcome.check.values[slo]:.4f} s (failed requests counted as "
                f"slower, as the SLO counts them: {outcome.failed}), replica changes "
                f"{outcome.replica_changes}, spec replicas {[p[1] for p in outcome.timeline]}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("case", choices=("evidence", "vllm", "starts", "speed", "ray"))
    parser.add_argument("--trials", type=int, default=160)
    args = parser.parse_args()
    vllm = ROOT / "examples" / "vllm"
    {
        "evidence": lambda: evidence(args.trials),
        "vllm": lambda: evidence(args.trials, vllm, ("late<=1%", "ttft_p95<=2s")),
        "starts": lambda: starts(args.trials),
        "speed": speed,
        "ray": ray,
    }[args.case]()


if __name__ == "__main__":
    main()
