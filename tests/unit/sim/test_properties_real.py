"""Properties of any simulated system built from manifests, with the real models (KEDA's
poll, the generated HPA, the PromQL engine, the scheduler, the cluster autoscaler):

- replicas stay within the ScaledObject's bounds;
- no pod is bound to a node it does not fit, and no node is removed while a pod on it
  cannot move anywhere else (the world's audit checks both as it runs);
- the cost is the integral of nodes × price over the run;
- the same seed gives the same timeline.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.scenario import GaugeStep, Scenario
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import encode_record

WORKLOAD = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: p, labels: {{app: {name}}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      {placement}
      containers:
        - name: app
          image: "app:{name}"
          ports: [{{name: metrics, containerPort: 8080}}]
          resources: {{requests: {{cpu: "{cpu}"{gpu}}}, limits: {{cpu: "{cpu}"{gpu}}}}}
      {volumes}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: p, labels: {{app: {name}}}}}
spec:
  selector: {{app: {name}}}
  ports: [{{name: metrics, port: 8080}}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: {name}, namespace: p, labels: {{release: prometheus}}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  endpoints: [{{port: metrics, interval: {interval}}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: {name}, namespace: p}}
spec:
  scaleTargetRef: {{name: {name}}}
  minReplicaCount: {low}
  maxReplicaCount: {high}
  pollingInterval: {polling}
  cooldownPeriod: {cooldown}
{behavior}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "{threshold}"
        query: 'sum(load{{namespace="p", service="{name}"}})'
"""

PROFILE = """
cluster: {{provider: generic}}
node_pools:
  - name: cpu
    size: s-4vcpu-8gb
    min_nodes: {cpu_min}
    max_nodes: {cpu_max}
    provisioning_time: {cpu_provisioning}
  - name: gpu
    size: gpu-mi300x1-192gb
    labels: {{gpu: "yes"}}
    taints: [{{key: amd.com/gpu, effect: NoSchedule}}]
    min_nodes: {gpu_min}
    max_nodes: {gpu_max}
    provisioning_time: {gpu_provisioning}
autoscaler:
  scale_down_unneeded_time: {unneeded}
  scale_down_delay_after_add: {after_add}
  expander: {expander}
workloads:
{workloads}
"""


@st.composite
def systems(draw):  # type: ignore[no-untyped-def]
    texts = []
    bounds: dict[str, tuple[int, int]] = {}
    timings = []
    steps = []
    for index in range(draw(st.integers(1, 2))):
        name = f"w{index}"
        gpu = draw(st.booleans())
        low = draw(st.integers(0, 2))
        high = draw(st.integers(max(low, 1), 4))
        behavior = draw(
            st.sampled_from(
                [
                    "",
                    "  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n"
                    "        scaleDown: {stabilizationWindowSeconds: 60}",
                    "  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n"
                    "        scaleUp: {policies: [{type: Pods, value: 1, periodSeconds: 60}]}",
                ]
            )
        )
        texts.append(
            WORKLOAD.format(
                name=name,
                replicas=draw(st.integers(low, high)),
                placement=(
                    'nodeSelector: {gpu: "yes"}\n      tolerations: [{key: amd.com/gpu, '
                    "operator: Exists}]"
                    if gpu
                    else "nodeSelector: {}"
                ),
                cpu=draw(st.sampled_from(["500m", "1500m", "3"])),
                gpu=', amd.com/gpu: "1"' if gpu else "",
                volumes="volumes: [{name: tmp, emptyDir: {}}]" if draw(st.booleans()) else "",
                interval=draw(st.sampled_from(["10s", "15s", "30s"])),
                low=low,
                high=high,
                polling=draw(st.sampled_from([10, 30])),
                cooldown=draw(st.sampled_from([30, 120])),
                behavior=behavior,
                threshold=draw(st.sampled_from([50, 100])),
            )
        )
        bounds[name] = (low, high)
        timings.append(
            f"  {name}: {{image_pull_time: {draw(st.sampled_from(['0s', '20s']))}, "
            f"startup_time: {draw(st.sampled_from(['0s', '30s']))}}}"
        )
        steps += [
            GaugeStep(
                draw(st.floats(0, 1500)), "load", draw(st.sampled_from([0.0, 90.0, 330.0])), 1, name
            )
            for _ in range(draw(st.integers(0, 3)))
        ]
    cpu_min, gpu_min = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    profile = PROFILE.format(
        cpu_min=cpu_min,
        cpu_max=draw(st.integers(max(cpu_min, 1), 3)),
        cpu_provisioning=draw(st.sampled_from(["20s", "2m"])),
        gpu_min=gpu_min,
        gpu_max=draw(st.integers(max(gpu_min, 1), 3)),
        gpu_provisioning=draw(st.sampled_from(["30s", "7m"])),
        unneeded=draw(st.sampled_from(["1m", "10m"])),
        after_add=draw(st.sampled_from(["0s", "10m"])),
        expander=draw(st.sampled_from(["random", "least-waste", "most-pods"])),
        workloads="\n".join(timings),
    )
    inputs = build_inputs(
        ManifestSet(load_text("---\n".join(texts), "system.yaml")),
        load_profile_text(profile, "gpuscale.yaml"),
        gauges=dict.fromkeys(bounds, ("load",)),
    )
    scenario = Scenario(tuple(sorted(steps, key=lambda s: s.at)))
    return inputs, bounds, scenario


def _run(inputs: SimulationInputs, scenario: Scenario, seed: int) -> SimulationResult:
    sim = inputs.simulation(load=LoadSpec(scenario=scenario), seed=seed, audit=True)
    return sim.run(2400.0)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems(), st.integers(0, 2**32))
def test_invariants_hold_with_the_real_models(system, seed: int) -> None:  # type: ignore[no-untyped-def]
    inputs, bounds, scenario = system
    result = _run(inputs, scenario, seed)
    assert result.audit == ()
    prices = {p.name: p.price_per_hour for p in inputs.spec.pools}
    integral = 0.0
    for record, nxt in zip(result.records, result.records[1:], strict=False):
        for pool, states in record.nodes.items():
            integral += sum(states.values()) * prices[pool] / 3600.0 * (nxt.t - record.t)
    assert abs(result.records[-1].cost_usd - integral) < 1e-9
    maxima = {p.name: p.max_nodes for p in inputs.spec.pools}
    for record in result.records:
        for pool, states in record.nodes.items():
            assert sum(states.values()) <= maxima[pool]
        for state in record.workloads:
            low, high = bounds[state.name.split("/")[1]]
            assert low <= state.spec <= high


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems(), st.integers(0, 2**32))
def test_the_same_seed_gives_the_same_timeline_with_the_real_models(system, seed: int) -> None:  # type: ignore[no-untyped-def]
    inputs, _, scenario = system
    first = [encode_record(r) for r in _run(inputs, scenario, seed).records]
    second = [encode_record(r) for r in _run(inputs, scenario, seed).records]
    assert first == second
