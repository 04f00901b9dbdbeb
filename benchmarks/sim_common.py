"""Shared set-ups for the simulator benchmarks (see docs/simulator.md, "Performance").

Everything runs through the production path: manifests and a profile read by
``gpuscale.sim.inputs.build_inputs``, the real PromQL engine (``PromQLBackend``), and the
real KEDA and HPA models (``gpuscale.sim.keda``).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial"
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"
TRACE = "/work/shared/traces/AzureLLMInferenceTrace_conv.csv"

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

LLM_WORKLOAD = """  {name}:
    image_pull_time: 2m
    startup_time: 3m
    concurrency: 32
    prefill_tokens_per_second: 8000
    decode_tokens_per_second: 40
    latency_target: 30s
    request_timeout: 2m
"""

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
