"""The timeline corpus: the simulations whose timelines must not change when the
simulator is reshaped (issue 12), each a named case that runs through the same path as
its source.

A case's output is one JSON Lines text: a first line with what the timeline does not
hold (engine actions, scrapes, cost, request outcomes, and every series the world
registered with Prometheus, labels included — so a changed node label shows), then the
timeline itself (its header and one line per record, as ``gpuscale simulate --timeline``
writes them), then one line per workload with its request log, request by request
(arrival, latency — NaN unless served — and outcome: served, timed out, dropped,
unfinished; start and end are arrival and arrival + latency).
``scripts/record_timeline_corpus.py`` writes them under ``tests/data/timeline-corpus/``;
``test_timeline_corpus.py`` re-runs every case and compares line for line. Long runs are
cut short (the 7-day trace replays 300 rows of the conversation trace for 15 minutes) so
the whole corpus re-runs in seconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gpuscale.inputs import read_manifests, read_profile, read_scenario, read_trace
from gpuscale.manifests import ManifestSet, load_text
from gpuscale.profile import load_profile_text
from gpuscale.sim.inputs import SimulationInputs, build_inputs, gauges_of
from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import SimPool, SimulationSpec, SimWorkload
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import encode_header, encode_record
from tests.unit.sim.corpus_random import RANDOM_SEEDS, random_world
from tests.unit.sim.standins import FixedScaler
from tests.unit.sim.worlds import (
    FIXED_QUERY,
    GAUGE_SCENARIO,
    cpu_pool,
    gpu_pool,
    llm_inputs,
    llm_workload,
    nvidia_pool,
    stand_in_hpa,
    tutorial_spec,
    tutorial_workload,
)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
SCENARIO = EXAMPLES / "tutorial-scenario.yaml"
CORPUS = ROOT / "tests" / "data" / "timeline-corpus"
TRACE_HEAD = CORPUS / "inputs" / "azure-conv-head.csv"
"""The first 300 requests of ``AzureLLMInferenceTrace_conv.csv`` (CC-BY-4.0, Patel et al.,
"Splitwise", ISCA 2024), so the trace cases run where ``../shared/traces`` is absent."""
CODE_HEAD = CORPUS / "inputs" / "azure-code-head.csv"
"""The first 1,200 requests of ``AzureLLMInferenceTrace_code.csv`` (same licence)."""
MOONCAKE_HEAD = CORPUS / "inputs" / "mooncake-conversation-head.jsonl"
"""The first 600 requests of Mooncake's ``conversation_trace.jsonl`` (Apache-2.0, Qin et
al., FAST'25), without ``hash_ids`` (the simulator does not read them)."""

Run = tuple[Simulation, SimulationResult]


def _production(inputs: SimulationInputs, load: LoadSpec | None, seed: int, until: float) -> Run:
    """Run ``inputs`` as the CLI does (storing only the queried series), and again storing
    every series, so the corpus sees every label the world gives Prometheus; the second
    run's result is checked to be the same timeline."""
    sim = inputs.simulation(load=load, seed=seed)
    result = sim.run(until)
    full = Simulation(
        inputs.spec,
        metrics=inputs.backend(),
        seed=seed,
        scalers=inputs.scalers(),
        load=load,
    )
    every = full.run(until)
    if [encode_record(r) for r in every.records] != [encode_record(r) for r in result.records]:
        raise AssertionError("storing every series changed the timeline")
    return full, result


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    """Where the set-up comes from (the demo, an example, a benchmark, a test)."""
    run: Callable[[], Run]


# ------------------------------------------------------------------ demo and examples


def _example(folder: str, namespace: str, seed: int, profile_text: str | None = None) -> Run:
    """As ``gpuscale demo`` runs an example (``cli/_demo._simulate``)."""
    path = EXAMPLES / folder
    scenario = read_scenario(SCENARIO)
    manifests = read_manifests([path])
    profile = (
        read_profile(path / "gpuscale.yaml")
        if profile_text is None
        else load_profile_text(profile_text, str(path / "gpuscale.yaml"))
    )
    names = [m.name for m in manifests.by_kind("Deployment", "StatefulSet")]
    inputs = build_inputs(
        manifests, profile, namespace=namespace, gauges=gauges_of(scenario, names)
    )
    return _production(inputs, LoadSpec(scenario=scenario), seed, scenario.until or 2400.0)


def _generic_tutorial() -> Run:
    """The tutorial with ``provider: generic``: its nodes must carry no DOKS label."""
    text = (EXAMPLES / "tutorial" / "gpuscale.yaml").read_text()
    if "provider: doks" in text:
        text = text.replace("provider: doks", "provider: generic")
    else:
        text = "cluster:\n  provider: generic\n" + text
    return _example("tutorial", "kube-system", 0, profile_text=text)


def _provisioning(folder: str, provisioning_s: float) -> Run:
    """``tests/unit/sim/test_tutorial_evidence``: the GPU pool with another provisioning time."""
    path = EXAMPLES / folder
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    pools = tuple(
        replace(p, provisioning_s=provisioning_s) if p.gpus_per_node else p
        for p in inputs.spec.pools
    )
    inputs = replace(inputs, spec=replace(inputs.spec, pools=pools))
    return _production(inputs, LoadSpec(scenario=read_scenario(SCENARIO)), 0, 2400.0)


# ------------------------------------------------------------------ benchmarks


def _bench_tutorial(hours: float) -> Run:
    """``benchmarks/sim_tutorial.py`` (24 h there; cut to ``hours``)."""
    path = EXAMPLES / "tutorial"
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    return _production(inputs, LoadSpec(scenario=scenario), 1, hours * 3600)


def _bench_trace(workloads: int, seconds: float, head: Path = TRACE_HEAD) -> Run:
    """``benchmarks/sim_trace.py`` (the whole trace for 7 days there; its head here)."""
    tiled = read_trace(head).tiled(seconds)
    inputs = llm_inputs(workloads)
    names = [w.name for w in inputs.spec.workloads]
    return _production(inputs, LoadSpec(traces=dict.fromkeys(names, tiled)), 1, seconds)


# ------------------------------------------------------------------ simulator tests


def _spec_run(
    spec: SimulationSpec,
    until: float,
    *,
    seed: int = 0,
    scalers: dict[str, list[object]] | None = None,
    scenario: str | None = None,
    warm_start: bool = True,
) -> Run:
    sim = Simulation(
        spec,
        metrics=PromQLBackend(),
        seed=seed,
        scalers=scalers,  # type: ignore[arg-type]
        load=None if scenario is None else LoadSpec(scenario=parse_scenario(scenario)),
        warm_start=warm_start,
        audit=True,
    )
    return sim, sim.run(until)


def _stand_in(query: str | None, until: float) -> Run:
    """``test_world._tutorial``: the tutorial spec with the stand-in HPA."""
    scaler = stand_in_hpa() if query is None else stand_in_hpa(query)
    return _spec_run(
        tutorial_spec(),
        until,
        seed=1,
        scalers={"go-from-configmap": [scaler]},
        scenario=GAUGE_SCENARIO,
    )


def _nvidia() -> Run:
    from gpuscale.controllers.scheduler import Toleration

    workload = llm_workload(
        requests={"nvidia.com/gpu": 1},
        limits={"nvidia.com/gpu": 1},
        node_selector={"doks.digitalocean.com/gpu-brand": "nvidia"},
        tolerations=(Toleration("nvidia.com/gpu", "Exists"),),
    )
    return _spec_run(
        SimulationSpec((workload,), (nvidia_pool(),)),
        300.0,
        scenario="steps:\n  - at: 0s\n    request_rate: 2\n",
    )


def _cpu_drain() -> Run:
    web = SimWorkload("web", replicas=2, requests={"cpu": 0.5, "memory": 2**30})
    pool = SimPool(
        "cpu",
        allocatable={"cpu": 4, "memory": 8 * 2**30, "pods": 110},
        min_nodes=1,
        max_nodes=3,
        initial_nodes=2,
        price_per_hour=0.1,
    )
    return _spec_run(SimulationSpec((web,), (pool,)), 1800.0, seed=2)


KEDA_MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: demo, labels: {{app: app}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
      containers:
        - name: app
          image: app:1
          ports: [{{name: metrics, containerPort: 8080}}]
          resources: {{requests: {{cpu: 500m}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: app, namespace: demo, labels: {{app: app}}}}
spec:
  selector: {{app: app}}
  ports: [{{name: metrics, port: 8080}}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: app, namespace: demo, labels: {{release: prometheus}}}}
spec:
  selector: {{matchLabels: {{app: app}}}}
  endpoints: [{{port: metrics, interval: 15s}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: app
  namespace: demo
  annotations: {annotations}
spec:
  scaleTargetRef: {{name: app}}
  minReplicaCount: {min}
  maxReplicaCount: 5
  pollingInterval: 30
  cooldownPeriod: 60
{extra}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus-operated.monitoring.svc.cluster.local:9090
        threshold: "10"
        query: {query}
"""
"""``tests/unit/sim/test_keda_loops.MANIFESTS``, copied so the corpus keeps its inputs."""

KEDA_PROFILE = """
node_pools:
  - name: cpu
    size: s-4vcpu-8gb
    min_nodes: 1
    max_nodes: 4
    provisioning_time: 1m
workloads:
  app: {image_pull_time: 0s, startup_time: 0s}
"""


def _keda(
    *,
    steps: str,
    until: float,
    replicas: int = 1,
    minimum: int = 1,
    query: str = 'sum(load{namespace="demo"})',
    extra: str = "",
    annotations: str = "{}",
) -> Run:
    """``test_keda_loops._run``: one CPU workload under the real KEDA and HPA models."""
    text = KEDA_MANIFESTS.format(
        replicas=replicas,
        min=minimum,
        query=json.dumps(query),
        extra=extra,
        annotations=annotations,
    )
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(KEDA_PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    scenario = parse_scenario(f"workload: app\nsteps:\n{steps}", source="s.yaml")
    return _production(inputs, LoadSpec(scenario=scenario), 3, until)


def _keda_fallback() -> Run:
    text = KEDA_MANIFESTS.format(
        replicas=1,
        min=1,
        query=json.dumps('sum(load{namespace="nowhere"})'),
        extra="  fallback: {failureThreshold: 2, replicas: 3}",
        annotations="{}",
    ).replace('threshold: "10"', 'threshold: "10"\n        ignoreNullValues: "false"')
    inputs = build_inputs(
        ManifestSet(load_text(text, "app.yaml")),
        load_profile_text(KEDA_PROFILE, "gpuscale.yaml"),
        gauges={"app": ("load",)},
    )
    return _production(inputs, None, 1, 200.0)


def _random(seed: int) -> Callable[[], Run]:
    def run() -> Run:
        inputs, scenario, until = random_world(seed)
        return _production(inputs, LoadSpec(scenario=scenario), seed, float(until))

    return run


_GAUGE = "  - at: {at}s\n    set_gauge: {{name: load, value: {value}, pods: {pods}}}\n"

CASES: tuple[Case, ...] = (
    Case("demo-tutorial", "gpuscale demo", lambda: _example("tutorial", "kube-system", 0)),
    Case(
        "demo-tutorial-fixed", "gpuscale demo", lambda: _example("tutorial-fixed", "kube-system", 0)
    ),
    Case(
        "demo-tutorial-default-namespace",
        "gpuscale demo (_elsewhere)",
        lambda: _example("tutorial", "default", 0),
    ),
    Case(
        "example-tutorial-seed-7",
        "examples/tutorial (gpuscale demo --seed 7)",
        lambda: _example("tutorial", "kube-system", 7),
    ),
    Case("example-tutorial-generic", "examples/tutorial, provider: generic", _generic_tutorial),
    Case(
        "evidence-provisioning-10m",
        "tests/unit/sim/test_tutorial_evidence",
        lambda: _provisioning("tutorial", 600.0),
    ),
    Case(
        "evidence-provisioning-30s",
        "tests/unit/sim/test_tutorial_evidence",
        lambda: _provisioning("tutorial", 30.0),
    ),
    Case("bench-sim-tutorial-3h", "benchmarks/sim_tutorial.py", lambda: _bench_tutorial(3.0)),
    Case("bench-sim-trace-15m", "benchmarks/sim_trace.py week", lambda: _bench_trace(1, 900.0)),
    Case(
        "bench-sim-trace-10-workloads",
        "benchmarks/sim_trace.py workloads",
        lambda: _bench_trace(10, 300.0),
    ),
    Case(
        "trace-azure-code-30m",
        "../shared/traces/AzureLLMInferenceTrace_code.csv (head), ScaledObject on requests",
        lambda: _bench_trace(1, 1800.0, CODE_HEAD),
    ),
    Case(
        "trace-mooncake-30m",
        "../shared/traces/mooncake_conversation_trace.jsonl (head), ScaledObject on requests",
        lambda: _bench_trace(1, 1800.0, MOONCAKE_HEAD),
    ),
    Case("world-tutorial-stand-in", "tests/unit/sim/test_world", lambda: _stand_in(None, 3600.0)),
    Case("world-fixed-query", "tests/unit/sim/test_world", lambda: _stand_in(FIXED_QUERY, 1800.0)),
    Case(
        "world-node-removed",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec((tutorial_workload(),), (gpu_pool(), cpu_pool())),
            3600.0,
            scalers={"go-from-configmap": [FixedScaler([(0.0, 2), (400.0, 1)])]},
        ),
    ),
    Case(
        "world-scale-from-zero",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec((tutorial_workload(),), (gpu_pool(min_nodes=0), cpu_pool())),
            900.0,
            warm_start=False,
        ),
    ),
    Case(
        "world-template-without-gpus",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec(
                (tutorial_workload(),),
                (gpu_pool(min_nodes=0, template_has_gpus=False), cpu_pool()),
            ),
            900.0,
            warm_start=False,
        ),
    ),
    Case(
        "world-max-nodes",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec(
                (tutorial_workload(replicas=4),), (gpu_pool(min_nodes=0, max_nodes=2), cpu_pool())
            ),
            1200.0,
            warm_start=False,
        ),
    ),
    Case(
        "world-requests",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec((llm_workload(replicas=2),), (gpu_pool(min_nodes=2),)),
            600.0,
            seed=3,
            scenario="steps:\n  - at: 0s\n    request_rate: 3\n",
        ),
    ),
    Case("world-nvidia", "tests/unit/sim/test_world", _nvidia),
    Case(
        "world-requests-time-out",
        "tests/unit/sim/test_world",
        lambda: _spec_run(
            SimulationSpec(
                (llm_workload(replicas=1),), (gpu_pool(min_nodes=0, provisioning_s=100.0),)
            ),
            400.0,
            scenario="steps:\n  - at: 0s\n    request_rate: 1\n",
            warm_start=False,
        ),
    ),
    Case("world-cpu-drain", "tests/unit/sim/test_world", _cpu_drain),
    Case(
        "keda-hpa-scales",
        "tests/unit/sim/test_keda_loops",
        lambda: _keda(steps=_GAUGE.format(at=20, value=35, pods=1), until=300),
    ),
    Case(
        "keda-activates-from-zero",
        "tests/unit/sim/test_keda_loops",
        lambda: _keda(
            minimum=0,
            replicas=0,
            query="vector(7)",
            steps=_GAUGE.format(at=1, value=1, pods=1),
            until=120,
        ),
    ),
    Case(
        "keda-scale-to-zero",
        "tests/unit/sim/test_keda_loops",
        lambda: _keda(
            minimum=0,
            steps=_GAUGE.format(at=5, value=3, pods=1) + _GAUGE.format(at=100, value=0, pods="all"),
            until=400,
        ),
    ),
    Case(
        "keda-paused",
        "tests/unit/sim/test_keda_loops",
        lambda: _keda(
            annotations='{"autoscaling.keda.sh/paused-replicas": "3"}',
            steps=_GAUGE.format(at=20, value=50, pods=1),
            until=200,
        ),
    ),
    Case("keda-fallback", "tests/unit/sim/test_keda_loops", _keda_fallback),
    *(
        Case(f"random-{seed:02d}", f"tests/unit/sim/corpus_random.py seed {seed}", _random(seed))
        for seed in RANDOM_SEEDS
    ),
)


def lines(case: Case) -> list[str]:
    """The case's output, one JSON text per line (see the module docstring)."""
    sim, result = case.run()
    store = getattr(sim.world.metrics, "store", None)
    series = (
        []
        if store is None
        else sorted(json.dumps(dict(labels), sort_keys=True) for labels in store._by_labels)
    )
    cost = result.cost
    extra = {
        "case": case.name,
        "source": case.source,
        "until": result.until,
        "events": result.events,
        "scrapes": result.scrapes,
        "audit": list(result.audit),
        "cost": {
            "node_seconds": dict(sorted(cost.node_seconds.items())),
            "dollars": dict(sorted(cost.dollars.items())),
            "gpu_seconds": dict(sorted(cost.gpu_seconds.items())),
            "idle_gpu_seconds": dict(sorted(cost.idle_gpu_seconds.items())),
            "nodes_added": dict(sorted(cost.nodes_added.items())),
            "nodes_removed": dict(sorted(cost.nodes_removed.items())),
        },
        "requests": {
            key: {
                "count": len(log),
                "outcomes": sorted(
                    {
                        str(o): int((log.outcomes == o).sum()) for o in set(log.outcomes.tolist())
                    }.items()
                ),
                "latency_sum": float(log.latencies[log.latencies == log.latencies].sum()),
            }
            for key, log in sorted(result.requests.items())
        },
        "series": series,
    }
    return [
        json.dumps(extra, sort_keys=True),
        encode_header(result.header),
        *(encode_record(record) for record in result.records),
        *(
            json.dumps(
                {
                    "requests": key,
                    "arrivals": log.arrivals.tolist(),
                    "latencies": log.latencies.tolist(),
                    "outcomes": log.outcomes.tolist(),
                }
            )
            for key, log in sorted(result.requests.items())
        ),
    ]


def path_of(case: Case) -> Path:
    return CORPUS / f"{case.name}.jsonl.gz"
