"""Worlds the simulator tests share: the tutorial's system on DOKS-like pools."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.controllers.scheduler import Taint, Toleration
from gpuscale.sim.specs import PoolSpec, RequestCapacity, SimulationSpec, WorkloadSpec
from tests.unit.sim.standins import ThresholdScaler

AMD = {"doks.digitalocean.com/gpu-brand": "amd"}
NVIDIA = {"doks.digitalocean.com/gpu-brand": "nvidia"}
TUTORIAL_QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
FIXED_QUERY = 'sum(my_custom_gauge{namespace="gpu"})'
GAUGE_SCENARIO = (
    "steps:\n  - at: 60s\n    set_gauge: {name: my_custom_gauge, value: 160, pods: 1}\n"
)


def gpu_pool(**changes: object) -> PoolSpec:
    pool = PoolSpec(
        "gpu-mi300x",
        allocatable={"cpu": 20, "memory": 240 * 2**30, "pods": 110, "amd.com/gpu": 1},
        labels=AMD,
        taints=(Taint("amd.com/gpu"),),
        min_nodes=1,
        max_nodes=8,
        price_per_hour=1.99,
        provisioning_s=120.0,
        gpu_model="MI300X",
    )
    return replace(pool, **changes)  # type: ignore[arg-type]


def nvidia_pool(**changes: object) -> PoolSpec:
    pool = PoolSpec(
        "gpu-h100",
        allocatable={"cpu": 20, "memory": 240 * 2**30, "pods": 110, "nvidia.com/gpu": 1},
        labels=NVIDIA,
        taints=(Taint("nvidia.com/gpu"),),
        min_nodes=1,
        max_nodes=4,
        price_per_hour=3.39,
        provisioning_s=120.0,
        gpu_model="NVIDIA H100 80GB HBM3",
    )
    return replace(pool, **changes)  # type: ignore[arg-type]


def cpu_pool(**changes: object) -> PoolSpec:
    pool = PoolSpec(
        "general",
        allocatable={"cpu": 4, "memory": 8 * 2**30, "pods": 110},
        taints=(Taint("CriticalAddonsOnly", "true"),),
        min_nodes=1,
        max_nodes=3,
        price_per_hour=0.07,
    )
    return replace(pool, **changes)  # type: ignore[arg-type]


def tutorial_workload(**changes: object) -> WorkloadSpec:
    workload = WorkloadSpec(
        "go-from-configmap",
        namespace="gpu",
        replicas=1,
        requests={"amd.com/gpu": 1},
        limits={"amd.com/gpu": 1},
        node_selector=AMD,
        tolerations=(
            Toleration("CriticalAddonsOnly", "Exists"),
            Toleration("amd.com/gpu", "Exists"),
        ),
        image="golang:1.24",
        image_pull_s=30.0,
        startup_s=60.0,
        gauges=("my_custom_gauge",),
        local_storage=True,
    )
    return replace(workload, **changes)  # type: ignore[arg-type]


def tutorial_spec(**pool_changes: object) -> SimulationSpec:
    return SimulationSpec((tutorial_workload(),), (gpu_pool(**pool_changes), cpu_pool()))


def stand_in_hpa(query: str = TUTORIAL_QUERY) -> ThresholdScaler:
    """ceil(value / 80) within [1, 8], highest of the last 300 s (the HPA's default window)."""
    return ThresholdScaler(
        query, 80.0, 1, 8, name="hpa", metric="s0-prometheus", scale_down_window_s=300.0
    )


def llm_workload(**changes: object) -> WorkloadSpec:
    workload = WorkloadSpec(
        "llm",
        namespace="ai",
        replicas=1,
        requests={"amd.com/gpu": 1},
        limits={"amd.com/gpu": 1},
        node_selector=AMD,
        tolerations=(Toleration("amd.com/gpu", "Exists"),),
        image="server:1",
        image_pull_s=10.0,
        startup_s=20.0,
        termination_grace_s=30.0,
        capacity=RequestCapacity(
            concurrency=4, service_time_s=1.0, timeout_s=30.0, latency_target_s=2.0
        ),
    )
    return replace(workload, **changes)  # type: ignore[arg-type]
