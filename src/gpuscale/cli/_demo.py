"""The work of ``gpuscale demo``: the tutorial and its fix, simulated side by side.

With no arguments it replays the tutorial's own test on its own system — the gauge set to
160 on one pod of ``examples/tutorial/`` on DOKS with MI300X nodes — through KEDA, the
HPA, Prometheus, the scheduler and the cluster autoscaler: the second replica waits for a
GPU node, the node pool grows, the pod runs, and the tutorial's query makes the replica
count flap for as long as the load stays. Then the same for ``examples/tutorial-fixed/``.
It prints a short story of each run from its timeline, the two summaries side by side,
and writes both timelines and the HTML report (``./gpuscale-demo/`` by default).

The examples ship inside the package (see ``gpuscale.cli._examples``), so the demo runs
from an installed wheel as well as from a checkout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from gpuscale.cli._examples import examples_dir
from gpuscale.cli._simulation import RunOutcome, console, run, summaries_table, write_timeline
from gpuscale.errors import InputError
from gpuscale.inputs import read_manifests, read_profile, read_scenario
from gpuscale.kube import format_duration
from gpuscale.report import write_report
from gpuscale.report.hpa import HpaStep, hpa_steps
from gpuscale.report.story import Moment, key_moments
from gpuscale.sim.inputs import build_inputs, gauges_of
from gpuscale.sim.world import LoadSpec

__all__ = ["execute"]

_TUTORIAL_NAMESPACE = "kube-system"
"""The tutorial's objects carry no namespace and its ServiceMonitor looks in kube-system
only (its mistake 6): the demo applies them there, the one namespace where they work."""

_FIXED_NAMESPACE = "gpu-demo"
"""Every object of the fix names this namespace (no ``-n`` needed); the run's provenance
says so."""


def _simulate(
    folder: Path, scenario_path: Path, namespace: str, label: str, seed: int
) -> RunOutcome:
    scenario = read_scenario(scenario_path)
    manifests = read_manifests([folder])
    profile = read_profile(folder / "gpuscale.yaml")
    names = [m.name for m in manifests.by_kind("Deployment", "StatefulSet")]
    inputs = build_inputs(
        manifests, profile, namespace=namespace, gauges=gauges_of(scenario, names)
    )
    until = scenario.until or 2400.0
    return run(
        inputs,
        load=LoadSpec(scenario=scenario),
        until=until,
        seed=seed,
        label=label,
        meta={
            "manifests": [str(folder)],
            "profile": str(folder / "gpuscale.yaml"),
            "scenario": str(scenario_path),
        },
        progress=False,
    )


def _elsewhere(folder: Path, scenario_path: Path, seed: int) -> str | None:
    """What the tutorial does in namespace ``default``: one line, from a short run."""
    outcome = _simulate(folder, scenario_path, "default", "tutorial-default", seed)
    if outcome.inputs.spec.workloads[0].scraped:
        return None
    stats = outcome.stats.replicas[0]
    values = sorted(
        {
            value
            for record in outcome.result.records
            if (value := record.workloads[0].metrics.get("query:s0-prometheus")) is not None
        }
    )
    read = ", ".join(f"{v:g}" for v in values) or "nothing"
    return (
        "Applied to any other namespace (-n default here), its ServiceMonitor scrapes nothing: "
        f"KEDA's query reads {read} (an empty answer is 0 with ignoreNullValues) and the "
        + (
            f"replica count stays at {stats.min_spec} whatever the gauge says."
            if stats.min_spec == stats.max_spec
            else f"replica count moves only between {stats.min_spec} and {stats.max_spec}."
        )
    )


def _start_nodes(outcome: RunOutcome, pool: str) -> int:
    """Nodes of ``pool`` in the run's first record (the profile's starting size)."""
    records = outcome.result.records
    return sum(records[0].nodes.get(pool, {}).values()) if records else 0


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _story(outcome: RunOutcome) -> list[Moment]:
    return key_moments(outcome.result.records, cycles=1)


def _first(steps: list[HpaStep], up: bool) -> HpaStep | None:
    """The run's first HPA rescale up (or down)."""
    for step in steps:
        if (
            step.before is not None
            and step.after is not None
            and step.after != step.before
            and (step.after > step.before) == up
        ):
            return step
    return None


def _why(outcome: RunOutcome, moments: list[Moment]) -> list[str]:
    """What the numbers mean, from the run itself."""
    lines: list[str] = []
    stats = outcome.stats.replicas[0]
    sources = outcome.inputs.scaled_objects
    window = format_duration(sources[0].hpa_options.downscale_stabilization_s if sources else 300.0)
    gpu = next((p for p in outcome.inputs.spec.pools if p.gpus_per_node), None)
    timings = outcome.inputs.spec.autoscaler
    if any("scale-up" in m.text for m in moments):
        lines.append(
            "The cluster autoscaler adds a node only for pods unschedulable longer than "
            f"{format_duration(timings.unschedulable_pod_with_gpu_time_buffer_s)} when they "
            f"request GPUs ({format_duration(timings.unschedulable_pod_time_buffer_s)} "
            "otherwise), then the node takes the pool's provisioning time."
        )
    if any("deleted while still Pending" in m.text for m in moments) and gpu is not None:
        lines.append(
            f"The first Pending pod never ran: the {gpu.name} pool takes "
            f"{format_duration(gpu.provisioning_s)} to provision a node (the profile's "
            f"provisioning_time) and the HPA scaled down after its {window} window, before "
            "the node was Ready; the next scale-up's pod got the node."
        )
    steps = hpa_steps(outcome.result.records, scales_only=True)
    down, up = _first(steps, up=False), _first(steps, up=True)
    if stats.flaps >= 2 and down is not None and up is not None:
        lines.append(
            f"The replica count flapped {stats.flaps} times (period "
            f"{format_duration(stats.flap_period_s or 0)}): the query divides the gauge's sum by "
            f"kube_deployment_status_replicas, so at {down.replicas} replicas it reads "
            f"{down.read or 0:g}, and the HPA (AverageValue) divides that again: "
            f"{down.arithmetic()}. At {up.replicas} replica{'' if up.replicas == 1 else 's'} "
            f"it reads {up.read or 0:g}: {up.arithmetic()}. Each scale-down waits for the {window} "
            "stabilization window."
        )
    elif stats.max_spec > stats.min_spec and up is not None:
        held = next(
            (
                s
                for s in hpa_steps(outcome.result.records)
                if s.t > up.t and s.before == s.after == up.after and s.replicas == up.after
            ),
            None,
        )
        then = "" if held is None else f"; at {held.replicas} replicas {held.arithmetic()}"
        lines.append(
            f"The replica count went {stats.min_spec}→{stats.max_spec} and held: the query is "
            f"the gauge's sum ({up.read or 0:g}) and only the HPA divides it by the replicas: "
            f"{up.arithmetic()}{then}."
        )
    return lines


def _print_story(console: Console, title: str, outcome: RunOutcome) -> list[str]:
    moments = _story(outcome)
    console.print(f"[bold]{title}[/bold]")
    for moment in moments:
        console.print(f"  {moment}", highlight=False, soft_wrap=True)
    why = _why(outcome, moments)
    for line in why:
        console.print(f"  [italic]{line}[/italic]", highlight=False, soft_wrap=True)
    console.print()
    return [str(m) for m in moments] + why


def execute(
    *,
    out: Path,
    seed: int,
    output: str,
) -> None:
    """Run gpuscale demo with its parsed options (see :mod:)."""
    if output not in ("text", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use -o text or -o json"
        )
    if not str(out).strip() or (out.exists() and not out.is_dir()):
        raise InputError(
            "not a directory" if str(out).strip() else "an empty path",
            where=f"--out {out}" if str(out).strip() else "--out",
            fix="pick --out DIR, a directory to create or one that exists",
        )
    examples = examples_dir()
    scenario = examples / "tutorial-scenario.yaml"
    tutorial = _simulate(examples / "tutorial", scenario, _TUTORIAL_NAMESPACE, "tutorial", seed)
    fixed = _simulate(
        examples / "tutorial-fixed", scenario, _FIXED_NAMESPACE, "tutorial-fixed", seed
    )
    elsewhere = _elsewhere(examples / "tutorial", scenario, seed)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the directory ({exc.strerror})", where=str(out), fix="pick --out DIR"
        ) from None
    files: dict[str, str] = {}
    for outcome in (tutorial, fixed):
        path = out / f"{outcome.label}.jsonl"
        write_timeline(path, outcome.timeline)
        files[outcome.label] = str(path)
    report = out / "report.html"
    write_report(
        [tutorial.report_run(files["tutorial"]), fixed.report_run(files["tutorial-fixed"])],
        html=report,
        title="gpuscale demo: the tutorial and its fix",
    )
    lint_target = _shown(examples / "tutorial")
    if output == "json":
        document: dict[str, Any] = {
            "runs": [
                {
                    "label": o.label,
                    "summary": o.stats.as_dict(),
                    "table": o.summary.as_json(),
                    "moments": [{"t": m.t, "text": m.text} for m in _story(o)],
                    "why": _why(o, _story(o)),
                }
                for o in (tutorial, fixed)
            ],
            "other_namespace": elsewhere,
            "written": {"timelines": files, "report": str(report)},
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    out_console = console()
    until = format_duration(tutorial.result.until)
    gpu = next((p for p in tutorial.inputs.spec.pools if p.gpus_per_node), None)
    pool = (
        ""
        if gpu is None
        else f" GPU pool {gpu.name}: {gpu.min_nodes}–{gpu.max_nodes} nodes, "
        f"{_start_nodes(tutorial, gpu.name)} at the start, ${gpu.price_per_hour:g}/h, "
        f"{format_duration(gpu.provisioning_s)} to provision."
    )
    out_console.print(
        f"[bold]gpuscale demo[/bold]: {until} of virtual time, the gauge my_custom_gauge set to "
        f"160 on one pod at t=1m.{pool}",
        soft_wrap=True,
    )
    out_console.print(
        f"  tutorial: {_shown(examples / 'tutorial')}/ (applied with -n {_TUTORIAL_NAMESPACE}, "
        "the only namespace its ServiceMonitor looks in)",
        soft_wrap=True,
    )
    out_console.print(f"  fixed:    {_shown(examples / 'tutorial-fixed')}/", soft_wrap=True)
    out_console.print()
    _print_story(out_console, "The tutorial", tutorial)
    if elsewhere is not None:
        out_console.print(f"  [italic]{elsewhere}[/italic]", highlight=False, soft_wrap=True)
        out_console.print()
    _print_story(out_console, "The fix", fixed)
    out_console.print(summaries_table([tutorial, fixed], "Summary"))
    out_console.print()
    out_console.print(f"Timelines: {files['tutorial']}, {files['tutorial-fixed']}", soft_wrap=True)
    out_console.print(f"Report:    {report}   (open it in a browser)", soft_wrap=True)
    out_console.print(
        f"Next:      gpuscale lint {lint_target}/   (each mistake, its line and the fix)",
        soft_wrap=True,
    )
