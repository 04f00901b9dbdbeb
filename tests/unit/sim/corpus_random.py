"""Randomly generated corpus cases (issue 14): manifests, a profile and a scenario drawn
from a seeded generator, run through ``build_inputs`` as ``gpuscale simulate`` runs them.

Each seed gives one world, one of two kinds:

- **gauge**: one to three CPU Deployments under ScaledObjects on a gauge their pods export
  (the tutorial's kind), each with its own minimum (0 — scale to zero — 1 or 2), maximum,
  polling interval, cooldown and threshold; some with a ``fallback`` whose query reads a
  namespace with no series, so KEDA's fallback replica count takes over; a CPU pool of
  random size, minimum (0 or 1), maximum and provisioning time; ``set_gauge`` steps at
  random times and values, on one pod or all.
- **requests**: one or two LLM servers (``worlds.LLM_MANIFESTS``) under ScaledObjects on
  in-flight + queued requests, minimum 0 or 1, random threshold, concurrency and service
  time; a GPU
  pool of random minimum, maximum and provisioning time; ``request_rate`` and ``ramp``
  steps.

The generator is :class:`random.Random` seeded with the case's seed: the same seed writes
the same text on every machine and Python version (``random.Random``'s ``randrange``,
``choice`` and ``random`` are stable across versions for integer seeds).
"""

from __future__ import annotations

import json
import random

from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.scenario import parse_scenario
from tests.unit.sim.worlds import LLM_MANIFESTS

__all__ = ["RANDOM_SEEDS", "random_world"]

RANDOM_SEEDS = tuple(range(1, 51))

_GAUGE_OBJECTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: demo, labels: {{app: {name}}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
        - name: app
          image: app:1
          ports: [{{name: metrics, containerPort: 8080}}]
          resources: {{requests: {{cpu: {cpu}m, memory: {memory}Mi}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: demo, labels: {{app: {name}}}}}
spec:
  selector: {{app: {name}}}
  ports: [{{name: metrics, port: 8080}}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: {name}, namespace: demo, labels: {{release: prometheus}}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  endpoints: [{{port: metrics, interval: {scrape}s}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: {name}, namespace: demo}}
spec:
  scaleTargetRef: {{name: {name}}}
  minReplicaCount: {min}
  maxReplicaCount: {max}
  pollingInterval: {polling}
  cooldownPeriod: {cooldown}
{fallback}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "{threshold}"
        query: {query}
"""


def _gauge_world(rng: random.Random):  # type: ignore[no-untyped-def]
    names = [f"app{i}" for i in range(rng.randint(1, 3))]
    texts, workloads = [], []
    for name in names:
        minimum = rng.choice([0, 1, 1, 2])
        fallback = rng.random() < 0.25
        namespace = "nowhere" if fallback and rng.random() < 0.7 else "demo"
        query = f'sum(load{{namespace="{namespace}", service="{name}"}})'
        texts.append(
            _GAUGE_OBJECTS.format(
                name=name,
                replicas=max(minimum, rng.randint(0, 3)),
                cpu=rng.choice([250, 500, 1000, 1500]),
                memory=rng.choice([256, 1024, 2048]),
                scrape=rng.choice([15, 30]),
                min=minimum,
                max=rng.randint(max(minimum, 1) + 1, 8),
                polling=rng.choice([15, 30, 60]),
                cooldown=rng.choice([30, 60, 300]),
                fallback=(
                    f"  fallback: {{failureThreshold: {rng.randint(1, 3)}, "
                    f"replicas: {rng.randint(1, 4)}}}"
                    if fallback
                    else ""
                ),
                threshold=rng.choice([5, 10, 20, 50]),
                query=json.dumps(query),
            )
        )
        workloads.append(
            f"  {name}: {{image_pull_time: {rng.choice([0, 5, 30])}s, "
            f"startup_time: {rng.choice([0, 10, 45])}s}}\n"
        )
    profile = (
        "node_pools:\n"
        "  - name: cpu\n"
        f"    size: {rng.choice(['s-2vcpu-4gb', 's-4vcpu-8gb'])}\n"
        f"    min_nodes: {rng.choice([0, 1])}\n"
        f"    max_nodes: {rng.randint(2, 6)}\n"
        f"    provisioning_time: {rng.choice([30, 60, 180, 300])}s\n"
        f"prometheus:\n  scrape_interval: {rng.choice([15, 30])}s\n"
        "workloads:\n" + "".join(workloads)
    )
    until = rng.choice([600, 1200, 1800, 3600])
    steps = []
    for _ in range(rng.randint(2, 7)):
        pods = rng.choice(["1", "2", "all"])
        steps.append(
            f"  - at: {rng.randrange(0, until - 1)}s\n"
            f"    workload: {rng.choice(names)}\n"
            f"    set_gauge: {{name: load, value: {rng.choice([0, 3, 12, 35, 60, 150])}, "
            f"pods: {pods}}}\n"
        )
    gauges = dict.fromkeys(names, ("load",))
    return "---\n".join(texts), profile, "steps:\n" + "".join(steps), until, gauges


def _requests_world(rng: random.Random):  # type: ignore[no-untyped-def]
    names = [f"llm-{i}" for i in range(rng.randint(1, 2))]
    texts, workloads = [], []
    for name in names:
        text = LLM_MANIFESTS.format(name=name)
        minimum = rng.choice([0, 1, 1])
        text = text.replace("minReplicaCount: 1", f"minReplicaCount: {minimum}")
        text = text.replace("replicas: 2", f"replicas: {max(minimum, rng.randint(0, 2))}")
        text = text.replace('threshold: "20"', f'threshold: "{rng.choice([4, 10, 20, 40])}"')
        text = text.replace("maxReplicaCount: 20", f"maxReplicaCount: {rng.randint(2, 8)}")
        texts.append(text)
        workloads.append(
            f"  {name}:\n"
            f"    image_pull_time: {rng.choice([10, 60, 120])}s\n"
            f"    startup_time: {rng.choice([20, 60, 180])}s\n"
            f"    concurrency: {rng.choice([4, 8, 32])}\n"
            f"    service_time: {rng.choice([1, 2, 5, 10])}s\n"
            f"    latency_target: {rng.choice([5, 30, 60])}s\n"
            f"    request_timeout: {rng.choice([30, 60, 120])}s\n"
        )
    profile = (
        "node_pools:\n"
        "  - name: gpu\n"
        "    size: gpu-mi300x1-192gb\n"
        f"    min_nodes: {rng.choice([0, 1, 2])}\n"
        f"    max_nodes: {rng.randint(2, 8)}\n"
        f"    provisioning_time: {rng.choice([60, 180, 420])}s\n"
        f"prometheus:\n  scrape_interval: {rng.choice([15, 30])}s\n"
        "workloads:\n" + "".join(workloads)
    )
    until = rng.choice([600, 1200, 1800])
    steps = []
    for name in names:
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(0, until - 1)
            if rng.random() < 0.3:
                steps.append(
                    f"  - at: {at}s\n    workload: {name}\n"
                    f"    ramp: {{from: {rng.randint(0, 3)}, to: {rng.randint(0, 8)}, "
                    f"over: {rng.choice([60, 300])}s}}\n"
                )
            else:
                steps.append(
                    f"  - at: {at}s\n    workload: {name}\n"
                    f"    request_rate: {rng.choice([0, 0.5, 1, 2, 4, 6])}\n"
                )
    return "---\n".join(texts), profile, "steps:\n" + "".join(steps), until, {}


def random_world(seed: int):  # type: ignore[no-untyped-def]
    """The inputs, scenario, horizon and run seed of random case ``seed``."""
    rng = random.Random(seed)
    kind = _gauge_world if rng.random() < 0.5 else _requests_world
    manifests, profile, scenario, until, gauges = kind(rng)
    inputs = build_inputs(
        ManifestSet(load_text(manifests, f"random-{seed}.yaml")),
        load_profile_text(profile, f"random-{seed}/gpuscale.yaml"),
        gauges=gauges,
    )
    return inputs, parse_scenario(scenario, source=f"random-{seed}-scenario.yaml"), until
