"""The work of ``gpuscale tune`` (see ``docs/tune.md``): read the inputs as ``simulate``
does (:func:`gpuscale.cli._simulate.prepare`), derive the search space, run the study
(:mod:`gpuscale.tune.study`) with a progress bar on stderr, score the recommendation on
the validation trace or holdout, compute the two references, and print the table
(``-o json``: everything). ``--write`` and ``--report`` write files whole or not at all,
before anything is printed. Exit codes: 0 done (a missed SLO is reported, not an error),
2 bad input (a ``--study`` made from other inputs too), 1 a ``--study`` database that
does not answer, 130 interrupted (the finished trials stay in ``--study``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from gpuscale.cli._simulate import Prepared, check_options, prepare
from gpuscale.cli._simulation import console
from gpuscale.cli._tune_score import (
    Scored,
    clairvoyant,
    keda_default_settings,
    on_part,
    parts,
    score,
    start_replicas,
    warn_unreachable,
)
from gpuscale.errors import InputError
from gpuscale.kube import format_duration
from gpuscale.sim.specs import EngineCapacity
from gpuscale.sim.world import LoadSpec
from gpuscale.tune.objective import Outcome, TuneProblem, simplify
from gpuscale.tune.slo import NEEDS_SERVING, SLO, parse_slos
from gpuscale.tune.space import (
    DELETE,
    Settings,
    Space,
    derive_space,
    edits,
    workload_pools,
)
from gpuscale.tune.study import Fingerprint, StudyResult, run_study

__all__ = ["execute"]


def _positive(value: int, option: str) -> None:
    if value < 1:
        raise InputError(f"must be at least 1, got {value}", where=option, fix=f"e.g. {option} 4")


def _holdout_share(text: str | None) -> float | None:
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", text)
    if match and not match.group(2):
        raise InputError(
            f"a share is written with its % sign, got {text!r}",
            where="--holdout",
            fix=f"--holdout {match.group(1)}%",
        )
    share = float(match.group(1)) / 100 if match else math.nan
    if not 0 < share < 1:
        raise InputError(
            f"expected a share of the trace between 0% and 100%, got {text!r}",
            where="--holdout",
            fix="e.g. --holdout 30% (tune on the first 70%, score on the last 30%)",
        )
    return share


def _check_workload(ready: Prepared, name: str, slos: tuple[SLO, ...]) -> None:
    workload = ready.inputs.spec.workload(name)
    where = ready.profile.where(("workloads", name))
    if workload.capacity is None:
        raise InputError(
            f"workload {name} serves no requests in the profile, so a trace cannot load it",
            where=where,
            fix=f"set workloads.{name}.concurrency and service_time or token rates",
        )
    if not workload_pools(workload, ready.profile):
        raise InputError(
            f"no node pool of the profile can run {name}'s pods (labels, resources, taints)",
            where=ready.profile.where(("node_pools",)),
            fix="add a pool whose nodes match the pod's nodeSelector, requests and tolerations",
        )
    needs = [s for s in slos if s.measure in NEEDS_SERVING]
    if needs and not isinstance(workload.capacity, EngineCapacity):
        raise InputError(
            f"{needs[0].text} needs the vLLM serving model, and workload {name} is on the "
            "queue model",
            where=where,
            fix=f"set workloads.{name}.serving.kind: vllm (docs/serving.md), or use "
            "late<=N% or latency_pNN<=DURATION",
        )
    if workload.capacity.latency_target_s is None and any(s.measure == "late" for s in slos):
        raise InputError(
            f"late needs workloads.{name}.latency_target, which is not set",
            where=where,
            fix=f"set workloads.{name}.latency_target (e.g. 30s), or use latency_pNN",
        )


class _Bar:
    """Trials done, best so far and ETA on stderr (a line every 10 s when not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.console = Console(stderr=True)
        self.enabled = enabled
        self.bar: Progress | None = None
        self.task: Any = None
        self.started = time.monotonic()
        self.last_line = 0.0
        self.first: int | None = None

    def __call__(self, done: int, total: int, best: float | None) -> None:
        if not self.enabled:
            return
        if self.first is None:
            self.first = done
        shown = "none yet" if best is None else f"${best:.2f}"
        if self.console.is_terminal:
            if self.bar is None:
                self.bar = Progress(
                    TextColumn("[bold]tune"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("trials, best {task.fields[best]}"),
                    TimeRemainingColumn(),
                    console=self.console,
                    transient=True,
                )
                self.bar.start()
                self.task = self.bar.add_task("tune", total=total, best=shown)
            self.bar.update(self.task, completed=done, best=shown)
            return
        now = time.monotonic()
        if now - self.last_line >= 10.0 or done == total:
            self.last_line = now
            rate = (done - self.first) / max(now - self.started, 1e-9)
            eta = (total - done) / rate if rate > 0 else math.inf
            eta_text = format_duration(round(eta)) if math.isfinite(eta) else "?"
            sys.stderr.write(
                f"gpuscale: progress: tune: {done}/{total} trials, best {shown}, ETA {eta_text}\n"
            )
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _front(result: StudyResult) -> list[dict[str, Any]]:
    """The non-dominated trials: no other is as cheap and as attaining, and better in one."""
    points = sorted(
        ((r.outcome["dollars"], r.outcome["attainment"], r) for r in result.trials),
        key=lambda p: (p[0], -p[1]),
    )
    front, best = [], -1.0
    for dollars, attainment, record in points:
        if attainment > best:
            front.append(
                {
                    "dollars": dollars,
                    "attainment": attainment,
                    "trial": record.number,
                    "study": record.study,
                }
            )
            best = attainment
    return front


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}×" if reference > 0 else "—"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if math.isinf(value):
        return "never"
    return f"{value:.1f}s" if value >= 1 else f"{value * 1000:.0f}ms"


def _table(scored: Scored, slos: tuple[SLO, ...], title: str) -> Table:
    """One column per configuration (and the lower bound), one row per measure."""
    rows = scored.rows
    clair = rows["clairvoyant"].dollars
    lb = scored.bound.dollars
    vllm = any("ttft_p95" in o.latency for o in rows.values())
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    for label in [*rows, "lower bound"]:
        table.add_column(label, justify="right", no_wrap=True)

    def line(name: str, cells: list[str], bound: str = "") -> None:
        table.add_row(name, *cells, bound)

    outcomes = list(rows.values())
    hours = max(scored.bound.work_node_hours, scored.bound.floor_node_hours)
    line("dollars", [f"${o.dollars:.2f}" for o in outcomes], f"${lb:.2f}")
    line("× lower bound", [_ratio(o.dollars, lb) for o in outcomes], "1.00×")
    line("× clairvoyant", [_ratio(o.dollars, clair) for o in outcomes], _ratio(lb, clair))
    line("GPU-hours", [f"{o.gpu_hours:.2f}" for o in outcomes], f"≥{hours:.2f}")
    line("SLO", ["met" if o.check.met else "MISSED" for o in outcomes])
    for slo in slos:
        line(
            f"  {slo.text}",
            [_value(slo, o.check.values[slo.text]) for o in outcomes],
            _unavoidable(scored, slo),
        )
    line("on time", [f"{o.attainment:.2%}" for o in outcomes])
    keys = ["p50", "p95", "p99"] + (["ttft_p95", "ttft_p99", "itl_p95"] if vllm else [])
    for key in keys:
        name = key.replace("ttft_", "TTFT ").replace("itl_", "ITL ")
        line(
            f"latency {name}" if key[0] == "p" else name,
            [_seconds(o.latency.get(key)) for o in outcomes],
        )
    line("replica changes", [str(o.replica_changes) for o in outcomes])
    line("flaps", [str(o.flaps) for o in outcomes])
    line("cold starts", [str(o.cold_starts) for o in outcomes])
    return table


def _unavoidable(scored: Scored, slo: SLO) -> str:
    """The lower bound's column of an SLO's row: what every configuration has at least,
    the share late on an idle replica or the TTFT / ITL percentile alone on one."""
    if slo.measure == "late" and slo.share:
        return f"≥{scored.bound.unavoidable_late:.2%}"
    floor = scored.bound.floors.get(slo.key)
    return "" if floor is None else f"≥{_seconds(floor)}"


def _value(slo: SLO, value: float) -> str:
    if slo.share:
        return f"{value:.2%}"
    if slo.quantile is not None:
        return _seconds(value)
    return f"{value:g}"


def _changes(space: Space, settings: Settings) -> dict[str, Any]:
    current = space.current.as_dict()
    out = {
        k: {"from": current[k], "to": v} for k, v in settings.as_dict().items() if current[k] != v
    }
    if space.gpu_max_nodes(settings) != space.gpu_pool_max:
        out["gpu_max_nodes"] = {"from": space.gpu_pool_max, "to": space.gpu_max_nodes(settings)}
    return out


def execute(
    *,
    manifests: list[Path],
    trace: Path,
    slos: list[str],
    profile: Path | None,
    validate_trace: Path | None,
    holdout: str | None,
    trials: int,
    front_trials: int | None,
    jobs: int,
    study: str | None,
    ray_address: str | None,
    trace_format: str,
    workload: str | None,
    speedup: float,
    until: str | None,
    seed: int,
    namespace: str,
    write: Path | None,
    report: Path | None,
    output: str,
) -> None:
    """Run gpuscale tune with its parsed options (see :mod:)."""
    parsed = parse_slos(slos)
    check_options(output, trace_format, speedup)
    _positive(trials, "--trials")
    _positive(jobs, "--jobs")
    share = _holdout_share(holdout)
    if share is not None and validate_trace is not None:
        raise InputError(
            "--holdout and --validate-trace both say what to score on",
            where="--holdout",
            fix="give one of them",
        )
    front_n = max(0, trials // 4) if front_trials is None else front_trials
    if front_n < 0:
        raise InputError("must be 0 or more", where="--front-trials", fix="e.g. --front-trials 20")
    if report is not None and not (report.parent if str(report.parent) else Path(".")).is_dir():
        raise InputError(
            "the directory does not exist", where=str(report), fix="create it or pick another path"
        )
    if write is not None and write.exists() and not write.is_dir():
        raise InputError("not a directory", where=str(write), fix="give a directory for --write")
    ready = prepare(
        manifests=manifests,
        profile=profile,
        scenario=None,
        trace=trace,
        trace_format=trace_format,
        workload=workload,
        speedup=speedup,
        until=until,
        namespace=namespace,
        max_work=None,
    )
    (name,) = ready.traces
    _check_workload(ready, name, parsed)
    for warning in ready.inputs.warnings:
        sys.stderr.write(f"gpuscale: warning: {warning}\n")
    sim_workload = ready.inputs.spec.workload(name)
    space, so = derive_space(ready.loaded, ready.profile, sim_workload)
    for warning in space.outside(ready.profile.tune):
        sys.stderr.write(f"gpuscale: warning: {warning}\n")
    train, test = parts(
        ready,
        holdout=share,
        validate_trace=validate_trace,
        until=until,
        trace_format=trace_format,
        speedup=speedup,
    )
    problem = TuneProblem(
        manifests=ready.loaded,
        profile=ready.profile,
        scaled_object=so,
        space=space,
        workload=name,
        namespace=namespace,
        load=LoadSpec(traces={name: train.trace}),
        until=train.until,
        seed=seed,
        slos=parsed,
        kube_version=ready.kube_version,
    )
    searched = on_part(problem, train, start_replicas(clairvoyant(problem, sim_workload, train)[0]))
    sys.stderr.write(
        f"gpuscale: note: tune: {len(space.params)} settings searched ("
        + ", ".join(space.describe())
        + f"); {trials} TPE + {front_n} NSGA-II trials, {jobs} at a time\n"
    )
    storage = _storage(study)
    bar = _Bar(output == "text" or sys.stderr.isatty())
    started = time.monotonic()
    try:
        result = run_study(
            searched,
            trials=trials,
            front_trials=front_n,
            jobs=jobs,
            storage=storage,
            name="gpuscale-tune",
            seed=seed,
            ray_address=ray_address,
            progress=bar,
            first=_first(space, keda_default_settings(searched, sim_workload)),
            fingerprint=_fingerprint(
                ready,
                space,
                trace=trace,
                options={
                    "--workload": name,
                    "--namespace": namespace,
                    "--trace-format": trace_format,
                    "--speedup": f"{speedup:g}",
                    "--until": "one pass" if until is None else format_duration(ready.horizon),
                    "--holdout": "none" if share is None else f"{share * 100:g}%",
                    "--slo": ", ".join(sorted(s.text for s in parsed)),
                    "--seed": str(seed),
                },
            ),
        )
    except KeyboardInterrupt:
        bar.close()
        kept = (
            f"; the finished trials are kept in {study}: run the same command to resume"
            if study
            else ""
        )
        sys.stderr.write(f"gpuscale: interrupted{kept}\n")
        raise typer.Exit(130) from None
    finally:
        bar.close()
    elapsed = time.monotonic() - started
    ran = len(result.trials) - result.resumed
    rate = ran / elapsed if elapsed > 0 else 0.0
    pool_low = min(
        (p.low for p in space.params if p.name == "gpu_min_nodes"),
        default=space.current.gpu_min_nodes,
    )
    if result.best is None:
        sys.stderr.write(
            "gpuscale: warning: no trial met the SLOs; the table shows the user's "
            "configuration only\n"
        )
        chosen = {"your config": space.current}
    else:
        recommended, _ = simplify(searched, Settings(**result.best.settings))
        chosen = {"your config": space.current, "recommended": recommended}
    scored = [score(problem, sim_workload, train, chosen, int(pool_low))]
    if test is not None:
        scored.append(score(problem, sim_workload, test, chosen, int(pool_low)))
        if "recommended" in chosen and not scored[-1].rows["recommended"].check.met:
            missed = scored[-1].rows["recommended"]
            sys.stderr.write(
                f"gpuscale: warning: the recommendation misses the SLO on {test.name}: "
                + missed.check.describe(parsed)
                + _held(missed)
                + "\n"
            )
    warn_unreachable(scored, parsed)
    written: dict[str, Any] = {}
    if write is not None and "recommended" in chosen:
        from gpuscale.cli._tune_write import write_recommended  # noqa: PLC0415

        written["write"] = write_recommended(
            write,
            manifests=ready.loaded,
            scaled_object=so,
            changes=edits(space, chosen["recommended"]),
            profile=ready.profile,
            pool=space.gpu_pool,
            min_nodes=chosen["recommended"].gpu_min_nodes
            if chosen["recommended"].gpu_min_nodes != space.current.gpu_min_nodes
            else None,
            max_nodes=space.gpu_max_nodes(chosen["recommended"])
            if space.gpu_max_nodes(chosen["recommended"]) != space.gpu_pool_max
            else None,
        )
        sys.stderr.write(f"gpuscale: wrote {', '.join(written['write'])}\n")
    if report is not None:
        from gpuscale.cli._tune_report import write_tune_report  # noqa: PLC0415

        written["report"] = str(write_tune_report(report, result, scored, _front(result), parsed))
        sys.stderr.write(f"gpuscale: wrote {report}\n")
    if output == "json":
        document = {
            "workload": name,
            "slos": [s.text for s in parsed],
            "space": space.describe(),
            "trials": len(result.trials),
            "resumed_trials": result.resumed,
            "trials_per_second": rate,
            "search_best": None
            if result.best is None
            else {
                "trial": result.best.number,
                "study": result.best.study,
                "settings": result.best.settings,
            },
            "recommended": None
            if "recommended" not in chosen
            else {
                "settings": chosen["recommended"].as_dict(),
                "changes": _changes(space, chosen["recommended"]),
                "edits": {
                    ".".join(map(str, k)): (None if v is DELETE else v)
                    for k, v in edits(space, chosen["recommended"]).items()
                },
            },
            "parts": [
                {
                    "part": s.part,
                    "lower_bound": s.bound.as_dict(),
                    "clairvoyant_needs": list(s.needs),
                    "rows": {label: o.as_dict(parsed) for label, o in s.rows.items()},
                }
                for s in scored
            ],
            "front": _front(result),
            "all_trials": [dataclasses.asdict(r) for r in result.trials],
            "written": written,
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    out = console()
    for s in scored:
        out.print(_table(s, parsed, f"{s.part}: {', '.join(x.text for x in parsed)}"))
    if "recommended" in chosen:
        changed = _changes(space, chosen["recommended"])
        out.print(
            "Recommended changes: "
            + (", ".join(f"{k} {v['from']} → {v['to']}" for k, v in changed.items()) or "none")
        )
    out.print(
        f"{len(result.trials)} trials ({result.resumed} resumed), {rate:.1f} trials/s; "
        "references: docs/tune.md (lower bound: no configuration meeting the SLOs costs less; "
        "clairvoyant: replicas sized per minute from the future)"
    )


def _held(outcome: Outcome) -> str:
    """Why a miss may say little of the scaling: the run never changed its replicas, so
    its count was the starting state's (docs/tune.md, "Starting state")."""
    if outcome.replica_changes or not outcome.timeline:
        return ""
    count = outcome.timeline[0][1]
    return (
        f"; it held the {count} replicas the part starts with throughout (its scaling did "
        "not act), so the miss is that starting count's"
    )


def _first(space: Space, defaults: Settings | None) -> dict[str, Settings]:
    """The configurations the search tries first: the user's, then KEDA's defaults
    where the space can express them."""
    return {"your config": space.current} | (
        {} if defaults is None else {"KEDA defaults": defaults}
    )


def _digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(repr(value).encode()).hexdigest()


def _fingerprint(
    ready: Prepared, space: Space, *, trace: Path, options: dict[str, str]
) -> Fingerprint:
    """What defines the study's objective (docs/commands/tune.md, ``--study``): the
    manifests and the profile as read (not their files' names, order or comments), the
    trace file's bytes, the search space, and the options that shape the tuning part, the
    SLOs and the simulations. ``--seed`` is one: it seeds every simulation, so a trial run
    with another seed measures another run. ``--validate-trace``, ``--trials`` and
    ``--jobs`` are not: they change no trial's outcome."""
    bodies = sorted(json.dumps(m.body, sort_keys=True, default=str) for m in ready.loaded)
    with trace.open("rb") as handle:
        trace_digest = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
    return {
        "the manifests": _digest(bodies),
        "the profile": _digest(ready.profile.model_dump_json()),
        "--trace": trace_digest,
        "the search space": _digest(space.describe()),
        **options,
    }


def _storage(study: str | None) -> str | None:
    """The study's database URL: a file is SQLite; a text with ``://`` is a database URL
    as given (``postgresql://...``); None keeps the study in memory."""
    if study is None or "://" in study:
        return study
    path = Path(study)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(
            "the directory does not exist", where=study, fix="create it or pick another path"
        )
    return f"sqlite:///{path.resolve()}"
