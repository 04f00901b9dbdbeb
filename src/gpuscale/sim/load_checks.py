"""Checks of the load against the system it drives, before a run: requests need a
capacity, and requests without token counts need more than token rates (and cannot go
to a vLLM engine, which schedules tokens) — each error on
the profile's ``file:line`` through a :data:`ProfileLocator`. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuscale.errors import InputError
from gpuscale.manifests import KeyPath
from gpuscale.sim.scenario import RampStep, RateStep, Scenario, Step
from gpuscale.sim.specs import EngineCapacity, SimWorkload

if TYPE_CHECKING:
    from gpuscale.sim.inputs import SimulationInputs
    from gpuscale.sim.traces import Trace

__all__ = [
    "ProfileLocator",
    "check_capacity",
    "needs_capacity",
    "step_workload",
]

ProfileLocator = Callable[[KeyPath], str]
"""A profile key path (``("workloads", "llm", "service_time")``) → where it is written:
the loaded profile's :meth:`~gpuscale.profile.Profile.where`."""


def _unlocated(path: KeyPath) -> str:
    return "the profile"


def step_workload(step: Step, names: Sequence[str]) -> str | None:
    """The workload a scenario step goes to: the one it (or its scenario) names, else the
    only one of ``names``; None when there are several and it names none. The one rule
    every reader of a scenario uses (the world, the gauges to build, these checks)."""
    return step.workload or (names[0] if len(names) == 1 else None)


def _tokenless_load(
    scenario: Scenario | None, traces: Mapping[str, Trace], workloads: Sequence[SimWorkload]
) -> dict[str, str]:
    """Workload name → what sends it requests without token counts."""
    out: dict[str, str] = {}
    if scenario is not None:
        names = [w.name for w in workloads]
        for step in scenario.steps:
            if isinstance(step, RateStep | RampStep):
                target = step_workload(step, names)
                if target is not None:
                    at = f"{scenario.source}:{step.line}" if step.line else scenario.source
                    out.setdefault(target, f"the scenario's request steps ({at})")
    for name, trace in traces.items():
        if not trace.has_tokens:
            out.setdefault(name, f"the trace {trace.source}, which has no token columns")
    return out


def needs_capacity(
    scenario: Scenario | None,
    traces: Mapping[str, Trace],
    inputs: SimulationInputs,
    *,
    locate: ProfileLocator = _unlocated,
) -> None:
    """Raise ``InputError`` naming the profile's ``file:line`` (through ``locate``, see
    ``profile.where``) and the key to set when requests go to a workload whose
    profile entry gives no capacity, or only token rates for requests without token
    counts (rate steps, a trace without token columns) — what the request model could not
    serve."""
    check_capacity(scenario, traces, inputs.spec.workloads, locate=locate)


def check_capacity(
    scenario: Scenario | None,
    traces: Mapping[str, Trace],
    workloads: Sequence[SimWorkload],
    *,
    locate: ProfileLocator = _unlocated,
) -> None:
    """:func:`needs_capacity` over the workloads themselves: the one capacity check, run
    by the CLI before it builds a run (with the profile's lines) and by the world when it
    binds its load."""
    names: set[str] = set(traces)
    tokenless = _tokenless_load(scenario, traces, workloads)
    names.update(tokenless)
    for name in sorted(names):
        workload = next((w for w in workloads if name in (w.name, w.key)), None)
        if workload is None:
            continue
        key = ("workloads", workload.name)
        capacity = workload.capacity
        if capacity is None:
            raise InputError(
                f"workload {workload.name} receives requests but the profile gives it no "
                f"capacity (workloads.{workload.name})",
                where=locate(key),
                fix=f"set workloads.{workload.name}.service_time or requests_per_second (and "
                "concurrency), or prefill_tokens_per_second and decode_tokens_per_second",
            )
        if name in tokenless and isinstance(capacity, EngineCapacity):
            raise InputError(
                f"workload {workload.name} receives requests without token counts "
                f"({tokenless[name]}) but serving.kind vllm schedules tokens "
                f"(workloads.{workload.name}.serving)",
                where=locate((*key, "serving", "kind")),
                fix="replay a trace with prompt_tokens and output_tokens columns, or use "
                "serving.kind queue with a service_time",
            )
        if isinstance(capacity, EngineCapacity):
            continue
        if name in tokenless and capacity.uses_tokens and capacity.service_time_s is None:
            raise InputError(
                f"workload {workload.name} receives requests without token counts "
                f"({tokenless[name]}) but its profile capacity gives only token rates "
                f"(workloads.{workload.name}.prefill_tokens_per_second)",
                where=locate((*key, "prefill_tokens_per_second")),
                fix=f"set workloads.{workload.name}.service_time (the time one request takes "
                "without token counts) or requests_per_second, or replay a trace with "
                "prompt_tokens and output_tokens columns",
            )
