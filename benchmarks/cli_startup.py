"""Benchmark: how long every ``gpuscale`` command takes to start (target: ``--help`` < 0.5 s).

A command line tool is used in short runs, so its start-up is most of what a user waits
for on ``--help`` and on the quick commands. Each command line below runs N times, each
time in a fresh interpreter (``python -m gpuscale ...``, output discarded), and the
median wall and CPU seconds are reported:

- ``gpuscale --help`` and ``--version``,
- ``--help`` of every command and sub-command the root group lists (found by building the
  full Typer group, so a new command is measured without editing this file),
- a few real quick commands: ``profile show``, ``profile check``, ``render``, ``lint``.

The sources run from a copy in a temporary directory, put first on ``PYTHONPATH`` (same
interpreter and installed packages). With ``--baseline REF`` the sources of git revision
``REF`` (``git archive``) run too, side by side in one run, so the ratio is measured on
one machine in one state.

Two conditions, because Python's bytecode cache changes the picture:

- ``cached``: every module's bytecode is cached (``PYTHONPYCACHEPREFIX`` in the temporary
  directory, filled by one discarded warm-up run of each line), as after ``pip install``;
- ``compiled``: ``PYTHONDONTWRITEBYTECODE=1`` and no cache for gpuscale's own modules, so
  each run compiles every gpuscale module it imports from source (libraries keep their
  installed caches). This is how ``gpuscale`` runs from an editable install on a machine
  that sets ``PYTHONDONTWRITEBYTECODE``, as the development machines here do.

At the end, ``python -X importtime`` (cached condition) shows where ``gpuscale --help``
and the quick commands spend their import time, summed by package (self time; a module's
time is charged to ``gpuscale.<subpackage>``, or to its top-level package).

Run from the repository root: ``.venv/bin/python benchmarks/cli_startup.py
[--repeats 5] [--baseline REF] [--condition cached|compiled|both] [--write]``;
``--write`` records the numbers in ``docs/benchmarks/cli_startup.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
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
CONDITIONS = ("cached", "compiled")

QUICK_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("profile", "show"),
    ("profile", "show", "-o", "json"),
    ("profile", "check", "examples/tutorial/gpuscale.yaml"),
    ("init", "--stdout"),
    ("render", "examples/tutorial-fixed/resources.yaml"),
    ("lint", "--list"),
    ("lint", "examples/tutorial-fixed/"),
    ("lint", "examples/tutorial/", "--profile", "examples/tutorial/gpuscale.yaml"),
    ("install", "--dry-run"),
    ("deploy", "examples/tutorial-fixed/", "--dry-run", "client"),
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

Line = tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """A copy of the sources to run: this checkout's, or a git revision's."""

    label: str
    """Column heading."""
    src: Path
    """The copied ``src`` directory, put first on ``PYTHONPATH``."""


@dataclass(frozen=True)
class Timing:
    """Median seconds over the repeats of one command line in one source and condition."""

    wall: float
    cpu: float
    exit_code: int


def _env(source: Source | None, condition: str, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["COLUMNS"] = "100"
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if source is not None:
        env["PYTHONPATH"] = str(source.src)
    if condition == "cached":
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run_once(argv: Sequence[str], env: Mapping[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def _median(runs: Sequence[tuple[float, float, int]]) -> Timing:
    return Timing(
        wall=statistics.median(r[0] for r in runs),
        cpu=statistics.median(r[1] for r in runs),
        exit_code=runs[0][2],
    )


def measure(
    sources: Sequence[Source], lines: Sequence[Line], condition: str, cache: Path, repeats: int
) -> dict[Line, dict[str, Timing]]:
    """Median timings per line and source. Lines and sources interleave inside each repeat,
    so a change in the machine's load hits every column alike."""
    python = [sys.executable]
    bare: Line = ()
    if condition == "cached":
        for source in sources:
            for args in lines:
                _run_once([*python, "-m", "gpuscale", *args], _env(source, condition, cache))
    samples: dict[Line, dict[str, list[tuple[float, float, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for _ in range(repeats):
        run = _run_once([*python, "-c", "pass"], _env(None, condition, cache))
        for source in sources:
            samples[bare][source.label].append(run)
        for args in lines:
            for source in sources:
                env = _env(source, condition, cache)
                samples[args][source.label].append(
                    _run_once([*python, "-m", "gpuscale", *args], env)
                )
    return {
        args: {label: _median(runs) for label, runs in by_source.items()}
        for args, by_source in samples.items()
    }


def list_commands(source: Source, cache: Path) -> list[Line]:
    """Every command and sub-command path the full root group lists."""
    done = subprocess.run(
        [sys.executable, "-c", _LIST_COMMANDS],
        cwd=ROOT,
        env=_env(source, "cached", cache),
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


def import_costs(
    source: Source, args: Sequence[str], cache: Path, runs: int = 3
) -> dict[str, float]:
    """Self import time (seconds) by package for one command line, from ``-X importtime``,
    bytecode cached: each module's smallest self time over ``runs`` runs after a warm-up
    (single runs on a busy machine swing by a factor of two)."""
    env = _env(source, "cached", cache)
    argv = [sys.executable, "-X", "importtime", "-m", "gpuscale", *args]
    _run_once(argv, env)
    best: dict[str, int] = {}
    for _ in range(runs):
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
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _cumulative, name = line.removeprefix("import time:").split("|")
            module = name.strip()
            best[module] = min(best.get(module, int(self_us)), int(self_us))
    by_package: dict[str, float] = defaultdict(float)
    for module, self_us in best.items():
        by_package[_package_of(module)] += self_us / 1e6
    return dict(by_package)


def copy_checkout(into: Path) -> Path:
    """This checkout's ``src``, without bytecode caches."""
    target = into / "checkout" / "src"
    shutil.copytree(ROOT / "src", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def unpack(ref: str, into: Path) -> Path:
    """``git archive REF src`` unpacked under ``into``; returns the ``src`` directory."""
    folder = into / "baseline"
    folder.mkdir()
    archive = folder / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def _fmt(timing: Timing | None) -> str:
    if timing is None:
        return "–"
    return f"{timing.wall:.3f} s (CPU {timing.cpu:.3f})"


def _top(costs: Mapping[str, float], count: int) -> str:
    ranked = sorted(costs.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in ranked)


def _table(labels: Sequence[str], timings: Mapping[Line, Mapping[str, Timing]]) -> list[str]:
    ratio = len(labels) == 2
    lines = [
        "| command line | " + " | ".join(labels) + (" | speed-up |" if ratio else " |"),
        "| --- | " + " | ".join("---:" for _ in labels) + (" | ---: |" if ratio else " |"),
    ]
    for args, by_label in timings.items():
        cells = [_fmt(by_label.get(label)) for label in labels]
        name = f"`gpuscale {' '.join(args)}`" if args else "`python -c pass` (the floor)"
        row = f"| {name} | " + " | ".join(cells)
        if ratio:
            old, new = by_label.get(labels[0]), by_label.get(labels[1])
            row += f" | {old.wall / new.wall:.1f}×" if old and new and args else " | "
        codes = sorted({t.exit_code for t in by_label.values()} - {0})
        lines.append(row + " |" + (f" exit {', '.join(map(str, codes))}" if codes else ""))
    return lines


def report(
    labels: Sequence[str],
    *,
    timings: Mapping[str, Mapping[Line, Mapping[str, Timing]]],
    costs: Mapping[Line, Mapping[str, Mapping[str, float]]],
    repeats: int,
    baseline: str | None,
    load: tuple[float, float],
) -> str:
    """The Markdown page (also printed)."""
    command = (
        f"`.venv/bin/python benchmarks/cli_startup.py --repeats {repeats}"
        + (f" --baseline {baseline}" if baseline else "")
        + (f" --condition {next(iter(timings))}" if len(timings) == 1 else "")
        + " --write`"
    )
    page = [
        "# Benchmark: gpuscale start-up",
        "",
        f"Target: `gpuscale --help` and `gpuscale <command> --help` well under "
        f"{TARGET_HELP_S} s; each command pays only for the modules it uses.",
        "",
        f"Command: {command} (CPython {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start and {load[1]:.1f} at "
        f"the end). Each line runs `python -m gpuscale ARGS` in a fresh interpreter, output "
        f"discarded; medians of {repeats} runs: wall seconds, and the child's CPU seconds "
        "(user + system, steadier on a busy machine). Lines and columns interleave in every "
        "repeat. `cached`: all bytecode cached, as after `pip install`; `compiled`: "
        "`PYTHONDONTWRITEBYTECODE=1`, gpuscale's own modules compiled from source on every "
        "run, as an editable install runs where that variable is set.",
    ]
    for condition, table in timings.items():
        page += ["", f"## {condition}", "", *_table(labels, table)]
        helps = [
            by_label[labels[-1]]
            for args, by_label in table.items()
            if args and args[-1] == "--help" and labels[-1] in by_label
        ]
        slowest = max(helps, key=lambda t: t.wall)
        verdict = "meets" if slowest.wall < TARGET_HELP_S else "misses"
        page += [
            "",
            f"Slowest `--help` ({labels[-1]}, {condition}): {slowest.wall:.3f} s wall, "
            f"{slowest.cpu:.3f} s CPU: {verdict} the {TARGET_HELP_S} s target (judged on "
            "wall time; where wall is well above CPU, the process waited for a CPU).",
        ]
    page += [
        "",
        "## Where the import time goes",
        "",
        "Self import time by package in milliseconds, bytecode cached (`python -X importtime "
        "-m gpuscale ARGS`: each module's smallest self time in three runs after a warm-up; "
        "the largest ten). `gpuscale.*` is "
        "gpuscale's own module-level work, the rest are libraries; the total is every "
        "module's self time.",
        "",
        "| command line | " + " | ".join(labels) + " |",
        "| --- | " + " | ".join("---" for _ in labels) + " |",
    ]
    for args, by_label in costs.items():
        cells = []
        for label in labels:
            cost = by_label[label]
            cells.append(f"**{sum(cost.values()) * 1000:.0f}**: {_top(cost, 10)}")
        page.append(f"| `gpuscale {' '.join(args)}` | " + " | ".join(cells) + " |")
    return "\n".join([*page, *HOW]) + "\n"


HOW = [
    "",
    "## How start-up stays fast",
    "",
    "- The root group (`gpuscale.cli.main.LazyGroup`) imports a command's module only when "
    "that command runs or shows its own help. `gpuscale --help` lists the commands from "
    "`COMMAND_HELP` (module, command name, one-line help), next to `COMMAND_MODULES`; "
    "`tests/unit/test_cli_lazy.py` checks the table against what the modules register, and "
    "`tests/integration/test_cli_startup.py` that the lazy help equals the help with every "
    "module imported.",
    "- A command module imports at module level only what its options need; its work's "
    "modules are imported inside the command (`# noqa: PLC0415`), types for annotations "
    "under `TYPE_CHECKING`.",
    "- `gpuscale.manifests`, `gpuscale.profile` and `gpuscale.lint` import each public name "
    "on first use (`gpuscale._lazy.lazy_exports`), so an option type or a constant does not "
    "bring its package's heavy neighbours (`Severity` without the lint rules, "
    "`DEFAULT_KUBE_VERSION` without the YAML parser).",
    "- Module-level work deferred to first use: jsonschema and referencing (first validator "
    "built), the KEDA formula evaluator (first `scalingModifiers` formula; its 22 syntax-tree "
    "dataclasses take 20-40 ms to create, and its 76 kB source another 25 ms to compile "
    "where bytecode is not cached), the profile models' validators (pydantic "
    "`defer_build`).",
    "- `gpuscale.cli.main.CommandGroup` gives the groups' unset `--help` flag the value "
    "False: Typer 0.29 converts every other parameter value through pydantic, so "
    "`gpuscale lint --help` imported pydantic for the root's flag alone.",
    "- `tests/integration/test_cli_startup.py` runs each command's `--help` in a fresh "
    "interpreter and fails when a heavy library or package is imported (not timed).",
    "",
    "What remains is mostly libraries: Typer and its rich help module (about 0.15 s of every "
    "`--help`: rich's Markdown, syntax and traceback modules, markdown-it, pygments, attrs) "
    "and, for every command that runs, pydantic (Typer 0.29 converts option values with "
    "it). The profile models no longer ask pydantic to read each field's docstring from "
    "the source (`use_attribute_docstrings`, which parsed every model's source on import; "
    "`tests/unit/profile/test_docs.py` reads them instead).",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", help="git revision to compare against, e.g. main")
    parser.add_argument("--condition", choices=[*CONDITIONS, "both"], default="both")
    parser.add_argument("--write", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    options = parser.parse_args()
    conditions = CONDITIONS if options.condition == "both" else (options.condition,)
    load_start = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="gpuscale-startup-") as tmp:
        folder = Path(tmp)
        cache = folder / "pycache"
        sources = [Source("this checkout", copy_checkout(folder))]
        if options.baseline:
            sources.insert(0, Source(f"`{options.baseline}`", unpack(options.baseline, folder)))
        lines: list[Line] = [("--help",)]
        lines += [(*path, "--help") for path in list_commands(sources[-1], cache)]
        lines += list(QUICK_COMMANDS)
        timings = {
            condition: measure(sources, lines, condition, cache, options.repeats)
            for condition in conditions
        }
        costs = {
            args: {source.label: import_costs(source, args, cache) for source in sources}
            for args in IMPORT_PROFILES
        }
    page = report(
        [s.label for s in sources],
        timings=timings,
        costs=costs,
        repeats=options.repeats,
        baseline=options.baseline,
        load=(load_start, os.getloadavg()[0]),
    )
    sys.stdout.write(page)
    if options.write:
        DOC.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
