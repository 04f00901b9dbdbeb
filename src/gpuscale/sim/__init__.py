"""The discrete-event simulator: an event heap in virtual time running the controller
models at their real periods over modelled pods and nodes. Pure.

Build a :class:`SimulationSpec` (workloads, node pools, timings), give it a
:class:`MetricsBackend` (:class:`PromQLBackend`, over ``gpuscale.promql``), plug in the
:class:`Scaler` s that resize each workload (KEDA, the HPA), give it a :class:`LoadSpec`
(a :class:`Scenario` and/or request :class:`Trace` s), then
``Simulation(...).run(until)`` — or read all of it from manifests and a profile with
:func:`build_inputs`. :func:`steady_load_flap` answers the lint rule
``flaps-under-steady-load``. The result carries the timeline
records, the request logs and the cost; :func:`gpuscale.report.summarize` turns them into
the summary.
Each name is imported from its module on first use (:func:`gpuscale._lazy.lazy_exports`),
so a run does not load the lint rule's :mod:`gpuscale.sim.flap`. See ``docs/simulator.md``.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.sim.engine import Event, EventLoop, Handle, Priority, Process
    from gpuscale.sim.flap import FlapStep, FlapVerdict, steady_load_flap
    from gpuscale.sim.inputs import SimulationInputs, build_inputs
    from gpuscale.sim.load import RateSchedule, RateSource, TraceSource
    from gpuscale.sim.metrics import MetricsBackend, PromQLBackend, query_scalar
    from gpuscale.sim.requests import RequestLog
    from gpuscale.sim.scalers import ScaleDecision, Scaler, ScaleView
    from gpuscale.sim.scenario import GaugeStep, RampStep, RateStep, Scenario, parse_scenario
    from gpuscale.sim.simulation import Simulation
    from gpuscale.sim.specs import (
        ControlPlaneSpec,
        RequestCapacity,
        RequestMetricNames,
        ScrapeSpec,
        SimPool,
        SimulationSpec,
        SimWorkload,
    )
    from gpuscale.sim.traces import Trace, parse_trace
    from gpuscale.sim.world import CostReport, LoadSpec, SimulationResult
else:
    from gpuscale._lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "gpuscale.sim.engine": (
                "Event",
                "EventLoop",
                "Handle",
                "Priority",
                "Process",
            ),
            "gpuscale.sim.flap": (
                "FlapStep",
                "FlapVerdict",
                "steady_load_flap",
            ),
            "gpuscale.sim.inputs": (
                "SimulationInputs",
                "build_inputs",
            ),
            "gpuscale.sim.load": (
                "RateSchedule",
                "RateSource",
                "TraceSource",
            ),
            "gpuscale.sim.metrics": (
                "MetricsBackend",
                "PromQLBackend",
                "query_scalar",
            ),
            "gpuscale.sim.requests": ("RequestLog",),
            "gpuscale.sim.scalers": (
                "ScaleDecision",
                "Scaler",
                "ScaleView",
            ),
            "gpuscale.sim.scenario": (
                "GaugeStep",
                "RampStep",
                "RateStep",
                "Scenario",
                "parse_scenario",
            ),
            "gpuscale.sim.simulation": ("Simulation",),
            "gpuscale.sim.specs": (
                "ControlPlaneSpec",
                "RequestCapacity",
                "RequestMetricNames",
                "ScrapeSpec",
                "SimPool",
                "SimulationSpec",
                "SimWorkload",
            ),
            "gpuscale.sim.traces": (
                "Trace",
                "parse_trace",
            ),
            "gpuscale.sim.world": (
                "CostReport",
                "LoadSpec",
                "SimulationResult",
            ),
        },
    )

__all__ = [
    "ControlPlaneSpec",
    "CostReport",
    "Event",
    "EventLoop",
    "FlapStep",
    "FlapVerdict",
    "GaugeStep",
    "Handle",
    "LoadSpec",
    "MetricsBackend",
    "Priority",
    "Process",
    "PromQLBackend",
    "RampStep",
    "RateSchedule",
    "RateSource",
    "RateStep",
    "RequestCapacity",
    "RequestLog",
    "RequestMetricNames",
    "ScaleDecision",
    "ScaleView",
    "Scaler",
    "Scenario",
    "ScrapeSpec",
    "SimPool",
    "SimWorkload",
    "Simulation",
    "SimulationInputs",
    "SimulationResult",
    "SimulationSpec",
    "Trace",
    "TraceSource",
    "build_inputs",
    "parse_scenario",
    "parse_trace",
    "query_scalar",
    "steady_load_flap",
]
