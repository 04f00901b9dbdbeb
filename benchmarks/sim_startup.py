"""Benchmark: ``gpuscale simulate`` from the command line for a small scenario (issue 14:
target 0.25 s wall), beside a previous version.

A small simulation is mostly start-up: the interpreter, the imports, reading and checking
the inputs; the simulated 40 minutes of the tutorial take about 20 ms. Each command line
runs in a fresh interpreter, N times, lines and sources interleaved (``cli_startup.measure``),
bytecode cached as after ``pip install``; medians of wall and CPU seconds. Then
``python -X importtime`` shows where the import time of the first line goes, by package,
and a probe (:data:`_PHASES`) splits the first line's CPU time into the command's phases,
with the share spent creating dataclasses and in the cyclic garbage collector.

Run from the repository root::

    .venv/bin/python benchmarks/sim_startup.py [--repeats 7] [--baseline REF] [--write]

``--baseline REF`` runs the sources of git revision ``REF`` side by side (``git archive``);
``--write`` records the page in ``docs/benchmarks/sim_startup.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_startup import (
    Source,
    _env,
    _table,
    _top,
    copy_checkout,
    import_costs,
    measure,
    unpack,
)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks" / "sim_startup.md"
TARGET_S = 0.25
BUSY = 1.5
"""A load average above this at the start: other work shares the CPUs, walls stretch."""
SMALL = ("simulate", "examples/tutorial", "--scenario", "examples/tutorial-scenario.yaml")
LINES: tuple[tuple[str, ...], ...] = (
    SMALL,
    ("simulate", "examples/tutorial-fixed", "--scenario", "examples/tutorial-scenario.yaml"),
    (*SMALL, "-o", "json"),
    ("simulate", "--help"),
)

# Run in the child as ``python -c _PHASES ARGS``: the process's CPU clock at the end of
# each phase of ``gpuscale simulate``, found without editing gpuscale: the command's
# callback starts by importing gpuscale.cli._simulate (a finder on sys.meta_path sees it
# asked for and loaded), whose execute() calls its globals prepare() and run() (wrapped
# once the module is loaded); the console script's console() calls main() (wrapped), then
# exits. Dataclass creation and collector passes are summed apart.
_PHASES = r"""
import atexit, dataclasses, gc, importlib.machinery, json, sys, time
clock = time.process_time
marks, spent = {}, {"dataclasses": 0.0, "gc": 0.0}
def on_gc(phase, info, begun=[0.0]):
    if phase == "start":
        begun[0] = clock()
    else:
        spent["gc"] += clock() - begun[0]
gc.callbacks.append(on_gc)
make_class = dataclasses._process_class
def timed_class(*args, **kwargs):
    begun = clock()
    try:
        return make_class(*args, **kwargs)
    finally:
        spent["dataclasses"] += clock() - begun
dataclasses._process_class = timed_class
def wrapped(function, before, after):
    def call(*args, **kwargs):
        marks.setdefault(before, clock())
        try:
            return function(*args, **kwargs)
        finally:
            marks[after] = clock()
    return call
class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "gpuscale.cli._simulate":
            return None
        marks["options"] = clock()
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        load = spec.loader.exec_module
        def exec_module(module):
            load(module)
            marks["imports"] = clock()
            module.prepare = wrapped(module.prepare, "imports", "inputs")
            module.run = wrapped(module.run, "inputs", "run")
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Finder)
marks["start"] = clock()
import gpuscale.cli.main as cli
marks["typer"] = clock()
cli.main = wrapped(cli.main, "typer", "output")
def report():
    sys.stdout.flush()
    sys.stderr.write("\n" + json.dumps({"marks": marks, "spent": spent}) + "\n")
atexit.register(report)
sys.argv[0] = "gpuscale"
cli.console()
"""
PHASES = (
    ("start", "the interpreter"),
    ("typer", "gpuscale's root group: Typer, Click"),
    ("options", "simulate's options parsed (Typer converts them with pydantic, imported here)"),
    ("imports", "the simulator's modules imported (sim, controllers, promql, report, profile)"),
    ("inputs", "manifests read and validated (jsonschema), profile, scenario, inputs built"),
    ("run", "the simulation run and its summary"),
    ("output", "the output printed (rich for the table)"),
)


def phases(source: Source, args: Sequence[str], cache: Path, runs: int = 5) -> dict[str, float]:
    """CPU seconds of each phase of ``PHASES`` (the process's clock at its end minus at the
    previous one's), ``exit`` (the child's CPU after the probe's last mark: the console
    script's exit and the interpreter's shutdown), ``total``, ``dataclasses`` and ``gc``:
    medians of ``runs`` runs of ``gpuscale ARGS`` after a warm-up."""
    env = _env(source, "cached", cache)
    argv = [sys.executable, "-c", _PHASES, *args]
    found: dict[str, list[float]] = {}
    for run in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        probe = json.loads(done.stderr.rstrip("\n").rsplit("\n", 1)[-1])
        if run == 0:
            continue
        marks, previous = probe["marks"], 0.0
        for name, _ in PHASES:
            found.setdefault(name, []).append(marks[name] - previous)
            previous = marks[name]
        found.setdefault("exit", []).append(total - previous)
        found.setdefault("total", []).append(total)
        for name, seconds in probe["spent"].items():
            found.setdefault(name, []).append(seconds)
    return {name: statistics.median(values) for name, values in found.items()}


def _phase_table(labels: Sequence[str], found: dict[str, dict[str, float]]) -> list[str]:
    def cell(label: str, name: str) -> str:
        return f"{found[label][name] * 1000:.0f}"

    lines = [
        "| CPU ms from the previous row's end to the end of | " + " | ".join(labels) + " |",
        "| --- |" + " ---: |" * len(labels),
    ]
    rows = [*PHASES, ("exit", "exit: the interpreter's shutdown"), ("total", "**total**")]
    lines += [
        f"| {text} | " + " | ".join(cell(label, name) for label in labels) + " |"
        for name, text in rows
    ]
    lines += [
        f"| of which {text} | " + " | ".join(cell(label, name) for label in labels) + " |"
        for name, text in (
            ("dataclasses", "creating dataclasses (all phases)"),
            ("gc", "in the cyclic garbage collector (all phases)"),
        )
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", help="git revision to compare against, e.g. main")
    parser.add_argument("--write", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    options = parser.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gpuscale-sim-startup-") as tmp:
        folder = Path(tmp)
        cache = folder / "pycache"
        sources = [Source("this checkout", copy_checkout(folder))]
        if options.baseline:
            sources.insert(0, Source(f"`{options.baseline}`", unpack(options.baseline, folder)))
        timings = measure(sources, LINES, "cached", cache, options.repeats)
        costs = {source.label: import_costs(source, SMALL, cache) for source in sources}
        split = {source.label: phases(source, SMALL, cache) for source in sources}
    labels = [s.label for s in sources]
    small = timings[SMALL][labels[-1]]
    verdict = "meets" if small.wall <= TARGET_S else "misses"
    command = (
        f"`.venv/bin/python benchmarks/sim_startup.py --repeats {options.repeats}"
        + (f" --baseline {options.baseline}" if options.baseline else "")
        + " --write`"
    )
    page = [
        "# Benchmark: `gpuscale simulate` start-up",
        "",
        f"Target (issue 14): a small scenario from the command line in at most {TARGET_S} s.",
        "",
        f"Command: {command} (CPython {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load_start:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end; the machine is shared). Each line runs "
        f"`python -m gpuscale ARGS` in a fresh interpreter, bytecode cached, output "
        f"discarded; medians of {options.repeats} runs, wall seconds and the child's CPU "
        "seconds; lines and columns interleave in every repeat.",
        "",
        *_table(labels, timings),
        "",
        f"`gpuscale {' '.join(SMALL)}` ({labels[-1]}): {small.wall:.3f} s wall, "
        f"{small.cpu:.3f} s CPU: {verdict} the {TARGET_S} s target"
        + (
            f" at load average {load_start:.1f} (walls inflated: compare the speed-up)."
            if load_start > BUSY
            else "."
        ),
        "",
        "## Where the import time goes",
        "",
        f"Self import time by package in milliseconds for `gpuscale {' '.join(SMALL)}` "
        "(`python -X importtime`, each module's smallest self time in three runs; the "
        "largest twelve; the total is every module's self time).",
        "",
        *(
            f"- {label}: **{sum(cost.values()) * 1000:.0f}**: {_top(cost, 12)}"
            for label, cost in costs.items()
        ),
        "",
        "## Where the CPU time goes",
        "",
        f"`gpuscale {' '.join(SMALL)}` split at the command's phases by a probe (the "
        "process's CPU clock at the end of each; medians of 5 runs; `_PHASES` in the "
        "script says how). The import times above are inside these phases.",
        "",
        *_phase_table(labels, split),
        "",
        "What changed for this, and what the rest would take: [the simulator's benchmark, "
        "start-up](simulator.md#start-up-from-the-command-line-issue-14).",
    ]
    text = "\n".join(page) + "\n"
    sys.stdout.write(text)
    if options.write:
        DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
