"""Ready-made worlds for the simulator: the tutorial's system on DOKS-like pools, and LLM
servers scaled on their requests.

Two levels, for two kinds of use:

- specs (:func:`tutorial_spec`, :func:`gpu_pool`, :func:`llm_workload`, ...): the
  simulator's own dataclasses, set by hand with round timings, for experiments and tests
  of the loops that should not depend on how manifests are read;
- inputs (:func:`llm_inputs`): manifests and a profile as a user writes them, read by
  :func:`gpuscale.sim.inputs.build_inputs` (the production path), for benchmarks and
  experiments at scale. The tutorial itself at this level is ``examples/tutorial/``
  (``gpuscale demo``).

Pure: every world is built from values and strings, nothing is read from disk. The
benchmarks (``benchmarks/sim_*.py``) and the simulator's tests share these, so a world
is defined once. They are fixtures, not gpuscale's API, so they live under ``tests/``;
:func:`stand_in_hpa` is the stand-in HPA the tests put on them.
"""

from __future__ import annotations

from dataclasses import replace

from gpuscale.kube import Taint, Toleration
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.specs import RequestCapacity, SimPool, SimulationSpec, SimWorkload
from tests.unit.sim.standins import ThresholdScaler

__all__ = [
    "AMD",
    "FIXED_QUERY",
    "GAUGE_SCENARIO",
    "LLM_MANIFESTS",
    "LLM_PROFILE",
    "LLM_WORKLOAD",
    "NVIDIA",
    "TUTORIAL_QUERY",
    "cpu_pool",
    "gpu_pool",
    "llm_inputs",
    "llm_workload",
    "nvidia_pool",
    "stand_in_hpa",
    "tutorial_spec",
    "tutorial_workload",
    "vllm_inputs",
]

AMD = {"doks.digitalocean.com/gpu-brand": "amd"}
NVIDIA = {"doks.digitalocean.com/gpu-brand": "nvidia"}
"""The GPU-brand node labels of DOKS."""
TUTORIAL_QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
"""The tutorial's query (examples/tutorial/resources.yaml)."""
FIXED_QUERY = 'sum(my_custom_gauge{namespace="gpu"})'
"""The fixed query: the total, for metricType AverageValue."""
GAUGE_SCENARIO = (
    "steps:\n  - at: 60s\n    set_gauge: {name: my_custom_gauge, value: 160, pods: 1}\n"
)
"""The tutorial's test: the gauge set to 160 on one pod at 60 s."""


def gpu_pool(**changes: object) -> SimPool:
    """A DOKS-like MI300X pool (one GPU per node, tainted ``amd.com/gpu``, 1-8 nodes, 120 s
    to provision); ``changes`` replace fields."""
    pool = SimPool(
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


def nvidia_pool(**changes: object) -> SimPool:
    """A DOKS-like H100 pool (one GPU per node, tainted ``nvidia.com/gpu``, 1-4 nodes)."""
    pool = SimPool(
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


def cpu_pool(**changes: object) -> SimPool:
    """DOKS' general pool, tainted ``CriticalAddonsOnly`` as the tutorial's cluster is."""
    pool = SimPool(
        "general",
        allocatable={"cpu": 4, "memory": 8 * 2**30, "pods": 110},
        taints=(Taint("CriticalAddonsOnly", "true"),),
        min_nodes=1,
        max_nodes=3,
        price_per_hour=0.07,
    )
    return replace(pool, **changes)  # type: ignore[arg-type]


def tutorial_workload(**changes: object) -> SimWorkload:
    """The tutorial's Deployment: one AMD GPU, its tolerations, the gauge it exports, a
    30 s image pull and 60 s start-up."""
    workload = SimWorkload(
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
    """The tutorial's workload on :func:`gpu_pool` (with ``pool_changes``) and :func:`cpu_pool`."""
    return SimulationSpec((tutorial_workload(),), (gpu_pool(**pool_changes), cpu_pool()))


def llm_workload(**changes: object) -> SimWorkload:
    """A request-serving workload (4 concurrent requests of 1 s per replica, 30 s timeout)."""
    workload = SimWorkload(
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


LLM_PROFILE = """
node_pools:
  - name: gpu
    size: gpu-mi300x1-192gb
    min_nodes: {min_nodes}
    max_nodes: {max_nodes}
    provisioning_time: 7m
prometheus:
  scrape_interval: 30s
workloads:
{workloads}
"""
"""The profile of :func:`llm_inputs` (``min_nodes``, ``max_nodes`` and ``workloads`` to
fill): MI300X nodes that take 7 minutes to provision, a 30 s scrape."""

LLM_WORKLOAD = """  {name}:
    image_pull_time: 2m
    startup_time: 3m
    concurrency: 32
    prefill_tokens_per_second: 8000
    decode_tokens_per_second: 40
    latency_target: 30s
    request_timeout: 2m
"""
"""One workload's entry in :data:`LLM_PROFILE`: start-up, capacity in tokens per second,
latency target and timeout."""

LLM_MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: llm, labels: {{app: {name}}}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      nodeSelector: {{doks.digitalocean.com/gpu-brand: amd}}
      tolerations: [{{key: amd.com/gpu, operator: Exists, effect: NoSchedule}}]
      terminationGracePeriodSeconds: 60
      containers:
        - name: server
          image: vllm/vllm-openai:v0.8
          ports: [{{name: http, containerPort: 8000}}]
          readinessProbe: {{httpGet: {{path: /health, port: http}}, periodSeconds: 5}}
          resources:
            requests: {{cpu: "4", memory: 32Gi, amd.com/gpu: "1"}}
            limits: {{amd.com/gpu: "1"}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: llm, labels: {{app: {name}}}}}
spec:
  selector: {{app: {name}}}
  ports: [{{name: http, port: 8000, targetPort: http}}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: {name}, namespace: llm, labels: {{release: prometheus}}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  endpoints: [{{port: http}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: {name}, namespace: llm}}
spec:
  scaleTargetRef: {{name: {name}}}
  minReplicaCount: 1
  maxReplicaCount: 20
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "20"
        query: >-
          sum(gpuscale_requests_in_flight{{namespace="llm", service="{name}"}})
          + sum(gpuscale_requests_queued{{namespace="llm", service="{name}"}})
"""
"""One LLM server (``name`` to fill): a GPU Deployment, its Service and ServiceMonitor, and
a ScaledObject on in-flight plus queued requests."""


def llm_inputs(workloads: int) -> SimulationInputs:
    """``workloads`` LLM servers, each with its ScaledObject on in-flight + queued requests."""
    names = [f"llm-{i}" for i in range(workloads)]
    text = "---\n".join(LLM_MANIFESTS.format(name=n) for n in names)
    manifests = ManifestSet(load_text(text, "llm.yaml"))
    profile = load_profile_text(
        LLM_PROFILE.format(
            min_nodes=2 * workloads,
            max_nodes=20 * workloads,
            workloads="".join(LLM_WORKLOAD.format(name=n) for n in names),
        ),
        "gpuscale.yaml",
    )
    return build_inputs(manifests, profile)


VLLM_WORKLOAD = """  {name}:
    image_pull_time: 3m
    startup_time: 4m
    latency_target: 30s
    request_timeout: 2m
    serving:
      kind: vllm
      preset: {preset}
      max_num_seqs: {max_num_seqs}
"""
"""One ``serving.kind: vllm`` workload's entry in :data:`LLM_PROFILE`."""

VLLM_QUERY = (
    'sum(vllm:num_requests_waiting{{model_name="meta-llama/Llama-3.1-8B-Instruct", '
    'namespace="llm", service="{name}"}}) + sum(vllm:num_requests_running{{model_name='
    '"meta-llama/Llama-3.1-8B-Instruct", namespace="llm", service="{name}"}})'
)
"""The ScaledObject query of :func:`vllm_inputs`: vLLM's own gauges, as written for a
real vLLM."""


def vllm_inputs(
    workloads: int = 1,
    *,
    preset: str = "mi300x/llama-3.1-8b",
    max_num_seqs: int = 256,
    threshold: int = 20,
    max_nodes: int | None = None,
    query: str = VLLM_QUERY,
    replicas: tuple[int, int] = (1, 20),
) -> SimulationInputs:
    """:func:`llm_inputs` served by vLLM: the container runs ``vllm serve`` with the model,
    the profile has ``serving.kind: vllm`` with ``preset``, and the ScaledObject reads
    ``vllm:num_requests_waiting + vllm:num_requests_running`` (``threshold`` per replica),
    or ``query`` (``{name}`` is the workload's), between ``replicas`` (min, max)."""
    names = [f"llm-{i}" for i in range(workloads)]
    text = "---\n".join(
        LLM_MANIFESTS.format(name=n)
        .replace(
            "image: vllm/vllm-openai:v0.8",
            "image: vllm/vllm-openai:v0.11.0\n"
            "          args: [--model, meta-llama/Llama-3.1-8B-Instruct, --port, '8000']",
        )
        .replace('threshold: "20"', f'threshold: "{threshold}"')
        .replace(
            f'sum(gpuscale_requests_in_flight{{namespace="llm", service="{n}"}})\n'
            f'          + sum(gpuscale_requests_queued{{namespace="llm", service="{n}"}})',
            query.format(name=n).replace("{{", "{").replace("}}", "}"),
        )
        .replace("  replicas: 2", f"  replicas: {replicas[0]}")
        .replace("minReplicaCount: 1", f"minReplicaCount: {replicas[0]}")
        .replace("maxReplicaCount: 20", f"maxReplicaCount: {replicas[1]}")
        for n in names
    )
    manifests = ManifestSet(load_text(text, "vllm.yaml"))
    profile = load_profile_text(
        LLM_PROFILE.format(
            min_nodes=workloads * replicas[0],
            max_nodes=max_nodes or replicas[1] * workloads,
            workloads="".join(
                VLLM_WORKLOAD.format(name=n, preset=preset, max_num_seqs=max_num_seqs)
                for n in names
            ),
        ),
        "gpuscale.yaml",
    )
    return build_inputs(manifests, profile)


def stand_in_hpa(query: str = TUTORIAL_QUERY) -> ThresholdScaler:
    """ceil(value / 80) within [1, 8], highest of the last 300 s (the HPA's default window)."""
    return ThresholdScaler(
        query, 80.0, 1, 8, name="hpa", metric="s0-prometheus", scale_down_window_s=300.0
    )
