"""Benchmark: how long every ``gpuscale`` command takes to start (target: ``--help`` < 0.5 s).

A command line tool is used in short runs, so its start-up is most of what a user waits
for on ``--help`` and on the quick commands. Each command line below runs N times, each
time in a fresh interpreter (``python -m gpuscale ...``, output discarded), and the
median wall and CPU seconds are reported:

- ``gpuscale --help`` and ``--version``,
- ``--help`` of every command and sub-command the root group lists (found by building the
  full Typer group, so a new command is measured without editing this file),
- a few real quick commands: ``profile show``, ``profile check``, ``render``, ``lint``.

With ``--baseline REF`` the same command lines also run against the sources of git
revision ``REF`` (``git archive REF src``, put first on ``PYTHONPATH``; same interpreter
and packages), side by side in one run, so the ratio is measured on one machine in one
state. At the end, ``python -X importtime`` shows where ``gpuscale --help`` and the quick
commands spend their import time, summed by package (self time; a module's time is
charged to ``gpuscale.<subpackage>``, or to its top-level package).

Run from the repository root: ``.venv/bin/python benchmarks/cli_startup.py
[--repeats 5] [--baseline REF] [--write]``; ``--write`` records the numbers in
``docs/benchmarks/cli_startup.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks" / "cli_startup.md"
TARGET_HELP_S = 0.5

QUICK_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("profile", "show"),
    ("profile", "show", "-o", "json"),
    ("profile", "check", "examples/tutorial/gpuscale.yaml"),
    ("render", "examples/tutorial-fixed/resources.yaml"),
    ("lint", "--list"),
    ("lint", "examples/tutorial-fixed/"),
    ("lint", "examples/tutorial/", "--profile", "examples/tutorial/gpuscale.yaml"),
)
IMPORT_PROFILES: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("lint", "--help"),
    ("profile", "show"),
    ("lint", "examples/tutorial-fixed/"),
)

_LIST_COMMANDS = """
import typer
from gpuscale.cli.main import _register_commands, app
_register_commands()
def walk(group, prefix):
    for name in group.list_commands(None):
        command = group.get_command(None, name)
        print(" ".join([*prefix, name]))
        if hasattr(command, "list_commands"):
            walk(command, [*prefix, name])
walk(typer.main.get_command(app), [])
"""


@dataclass(frozen=True)
class Source:
    """A version of the sources to run: this checkout, or a git revision unpacked."""

    label: str
    """Column heading."""
    pythonpath: str | None
    """Prepended to ``PYTHONPATH``; None runs the installed (editable) package."""


@dataclass(frozen=True)
class Timing:
    """Median seconds over the repeats of one command line in one source."""

    wall: float
    cpu: float
    exit_code: int


def _env(source: Source) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if source.pythonpath is not None:
        env["PYTHONPATH"] = source.pythonpath
    env["COLUMNS"] = "100"
    return env


def _run_once(source: Source, args: Sequence[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", *args],
        cwd=ROOT,
        env=_env(source),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def measure(
    sources: Sequence[Source], lines: Sequence[tuple[str, ...]], repeats: int
) -> dict[tuple[str, ...], dict[str, Timing]]:
    """Median timings; the sources alternate inside each repeat so drift hits both alike."""
    samples: dict[tuple[str, ...], dict[str, list[tuple[float, float, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for _ in range(repeats):
        for args in lines:
            for source in sources:
                samples[args][source.label].append(_run_once(source, args))
    result: dict[tuple[str, ...], dict[str, Timing]] = {}
    for args, by_source in samples.items():
        result[args] = {
            label: Timing(
                wall=statistics.median(s[0] for s in runs),
                cpu=statistics.median(s[1] for s in runs),
                exit_code=runs[0][2],
            )
            for label, runs in by_source.items()
        }
    return result


def list_commands(source: Source) -> list[tuple[str, ...]]:
    """Every command and sub-command path the full root group lists."""
    done = subprocess.run(
        [sys.executable, "-c", _LIST_COMMANDS],
        cwd=ROOT,
        env=_env(source),
        capture_output=True,
        text=True,
        check=True,
    )
    return [tuple(line.split()) for line in done.stdout.splitlines() if line.strip()]


def _package_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "gpuscale" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def import_costs(source: Source, args: Sequence[str]) -> dict[str, float]:
    """Self import time (seconds) by package for one command line, from ``-X importtime``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpuscale", *args],
        cwd=ROOT,
        env=_env(source),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    by_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        by_package[_package_of(name.strip())] += int(self_us) / 1e6
    return dict(by_package)


def unpack(ref: str, into: Path) -> Path:
    """``git archive REF src`` unpacked under ``into``; returns the ``src`` directory."""
    archive = into / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _fmt(timing: Timing | None) -> str:
    if timing is None:
        return "–"
    return f"{timing.wall:.3f} s (CPU {timing.cpu:.3f})"


def _top(costs: Mapping[str, float], count: int) -> str:
    ranked = sorted(costs.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in ranked)


def report(
    sources: Sequence[Source],
    timings: Mapping[tuple[str, ...], Mapping[str, Timing]],
    costs: Mapping[tuple[str, ...], Mapping[str, Mapping[str, float]]],
    repeats: int,
    baseline: str | None,
) -> str:
    """The Markdown page (also printed)."""
    labels = [source.label for source in sources]
    load = os.getloadavg()[0]
    ratio = len(labels) == 2
    lines = [
        "# Benchmark: gpuscale start-up",
        "",
        f"Target: `gpuscale --help` and `gpuscale <command> --help` well under "
        f"{TARGET_HELP_S} s; each command pays only for the modules it uses.",
        "",
        f"Command: `.venv/bin/python benchmarks/cli_startup.py --repeats {repeats}"
        + (f" --baseline {baseline}" if baseline else "")
        + " --write` "
        f"(CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} at the end). Each line runs `python -m gpuscale ARGS` in a "
        f"fresh interpreter, output discarded; medians of {repeats} runs, wall seconds and "
        "CPU seconds of the child (user + system). The interpreter alone "
        "(`python -c pass`) is in the first row.",
        "",
        "| command line | " + " | ".join(labels) + (" | ratio |" if ratio else " |"),
        "| --- | " + " | ".join("---:" for _ in labels) + (" | ---: |" if ratio else " |"),
    ]
    for args, by_label in timings.items():
        cells = [_fmt(by_label.get(label)) for label in labels]
        row = f"| `{' '.join(args) or 'python -c pass'}` | " + " | ".join(cells)
        if ratio:
            old, new = by_label.get(labels[0]), by_label.get(labels[1])
            row += f" | {old.wall / new.wall:.1f}×" if old and new else " | –"
        codes = {t.exit_code for t in by_label.values()}
        lines.append(row + " |" + ("" if codes <= {0} else f" exit {sorted(codes)}"))
    help_rows = [
        by_label[labels[-1]].wall
        for args, by_label in timings.items()
        if args and args[-1] == "--help" and labels[-1] in by_label
    ]
    lines += [
        "",
        f"Slowest `--help` ({labels[-1]}): {max(help_rows):.3f} s "
        f"({'meets' if max(help_rows) < TARGET_HELP_S else 'misses'} the {TARGET_HELP_S} s "
        "target).",
        "",
        "## Where the import time goes",
        "",
        "Self import time by package in milliseconds (`python -X importtime -m gpuscale "
        "ARGS`, one run each, the largest ten); `gpuscale.*` packages are gpuscale's own "
        "module-level work, the rest are libraries.",
        "",
        "| command line | " + " | ".join(labels) + " |",
        "| --- | " + " | ".join("---" for _ in labels) + " |",
    ]
    for args, by_label in costs.items():
        cells = []
        for label in labels:
            cost = by_label[label]
            cells.append(f"total {sum(cost.values()) * 1000:.0f}: {_top(cost, 10)}")
        lines.append(f"| `{' '.join(args)}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", help="git revision to compare against, e.g. main")
    parser.add_argument("--write", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gpuscale-startup-") as tmp:
        sources = [Source("this checkout", None)]
        if options.baseline:
            src = unpack(options.baseline, Path(tmp))
            sources.insert(0, Source(f"`{options.baseline}`", str(src)))
        commands = list_commands(sources[-1])
        lines: list[tuple[str, ...]] = [("--help",)]
        lines += [(*path, "--help") for path in commands]
        lines += list(QUICK_COMMANDS)
        timings = measure(sources, lines, options.repeats)
        bare = measure_bare(options.repeats)
        timings = {(): {s.label: bare for s in sources}, **timings}
        costs = {
            args: {source.label: import_costs(source, args) for source in sources}
            for args in IMPORT_PROFILES
        }
    page = report(sources, timings, costs, options.repeats, options.baseline)
    sys.stdout.write(page)
    if options.write:
        DOC.write_text(page, encoding="utf-8")


def measure_bare(repeats: int) -> Timing:
    """The interpreter's own start-up (``python -c pass``), the floor under every row."""
    runs = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return Timing(
        wall=statistics.median(r[0] for r in runs),
        cpu=statistics.median(r[1] for r in runs),
        exit_code=0,
    )


if __name__ == "__main__":
    main()
