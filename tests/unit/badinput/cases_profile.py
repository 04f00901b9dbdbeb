"""Bad profiles, every section, through ``profile check`` and the commands that load one.

Each profile below is refused by ``gpuscale profile check`` with one line naming
``gpuscale.yaml:LINE`` and the key; most are then given to ``gpuscale simulate`` and
``gpuscale lint --profile``, which load it the same way and must refuse it with the same
line (issue 11: the check every command runs). The DOKS rule that a cluster needs a pool
starting with a node is ``profile check``'s and ``cluster``'s only (simulate and lint
model the workload's pools), so it is checked there.
"""

# ruff: noqa: E501 - a table of profile texts, one case per row, reads best unwrapped

from __future__ import annotations

from pathlib import Path

from tests.unit.badinput._harness import Bad

_MANIFESTS = (
    Path(__file__).parents[3] / "examples" / "tutorial-fixed" / "resources.yaml"
).read_text(encoding="utf-8")
_HUGE = "9" * 5000

# (id, profile text, line the error names, key path it names, also through simulate/lint)
_PROFILES: list[tuple[str, str, int, str, bool]] = [
    # the file as a whole
    ("top-list", "- cluster\n", 1, "a profile must be a mapping", True),
    ("top-scalar", "just words\n", 1, "a profile must be a mapping", True),
    ("top-two-documents", "hpa: {}\n---\nhpa: {}\n", 3, "one YAML document", True),
    ("top-unknown-section", "cluser: {}\n", 1, "cluser", True),
    ("top-duplicate-key", "hpa: {}\nhpa: {}\n", 2, "duplicate key", True),
    ("top-yaml-tab", "hpa:\n\tsync_period: 1s\n", 2, "gpuscale.yaml", True),
    # cluster
    ("cluster-list", "cluster: [a]\n", 1, "cluster", True),
    ("cluster-provider", "cluster:\n  provider: aws\n", 2, "cluster.provider", True),
    ("cluster-provider-list", "cluster:\n  provider: [doks]\n", 2, "cluster.provider", True),
    ("cluster-version-number", "cluster:\n  version: 1.20\n", 2, "cluster.version", True),
    ("cluster-ha-word", "cluster:\n  ha: maybe\n", 2, "cluster.ha", True),
    ("cluster-tags-scalar", "cluster:\n  tags: 5\n", 2, "cluster.tags", True),
    ("cluster-name-mapping", "cluster:\n  name: {a: 1}\n", 2, "cluster.name", True),
    ("cluster-unknown-key", "cluster:\n  regoin: tor1\n", 2, "regoin", True),
    ("cluster-gpu-metrics-number", "cluster:\n  gpu_metrics: 2\n", 2, "cluster.gpu_metrics", True),
    # node_pools
    ("pools-mapping", "node_pools: {gpu: 1}\n", 1, "node_pools", True),
    ("pools-item-scalar", "node_pools:\n  - gpu\n", 2, "node_pools[0]", True),
    ("pool-no-name", "node_pools:\n  - size: s-4vcpu-8gb\n    count: 1\n", 2, "name", True),
    ("pool-no-bounds", "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n", 2, "max_nodes", True),
    (
        "pool-count-and-max",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: 1, max_nodes: 2}\n",
        2,
        "node_pools[0]",
        True,
    ),
    (
        "pool-min-above-max",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, min_nodes: 3, max_nodes: 2}\n",
        2,
        "min_nodes",
        True,
    ),
    (
        "pool-negative-count",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: -1\n",
        4,
        "node_pools[0].count",
        True,
    ),
    (
        "pool-count-too-many",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1001\n",
        4,
        "node_pools[0].count",
        True,
    ),
    (
        "pool-count-huge-int",
        f"node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: {_HUGE}\n",
        4,
        "node_pools[0].count",
        True,
    ),
    (
        "pool-count-fraction",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1.5\n",
        4,
        "node_pools[0].count",
        True,
    ),
    (
        "pool-count-true",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: true\n",
        4,
        "node_pools[0].count",
        True,
    ),
    (
        "pool-max-nodes-word",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    max_nodes: many\n",
        4,
        "node_pools[0].max_nodes",
        True,
    ),
    (
        "pool-gpu-list",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    gpu: [amd]\n",
        5,
        "node_pools[0].gpu",
        True,
    ),
    (
        "pool-gpu-vendor",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    gpu: intel\n",
        5,
        "node_pools[0].gpu",
        True,
    ),
    (
        "pool-gpus-without-gpu",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: 1, gpus_per_node: 2}\n",
        2,
        "gpus_per_node",
        True,
    ),
    (
        "pool-gpus-too-many",
        "node_pools:\n  - name: g\n    size: gpu-mi300x1-192gb\n    count: 1\n    gpus_per_node: 65\n",
        5,
        "node_pools[0].gpus_per_node",
        True,
    ),
    (
        "pool-price-inf",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    price_per_hour: 1e309\n",
        5,
        "node_pools[0].price_per_hour",
        True,
    ),
    (
        "pool-price-nan",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    price_per_hour: .nan\n",
        5,
        "node_pools[0].price_per_hour",
        True,
    ),
    (
        "pool-price-negative",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    price_per_hour: -1\n",
        5,
        "node_pools[0].price_per_hour",
        True,
    ),
    (
        "pool-cpu-zero",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    cpu: 0\n",
        5,
        "node_pools[0].cpu",
        True,
    ),
    (
        "pool-memory-word",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    memory: lots\n",
        5,
        "node_pools[0].memory",
        True,
    ),
    (
        "pool-provisioning-negative",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    provisioning_time: -5m\n",
        5,
        "node_pools[0].provisioning_time",
        True,
    ),
    (
        "pool-labels-list",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    labels: [a]\n",
        5,
        "node_pools[0].labels",
        True,
    ),
    (
        "pool-label-value-number",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    labels:\n      team: 5\n",
        6,
        "labels.team",
        True,
    ),
    (
        "pool-unknown-size",
        "node_pools:\n  - name: g\n    size: my-node\n    count: 1\n",
        3,
        "node_pools[0]",
        True,
    ),
    (
        "pool-names-twice",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: 1}\n  - {name: g, size: s-4vcpu-8gb, count: 1}\n",
        1,
        "two node pools",
        True,
    ),
    (
        "pool-unknown-key",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    min_node: 1\n",
        5,
        "min_node",
        True,
    ),
    # node_pools[].taints
    (
        "taints-scalar",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    taints: dedicated\n",
        5,
        "node_pools[0].taints",
        True,
    ),
    (
        "taint-no-key",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    taints:\n      - {effect: NoSchedule}\n",
        6,
        "key",
        True,
    ),
    (
        "taint-effect",
        "node_pools:\n  - name: g\n    size: s-4vcpu-8gb\n    count: 1\n    taints:\n      - {key: a, effect: Never}\n",
        6,
        "effect",
        True,
    ),
    # autoscaler
    (
        "autoscaler-scan-zero",
        "autoscaler:\n  scan_interval: 0s\n",
        2,
        "autoscaler.scan_interval",
        True,
    ),
    (
        "autoscaler-scan-word",
        "autoscaler:\n  scan_interval: often\n",
        2,
        "autoscaler.scan_interval",
        True,
    ),
    (
        "autoscaler-delay-negative",
        "autoscaler:\n  scale_up_delay: -2s\n",
        2,
        "autoscaler.scale_up_delay",
        True,
    ),
    (
        "autoscaler-delay-list",
        "autoscaler:\n  scale_up_delay_gpu: [30s]\n",
        2,
        "autoscaler.scale_up_delay_gpu",
        True,
    ),
    (
        "autoscaler-removed-key",
        "autoscaler:\n  max_node_provision_time: 15m\n",
        2,
        "max_node_provision_time",
        True,
    ),
    (
        "autoscaler-threshold-above-1",
        "autoscaler:\n  scale_down_utilization_threshold: 1.5\n",
        2,
        "autoscaler.scale_down_utilization_threshold",
        True,
    ),
    (
        "autoscaler-threshold-inf",
        "autoscaler:\n  scale_down_gpu_utilization_threshold: .inf\n",
        2,
        "autoscaler.scale_down_gpu_utilization_threshold",
        True,
    ),
    ("autoscaler-expander", "autoscaler:\n  expander: cheapest\n", 2, "autoscaler.expander", True),
    (
        "autoscaler-duration-inf",
        "autoscaler:\n  scale_down_unneeded_time: 1e400\n",
        2,
        "autoscaler.scale_down_unneeded_time",
        True,
    ),
    ("autoscaler-scalar", "autoscaler: 10s\n", 1, "autoscaler", True),
    # timing
    ("timing-list", "timing: [1s]\n", 1, "timing", True),
    ("timing-negative", "timing:\n  hpa_reconcile: -5ms\n", 2, "timing.hpa_reconcile", True),
    ("timing-word", "timing:\n  pod_start: soon\n", 2, "timing.pod_start", True),
    ("timing-bool", "timing:\n  keda_poll: true\n", 2, "timing.keda_poll", True),
    ("timing-spread-above-one", "timing:\n  spread: 2\n", 2, "timing.spread", True),
    ("timing-spread-negative", "timing:\n  spread: -0.5\n", 2, "timing.spread", True),
    ("timing-unknown-key", "timing:\n  hpa_reconcil: 5ms\n", 2, "hpa_reconcil", True),
    # hpa
    ("hpa-sync-zero", "hpa:\n  sync_period: 0s\n", 2, "hpa.sync_period", True),
    ("hpa-sync-bool", "hpa:\n  sync_period: true\n", 2, "hpa.sync_period", True),
    ("hpa-tolerance-negative", "hpa:\n  tolerance: -0.1\n", 2, "hpa.tolerance", True),
    ("hpa-tolerance-word", "hpa:\n  tolerance: small\n", 2, "hpa.tolerance", True),
    (
        "hpa-stabilization-negative",
        "hpa:\n  downscale_stabilization: -1m\n",
        2,
        "hpa.downscale_stabilization",
        True,
    ),
    ("hpa-unknown-key", "hpa:\n  sync_perod: 15s\n", 2, "sync_perod", True),
    # prometheus
    (
        "prometheus-scrape-zero",
        "prometheus:\n  scrape_interval: 0s\n",
        2,
        "prometheus.scrape_interval",
        True,
    ),
    (
        "prometheus-lookback-zero",
        "prometheus:\n  lookback_delta: 0s\n",
        2,
        "prometheus.lookback_delta",
        True,
    ),
    (
        "prometheus-evaluation-zero",
        "prometheus:\n  evaluation_interval: 0ms\n",
        2,
        "prometheus.evaluation_interval",
        True,
    ),
    (
        "prometheus-scrape-mapping",
        "prometheus:\n  scrape_interval: {s: 30}\n",
        2,
        "prometheus.scrape_interval",
        True,
    ),
    ("prometheus-release-name", "prometheus:\n  release: Prom_1\n", 2, "prometheus.release", True),
    (
        "prometheus-namespace-long",
        f"prometheus:\n  namespace: {'a' * 64}\n",
        2,
        "prometheus.namespace",
        True,
    ),
    ("prometheus-version", "prometheus:\n  version: '4'\n", 2, "prometheus.version", True),
    (
        "prometheus-chart-number",
        "prometheus:\n  chart_version: 88.5\n",
        2,
        "prometheus.chart_version",
        True,
    ),
    (
        "prometheus-chart-words",
        "prometheus:\n  chart_version: newest please\n",
        2,
        "prometheus.chart_version",
        True,
    ),
    (
        "prometheus-selects-word",
        "prometheus:\n  selects_all_servicemonitors: sometimes\n",
        2,
        "prometheus.selects_all_servicemonitors",
        True,
    ),
    # keda
    ("keda-namespace-empty", "keda:\n  namespace: ''\n", 2, "keda.namespace", True),
    ("keda-release-long", f"keda:\n  release: {'k' * 54}\n", 2, "keda.release", True),
    ("keda-chart-list", "keda:\n  chart_version: [2.20.x]\n", 2, "keda.chart_version", True),
    ("keda-unknown-key", "keda:\n  namspace: keda\n", 2, "namspace", True),
    # workloads
    ("workloads-list", "workloads: [web]\n", 1, "workloads", True),
    ("workload-scalar", "workloads:\n  web: fast\n", 2, "workloads.web", True),
    (
        "workload-concurrency-zero",
        "workloads:\n  web:\n    concurrency: 0\n",
        3,
        "workloads.web.concurrency",
        True,
    ),
    (
        "workload-concurrency-huge-int",
        f"workloads:\n  web:\n    concurrency: {_HUGE}\n",
        3,
        "workloads.web.concurrency",
        True,
    ),
    (
        "workload-concurrency-inf",
        "workloads:\n  web:\n    concurrency: 1e400\n",
        3,
        "workloads.web.concurrency",
        True,
    ),
    (
        "workload-service-time-zero",
        "workloads:\n  web:\n    service_time: 0s\n",
        3,
        "workloads.web.service_time",
        True,
    ),
    (
        "workload-rps-negative",
        "workloads:\n  web:\n    requests_per_second: -3\n",
        3,
        "workloads.web.requests_per_second",
        True,
    ),
    (
        "workload-both-capacities",
        "workloads:\n  web: {service_time: 1s, requests_per_second: 2}\n",
        2,
        "workloads.web",
        True,
    ),
    (
        "workload-one-token-rate",
        "workloads:\n  web: {prefill_tokens_per_second: 100}\n",
        2,
        "workloads.web",
        True,
    ),
    (
        "workload-timeout-zero",
        "workloads:\n  web:\n    request_timeout: 0s\n",
        3,
        "workloads.web.request_timeout",
        True,
    ),
    (
        "workload-latency-zero",
        "workloads:\n  web:\n    latency_target: 0s\n",
        3,
        "workloads.web.latency_target",
        True,
    ),
    (
        "workload-startup-negative",
        "workloads:\n  web:\n    startup_time: -10s\n",
        3,
        "workloads.web.startup_time",
        True,
    ),
    (
        "workload-pull-list",
        "workloads:\n  web:\n    image_pull_time: [20s]\n",
        3,
        "workloads.web.image_pull_time",
        True,
    ),
    ("workload-unknown-key", "workloads:\n  web:\n    startup: 10s\n", 3, "startup", True),
    # catalogue
    ("catalogue-scalar", "catalogue: big\n", 1, "catalogue", True),
    (
        "catalogue-no-vcpus",
        "catalogue:\n  - {slug: x, memory: 8Gi, price_per_hour: 1}\n",
        2,
        "vcpus",
        True,
    ),
    (
        "catalogue-price-inf",
        "catalogue:\n  - slug: x\n    vcpus: 4\n    memory: 8Gi\n    price_per_hour: .inf\n",
        5,
        "catalogue[0].price_per_hour",
        True,
    ),
    (
        "catalogue-gpus-negative",
        "catalogue:\n  - slug: x\n    vcpus: 4\n    memory: 8Gi\n    price_per_hour: 1\n    gpus: -1\n",
        6,
        "catalogue[0].gpus",
        True,
    ),
    (
        "catalogue-vendor",
        "catalogue:\n  - slug: x\n    vcpus: 4\n    memory: 8Gi\n    price_per_hour: 1\n    gpu_vendor: [amd]\n",
        6,
        "catalogue[0].gpu_vendor",
        True,
    ),
    # tune (a top-level section): each range at its own key
    (
        "tune-under-workload",
        "workloads:\n  web:\n    tune: {max_replicas: [1, 4]}\n",
        3,
        "unknown key 'tune' in workloads.web",
        True,
    ),
    (
        "tune-low-above-high",
        "tune:\n  max_replicas: [5, 2]\n",
        2,
        "tune.max_replicas: low 5 is above high 2 (fix: write [2, 5])",
        True,
    ),
    (
        "tune-min-above-max",
        "tune:\n  min_replicas: [3, 4]\n  max_replicas: [1, 2]\n",
        2,
        "tune.min_replicas: low 3 is above tune.max_replicas high 2",
        True,
    ),
    (
        "tune-threshold-zero",
        "tune:\n  threshold: [0, 10]\n",
        2,
        "tune.threshold[0]: must be greater than 0",
        True,
    ),
    ("tune-max-replicas-zero", "tune:\n  max_replicas: [0, 4]\n", 2, "tune.max_replicas[0]", True),
    (
        "tune-period-over-30m",
        "tune:\n  scale_up_period: [15s, 1h]\n",
        2,
        "tune.scale_up_period[1]: must be 30m or shorter",
        True,
    ),
    (
        "tune-fractional-seconds",
        "tune:\n  cooldown: [30s, 90.5s]\n",
        2,
        "tune.cooldown[1]: must be whole seconds",
        True,
    ),
    (
        "tune-keep-unknown",
        "tune:\n  keep: [bogus]\n",
        2,
        "tune.keep[0]: 'bogus' is not one of its values",
        True,
    ),
    ("tune-keep-misspelt", "tune:\n  keep: [treshold]\n", 2, "did you mean threshold?", True),
    # DigitalOcean needs a pool that starts with a node (profile check only, see above)
    (
        "pools-all-from-zero",
        "node_pools:\n  - {name: gpu, size: gpu-mi300x1-192gb, max_nodes: 8}\n  - {name: cpu, size: s-4vcpu-8gb, count: 0}\n",
        1,
        "every node pool (gpu, cpu) starts with 0",
        False,
    ),
]


def _profile_check(name: str, text: str, line: int, key: str) -> Bad:
    return Bad(
        id=f"profile-check-{name}",
        argv=("profile", "check", "gpuscale.yaml"),
        files={"gpuscale.yaml": text},
        names=(f"gpuscale.yaml:{line}", key),
    )


def _simulate(name: str, text: str, line: int, key: str) -> Bad:
    return Bad(
        id=f"profile-simulate-{name}",
        argv=("simulate", "m.yaml", "--profile", "gpuscale.yaml", "--scenario", "s.yaml"),
        files={"gpuscale.yaml": text, "m.yaml": _MANIFESTS},
        names=(f"gpuscale.yaml:{line}", key),
    )


def _lint(name: str, text: str, line: int, key: str) -> Bad:
    return Bad(
        id=f"profile-lint-{name}",
        argv=("lint", "m.yaml", "--profile", "gpuscale.yaml"),
        files={"gpuscale.yaml": text, "m.yaml": _MANIFESTS},
        names=(f"gpuscale.yaml:{line}", key),
    )


def _found_beside(name: str, text: str, line: int, key: str) -> Bad:
    """The same profile found by the rule (beside the manifests, no --profile)."""
    return Bad(
        id=f"profile-lint-found-{name}",
        argv=("lint", "DIR/manifests"),
        files={"DIR/gpuscale.yaml": text, "DIR/manifests/m.yaml": _MANIFESTS},
        names=(f"DIR/gpuscale.yaml:{line}", key),
    )


CASES: list[Bad] = [_profile_check(*case[:4]) for case in _PROFILES]
CASES += [_simulate(*case[:4]) for case in _PROFILES if case[4]]
CASES += [_lint(*case[:4]) for case in _PROFILES if case[4]]
CASES += [
    _found_beside(*case[:4])
    for case in _PROFILES
    if case[0] in ("prometheus-lookback-zero", "hpa-sync-zero", "pool-gpu-list", "top-list")
]
CASES += [
    Bad(
        id="profile-cluster-create-all-pools-from-zero",
        argv=("cluster", "create", "--profile", "gpuscale.yaml", "--dry-run"),
        files={"gpuscale.yaml": _PROFILES[-1][1]},
        names=("gpuscale.yaml:1", "every node pool (gpu, cpu) starts with 0", "count >= 1"),
    ),
    Bad(
        id="profile-install-dry-run-zero-scrape-interval",
        argv=("install", "--dry-run"),
        files={"gpuscale.yaml": "prometheus:\n  scrape_interval: 0s\n"},
        names=("gpuscale.yaml:2", "prometheus.scrape_interval"),
    ),
]
