"""Shared set-ups for the simulator benchmarks (see docs/simulator.md, "Performance").

Everything runs through the production path: manifests and a profile read by
``gpuscale.sim.inputs.build_inputs``, the real PromQL engine (``PromQLBackend``), and the
real KEDA and HPA models (``gpuscale.sim.keda``). The LLM world is
:func:`tests.unit.sim.worlds.llm_inputs`, shared with the simulator's tests.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.sim.inputs import SimulationInputs, build_inputs

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial"
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"
TRACE = "/work/shared/traces/AzureLLMInferenceTrace_conv.csv"


def tutorial_inputs(provisioning: str | None = None) -> SimulationInputs:
    """The tutorial as ``gpuscale demo`` simulates it (namespace kube-system)."""
    profile = read_profile(TUTORIAL / "gpuscale.yaml")
    if provisioning is not None:
        pools = tuple(
            p.model_copy(update={"provisioning_time": float(provisioning)})
            for p in profile.node_pools
        )
        profile = profile.model_copy(update={"node_pools": pools})
    return build_inputs(
        read_manifests([TUTORIAL]),
        profile,
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float
    value: Any


def timed(fn: Callable[[], Any]) -> Timing:
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.perf_counter()
    value = fn()
    wall = time.perf_counter() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return Timing(wall, cpu, value)


def load_average() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])
