"""Shared set-ups for the simulator benchmarks (see docs/simulator.md, "Performance").

The metrics backend is gpuscale.sim.testing.FakeMetricsBackend and the scalers are
stand-ins (ThresholdScaler), because the real PromQL engine and HPA/KEDA models are not
wired in yet: numbers here measure the simulator itself plus a cheap query front.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuscale.controllers.scheduler import Taint, Toleration
from gpuscale.sim.specs import (
    PoolSpec,
    RequestCapacity,
    SimulationSpec,
    WorkloadSpec,
)
from gpuscale.sim.testing import FakeMetricsBackend, ThresholdScaler

GPU_LABELS = {"doks.digitalocean.com/gpu-brand": "amd"}
TUTORIAL_QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)


def gpu_pool(max_nodes: int = 8, min_nodes: int = 1) -> PoolSpec:
    return PoolSpec(
        "gpu-mi300x",
        allocatable={"cpu": 20, "memory": 240 * 2**30, "pods": 110, "amd.com/gpu": 1},
        labels=GPU_LABELS,
        taints=(Taint("amd.com/gpu"),),
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        price_per_hour=1.99,
        provisioning_s=420.0,
        gpu_model="MI300X",
    )


def cpu_pool() -> PoolSpec:
    return PoolSpec(
        "general",
        allocatable={"cpu": 4, "memory": 8 * 2**30, "pods": 110},
        min_nodes=1,
        max_nodes=3,
        price_per_hour=0.07,
        taints=(Taint("CriticalAddonsOnly", "true"),),
    )


def tutorial_spec() -> SimulationSpec:
    workload = WorkloadSpec(
        "go-from-configmap",
        namespace="gpu",
        replicas=1,
        requests={"amd.com/gpu": 1},
        limits={"amd.com/gpu": 1},
        node_selector=GPU_LABELS,
        tolerations=(
            Toleration("CriticalAddonsOnly", "Exists"),
            Toleration("amd.com/gpu", "Exists"),
        ),
        image="golang:1.24",
        image_pull_s=60.0,
        startup_s=90.0,
        gauges=("my_custom_gauge",),
        local_storage=True,
    )
    return SimulationSpec((workload,), (gpu_pool(), cpu_pool()))


def tutorial_scaler() -> ThresholdScaler:
    return ThresholdScaler(
        TUTORIAL_QUERY, 80.0, 1, 8, name="hpa", metric="s0-prometheus", scale_down_window_s=300.0
    )


def llm_workload(name: str, namespace: str = "llm") -> WorkloadSpec:
    return WorkloadSpec(
        name,
        namespace=namespace,
        replicas=2,
        requests={"amd.com/gpu": 1, "cpu": 4, "memory": 32 * 2**30},
        limits={"amd.com/gpu": 1},
        node_selector=GPU_LABELS,
        tolerations=(Toleration("amd.com/gpu", "Exists"),),
        image="vllm/vllm-openai:v0.8",
        image_pull_s=120.0,
        startup_s=180.0,
        termination_grace_s=60.0,
        capacity=RequestCapacity(
            concurrency=32,
            prefill_tokens_per_s=8000.0,
            decode_tokens_per_s=40.0,
            timeout_s=120.0,
            latency_target_s=30.0,
        ),
    )


def llm_scalers(name: str, namespace: str = "llm") -> list[ThresholdScaler]:
    """A stand-in HPA (15 s) and a stand-in KEDA poll (30 s, query only, as KEDA with
    minReplicaCount >= 1): ~60k queries per week."""
    in_flight = (
        f'sum(gpuscale_requests_in_flight{{namespace="{namespace}",service="{name}"}})'
        f' + sum(gpuscale_requests_queued{{namespace="{namespace}",service="{name}"}})'
    )
    return [
        ThresholdScaler(
            in_flight, 20.0, 1, 20, name="hpa", metric="in-flight", scale_down_window_s=300.0
        ),
        ThresholdScaler(
            in_flight,
            20.0,
            1,
            20,
            name="keda",
            metric="in-flight-keda",
            period_s=30.0,
            writes=False,
        ),
    ]


def llm_pool(max_nodes: int, min_nodes: int = 2) -> PoolSpec:
    return PoolSpec(
        "gpu-mi300x",
        allocatable={"cpu": 20, "memory": 240 * 2**30, "pods": 110, "amd.com/gpu": 1},
        labels=GPU_LABELS,
        taints=(Taint("amd.com/gpu"),),
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        price_per_hour=1.99,
        provisioning_s=420.0,
        gpu_model="MI300X",
    )


class TimedBackend:
    """Delegates to a metrics backend and measures the CPU time its queries take, so the
    simulator's own time can be told apart from the (fake) PromQL engine's."""

    def __init__(self, inner: FakeMetricsBackend) -> None:
        self.inner = inner
        self.query_s = 0.0
        self.queries = 0
        # appends go straight to the inner backend (no proxy overhead in the timing)
        self.append = inner.append
        self.series_ref = inner.series_ref
        self.append_ref = inner.append_ref
        self.mark_stale = inner.mark_stale

    def query(self, query, t_ms):  # type: ignore[no-untyped-def]
        start = time.process_time()
        try:
            return self.inner.query(query, t_ms)
        finally:
            self.query_s += time.process_time() - start
            self.queries += 1


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
