"""Benchmark: ``gpuscale simulate`` from the command line for a small scenario (issue 14:
target 0.25 s wall), beside a previous version.

A small simulation is mostly start-up: the interpreter, the imports, reading and checking
the inputs; the simulated 40 minutes of the tutorial take about 20 ms. Each command line
runs in a fresh interpreter, N times, lines and sources interleaved (``cli_startup.measure``),
bytecode cached as after ``pip install``; medians of wall and CPU seconds. Then
``python -X importtime`` shows where the import time of the first line goes, by package.

Run from the repository root::

    .venv/bin/python benchmarks/sim_startup.py [--repeats 7] [--baseline REF] [--write]

``--baseline REF`` runs the sources of git revision ``REF`` side by side (``git archive``);
``--write`` records the page in ``docs/benchmarks/sim_startup.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_startup import Source, _table, _top, copy_checkout, import_costs, measure, unpack

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks" / "sim_startup.md"
TARGET_S = 0.25
SMALL = ("simulate", "examples/tutorial", "--scenario", "examples/tutorial-scenario.yaml")
LINES: tuple[tuple[str, ...], ...] = (
    SMALL,
    ("simulate", "examples/tutorial-fixed", "--scenario", "examples/tutorial-scenario.yaml"),
    (*SMALL, "-o", "json"),
    ("simulate", "--help"),
)


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
        f"{small.cpu:.3f} s CPU: {verdict} the {TARGET_S} s target.",
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
    ]
    text = "\n".join(page) + "\n"
    sys.stdout.write(text)
    if options.write:
        DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
