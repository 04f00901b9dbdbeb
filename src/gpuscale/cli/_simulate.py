"""The work of ``gpuscale simulate``: replay a scenario or a request trace through the whole control
loop in virtual time, and say what it does and costs.

The edge around ``gpuscale.sim``: it reads the manifests, the profile, the scenario or
trace, builds the simulation (``gpuscale.sim.inputs.build_inputs``), runs it with a
progress bar on stderr, prints the summary (stdout; ``-o json`` for JSON), and writes
the timeline (``--timeline``), the HTML report (``--report``) and the plots
(``--plots``). Files are written before the summary is printed, whole or not at all.
Before anything is built, the manifests go through the one validator
(:func:`gpuscale.manifests.validate`, as ``render``, ``lint`` and ``deploy`` run it):
what the API server or KEDA would refuse, simulate refuses the same way, on the same line.
Exit codes: 0 done, 2 bad input (a file, a key, a flag: one line naming ``file:line``).
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscale.cli._profile_input import DEFAULTS_SOURCE, optional_profile
from gpuscale.cli._simulation import RunOutcome, console, run, summaries_table, write_timeline
from gpuscale.errors import InputError
from gpuscale.inputs import read_manifests, read_scenario, read_trace
from gpuscale.kube import format_duration, parse_duration
from gpuscale.manifests import DEFAULT_KUBE_VERSION, ManifestSet, validate_or_raise
from gpuscale.manifests.names import check_namespace_flag
from gpuscale.profile import Profile
from gpuscale.promql import check_query_text
from gpuscale.sim.budget import DEFAULT_MAX_WORK, ENGINE_REQUEST, WorkEstimate, estimate_work
from gpuscale.sim.inputs import (
    ProfileLocator,
    SimulationInputs,
    build_inputs,
    gauges_of,
    needs_capacity,
    selected_metric_names,
)
from gpuscale.sim.load_checks import step_workload
from gpuscale.sim.scenario import GaugeStep, RampStep, RateStep, Scenario
from gpuscale.sim.world import LoadSpec

if TYPE_CHECKING:
    from gpuscale.sim.traces import Trace

__all__ = ["Prepared", "check_options", "execute", "find_profile", "prepare", "read_trace_as"]

_TRACE_FORMATS = ("auto", "azure", "mooncake", "csv")


def find_profile(manifests: list[Path], given: Path | None) -> tuple[Profile, str, ProfileLocator]:
    """The profile to use (the one rule of :mod:`gpuscale.cli._profile_input`), where it
    came from, and where its keys are written (:meth:`Profile.where`)."""
    chosen, source = optional_profile(given, manifests)
    return chosen, source or DEFAULTS_SOURCE, chosen.where


def _kube_version(profile: Profile) -> str:
    """The Kubernetes minor the profile's ``cluster.version`` names, as lint and deploy
    read it, for the one validator (:func:`gpuscale.manifests.validate`)."""
    match = re.match(r"v?(\d+\.\d+)", profile.cluster.version)
    return match.group(1) if match else DEFAULT_KUBE_VERSION


def _duration(text: str, option: str) -> float:
    try:
        seconds = parse_duration(text)
    except (TypeError, ValueError):
        raise InputError(
            f"expected a duration such as 30m or 2h, got {text!r}",
            where=option,
            fix="write a duration such as 90s, 30m, 2h or 7d",
        ) from None
    if seconds <= 0:
        raise InputError("must be longer than 0s", where=option, fix="give a positive duration")
    return seconds


def _trace_target(names: list[str], scaled: list[str], workload: str | None, trace: Path) -> str:
    if workload is not None:
        if workload not in names:
            raise InputError(
                f"no workload named {workload!r}",
                where="--workload",
                fix=f"name one of: {', '.join(names)}",
            )
        return workload
    if len(names) == 1:
        return names[0]
    if len(scaled) == 1:
        return scaled[0]
    raise InputError(
        "the trace could go to several workloads",
        where=str(trace),
        fix=f"say which with --workload (one of: {', '.join(names)})",
    )


def _one_request_source(scenario: Scenario, names: list[str], target: str) -> None:
    """Refuse a scenario whose request steps go to the workload the trace feeds: the two
    would both be its load (its set_gauge steps and until combine with a trace). Which
    workload a step goes to is :func:`gpuscale.sim.load_checks.step_workload`'s rule."""
    for step in scenario.steps:
        if isinstance(step, RateStep | RampStep) and step_workload(step, names) == target:
            raise InputError(
                f"--scenario and --trace both send requests to {target}: the scenario's "
                "request_rate/ramp steps and the trace cannot both be its load",
                where=f"{scenario.source}:{step.line}" if step.line else scenario.source,
                fix="give --scenario (rates) or --trace, not both; a scenario of set_gauge "
                "steps (and until) may go with --trace",
            )


def _warn_steps_after(scenario: Scenario, horizon: float) -> None:
    late = [step for step in scenario.steps if step.at >= horizon]
    if late:
        first = late[0]
        where = f"{scenario.source}:{first.line}" if first.line else scenario.source
        sys.stderr.write(
            f"gpuscale: warning: --until {format_duration(horizon)} ends before "
            f"{len(late)} step(s) of the scenario, the first at {format_duration(first.at)} "
            f"({where}); they are not run\n"
        )


def _check_queries(loaded: ManifestSet) -> None:
    """Refuse a trigger query over the PromQL text limits, naming its manifest line, before
    anything parses it (``gpuscale.promql.check_query_text``)."""
    for manifest in loaded.by_kind("ScaledObject"):
        triggers = manifest.get(("spec", "triggers"))
        if not isinstance(triggers, list):
            continue
        for index, trigger in enumerate(triggers):
            path = ("spec", "triggers", index, "metadata", "query")
            query = manifest.get(path)
            if isinstance(trigger, dict) and isinstance(query, str):
                check_query_text(query, where=str(manifest.line_of(path)))


def _max_work(text: str | None) -> float:
    if text is None:
        return float(DEFAULT_MAX_WORK)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(
            f"expected a positive number of work units, got {text!r}",
            where="--max-work",
            fix=f"e.g. --max-work 1e8 (the default is {_units(DEFAULT_MAX_WORK)})",
        )
    return value


def _horizon_source(
    until: str | None, scenario: Scenario | None, trace: Path | None, speedup: float
) -> str:
    if until is not None:
        return "--until"
    if scenario is not None and scenario.until is not None:
        return f"{scenario.source} (until)"
    if trace is not None:
        return f"{trace} (its span)" if speedup == 1.0 else f"--speedup {speedup:g}"
    return "--until"


def _check_work(estimate: WorkEstimate, limit: float, source: str) -> None:
    """Refuse a run whose estimated work is over ``limit`` (see :mod:`gpuscale.sim.budget`)."""
    if estimate.total <= limit:
        return
    horizon = (
        format_duration(estimate.horizon_s)
        if estimate.horizon_s < 1e12
        else f"{estimate.horizon_s:.3g}s"
    )
    raise InputError(
        f"the run would take about {_units(estimate.total)} units of work ({horizon} of "
        f"virtual time: {_units(estimate.loop_events)} loop events and "
        f"{_units(estimate.requests)} requests"
        + (
            f", {_units(estimate.engine_requests)} of them to vLLM engines at "
            f"{ENGINE_REQUEST} units each"
            if estimate.engine_requests
            else ""
        )
        + "), "
        f"over the limit of {_units(limit)} (a few minutes)",
        where=source,
        fix=f"simulate less (a shorter --until, a speedup nearer 1), or allow it with "
        f"--max-work {_round_up(estimate.total)}",
    )


def _units(value: float) -> str:
    """``12345678`` → ``1.2e7``, ``40`` → ``40``: counts of work as the flag takes them."""
    return f"{value:.2g}".replace("e+0", "e").replace("e+", "e")


def _round_up(value: float) -> str:
    if not math.isfinite(value):
        return "N"
    exponent = math.floor(math.log10(value))
    mantissa = math.ceil(value / 10**exponent)
    return f"{mantissa}e{exponent}" if mantissa < 10 else f"1e{exponent + 1}"


def _warn_unread_gauges(scenario: Scenario, inputs: SimulationInputs) -> None:
    """Warn for each set_gauge step whose gauge no trigger query selects: it changes nothing.

    Silent when a query's selectors are not all plain names (``{__name__=~"..."}``), since
    any gauge could then be read."""
    queries = [t.query for s in inputs.scaled_objects for t in s.hpa.triggers if t is not None]
    read = selected_metric_names(queries)
    if read is None:
        return
    warned: set[str] = set()
    for step in scenario.steps:
        if isinstance(step, GaugeStep) and step.name not in read and step.name not in warned:
            warned.add(step.name)
            where = f"{scenario.source}:{step.line}" if step.line else scenario.source
            listed = ", ".join(sorted(read)) or "none"
            sys.stderr.write(
                f"gpuscale: warning: {where}: set_gauge sets {step.name}, which no "
                f"ScaledObject query reads (they read: {listed}); the step changes nothing\n"
            )


def _print_warnings(warnings: list[str] | tuple[str, ...]) -> None:
    for warning in warnings:
        sys.stderr.write(f"gpuscale: warning: {warning}\n")


@dataclass(frozen=True)
class Prepared:
    """The inputs of a run as ``simulate`` reads and checks them (``tune`` reads its own
    the same way)."""

    loaded: ManifestSet
    profile: Profile
    profile_source: str
    locate: ProfileLocator
    inputs: SimulationInputs
    scenario: Scenario | None
    traces: dict[str, Trace]
    """Workload name → its trace, tiled up to ``horizon``."""
    raw: Trace | None
    """The trace as read (sped up), before tiling."""
    horizon: float
    kube_version: str


def check_options(output: str, trace_format: str, speedup: float) -> None:
    """Refuse an unknown output or trace format and a speedup that is no speed."""
    if output not in ("text", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use -o text or -o json"
        )
    if trace_format not in _TRACE_FORMATS:
        raise InputError(
            f"unknown trace format {trace_format!r}",
            where="--trace-format",
            fix="use auto, azure, mooncake or csv",
        )
    if not (math.isfinite(speedup) and speedup > 0):
        raise InputError(
            f"must be a finite number above 0, got {speedup!r}",
            where="--speedup",
            fix="e.g. --speedup 2 (twice as fast) or --speedup 0.5",
        )


def read_trace_as(trace: Path, trace_format: str, speedup: float) -> Trace:
    """The trace file read in ``trace_format`` and replayed ``speedup`` times as fast."""
    raw = read_trace(trace, fmt=trace_format)  # type: ignore[arg-type]
    if speedup != 1.0:
        raw = raw.scaled(speedup)
        if not math.isfinite(raw.period):
            raise InputError(
                f"replayed {speedup:g} times as fast, the trace would span more seconds "
                "than can be counted",
                where="--speedup",
                fix="use a speedup nearer 1",
            )
    return raw


def prepare(
    *,
    manifests: list[Path],
    profile: Path | None,
    scenario: Path | None,
    trace: Path | None,
    trace_format: str,
    workload: str | None,
    speedup: float,
    until: str | None,
    namespace: str,
    max_work: str | None,
) -> Prepared:
    """Read and check everything a run needs, as ``simulate`` does (see :mod:)."""
    limit = _max_work(max_work)
    check_namespace_flag(namespace)
    loaded = read_manifests(manifests)
    _check_queries(loaded)
    chosen, profile_source, locate = find_profile(manifests, profile)
    kube_version = _kube_version(chosen)
    validate_or_raise(loaded, kube_version=kube_version)
    parsed = None if scenario is None else read_scenario(scenario)
    names = [m.name for m in loaded.by_kind("Deployment", "StatefulSet")]
    inputs = build_inputs(loaded, chosen, namespace=namespace, gauges=gauges_of(parsed, names))
    traces: dict[str, Trace] = {}
    raw: Trace | None = None
    if trace is not None:
        raw = read_trace_as(trace, trace_format, speedup)
        scaled_targets = sorted({s.target for s in inputs.scaled_objects})
        target = _trace_target(names, scaled_targets, workload, trace)
        traces[target] = raw
        if parsed is not None:
            _one_request_source(parsed, names, target)
    if until is not None:
        horizon = _duration(until, "--until")
    elif parsed is not None and parsed.until is not None:
        horizon = parsed.until
    elif raw is not None:
        horizon = max(raw.period, 1.0)
    else:
        horizon = 3600.0
    _check_work(
        estimate_work(inputs, horizon_s=horizon, scenario=parsed, traces=traces),
        limit,
        _horizon_source(until, parsed, trace, speedup),
    )
    traces = {name: t.tiled(horizon) for name, t in traces.items()}
    if parsed is not None:
        _warn_steps_after(parsed, horizon)
        _warn_unread_gauges(parsed, inputs)
    needs_capacity(parsed, traces, inputs, locate=locate)
    return Prepared(
        loaded=loaded,
        profile=chosen,
        profile_source=profile_source,
        locate=locate,
        inputs=inputs,
        scenario=parsed,
        traces=traces,
        raw=raw,
        horizon=horizon,
        kube_version=kube_version,
    )


def execute(
    *,
    manifests: list[Path],
    profile: Path | None,
    scenario: Path | None,
    trace: Path | None,
    trace_format: str,
    workload: str | None,
    speedup: float,
    until: str | None,
    seed: int,
    namespace: str,
    timeline: Path | None,
    report: Path | None,
    plots: Path | None,
    label: str | None,
    output: str,
    max_work: str | None = None,
) -> None:
    """Run gpuscale simulate with its parsed options (see :mod:)."""
    check_options(output, trace_format, speedup)
    if scenario is None and trace is None:
        raise InputError(
            "nothing drives the simulation",
            where="gpuscale simulate",
            fix="give --scenario FILE or --trace FILE",
        )
    ready = prepare(
        manifests=manifests,
        profile=profile,
        scenario=scenario,
        trace=trace,
        trace_format=trace_format,
        workload=workload,
        speedup=speedup,
        until=until,
        namespace=namespace,
        max_work=max_work,
    )
    inputs, raw, parsed = ready.inputs, ready.raw, ready.scenario
    meta: dict[str, Any] = {
        "manifests": [str(p) for p in manifests],
        "profile": ready.profile_source,
    }
    if scenario is not None:
        meta["scenario"] = str(scenario)
    if trace is not None and raw is not None:
        meta["trace"] = str(trace)
        meta["speedup"] = speedup
        if raw.attribution:
            meta["attribution"] = [raw.attribution]
    _print_warnings(inputs.warnings)
    outcome = run(
        inputs,
        load=LoadSpec(scenario=parsed, traces=ready.traces),
        until=ready.horizon,
        seed=seed,
        label=label or "simulate",
        meta=meta,
    )
    written = _write_outputs(outcome, timeline=timeline, report=report, plots=plots)
    if output == "json":
        document = {
            "label": outcome.label,
            "summary": outcome.stats.as_dict(),
            "table": outcome.summary.as_json(),
            "warnings": list(inputs.warnings),
            "written": written,
            "events": outcome.result.events,
            "records": len(outcome.result.records),
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    console().print(summaries_table([outcome], "Summary"))


def _write_outputs(
    outcome: RunOutcome, *, timeline: Path | None, report: Path | None, plots: Path | None
) -> dict[str, Any]:
    written: dict[str, Any] = {}
    if timeline is not None:
        write_timeline(timeline, outcome.timeline)
        written["timeline"] = str(timeline)
        sys.stderr.write(f"gpuscale: wrote {timeline}\n")
    if report is not None or plots is not None:
        from gpuscale.report import write_report  # noqa: PLC0415 - the page and plots' modules

        done = write_report(
            [outcome.report_run(str(timeline or ""))],
            html=report,
            plots_dir=plots,
            title=f"gpuscale simulate: {outcome.label}",
        )
        if done.html is not None:
            written["report"] = str(done.html)
            sys.stderr.write(f"gpuscale: wrote {done.html}\n")
        if done.plots:
            written["plots"] = [str(p) for p in done.plots]
            sys.stderr.write(f"gpuscale: wrote {len(done.plots)} plots into {plots}\n")
    return written
