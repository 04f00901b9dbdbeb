"""What a simulation is given: workloads, node pools and the timings of the loops around
them, as frozen dataclasses. Pure; no YAML here.

These are the simulator's own input types. Adapters from Kubernetes manifests
(``gpuscale.manifests``) and the profile (``gpuscale.profile``, ``gpuscale.yaml``) build
them; tests and benchmarks build them directly. Every field a user sets has a docstring
and a default taken from the upstream component it describes. Durations are seconds,
CPU in cores, memory in bytes, GPUs and pods in counts. Bad values fail at construction
with :class:`ValueError` naming the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.controllers.cluster_autoscaler import GPU_RESOURCE_NAMES, AutoscalingOptions
from gpuscale.controllers.hpa import HPAControllerOptions
from gpuscale.controllers.kubelet import Readiness
from gpuscale.controllers.scheduler import PodRequirements, quantities
from gpuscale.kube import NodeSelectorTerm, Taint, Toleration
from gpuscale.sim.provider import PROVIDERS
from gpuscale.sim.timing import Latencies

if TYPE_CHECKING:
    from gpuscale.serving import EngineConfig, StepCost

__all__ = [
    "DEFAULT_LATENCY_BUCKETS",
    "ControlPlaneSpec",
    "EngineCapacity",
    "RequestCapacity",
    "RequestMetricNames",
    "ScrapeSpec",
    "SimPool",
    "SimWorkload",
    "SimulationSpec",
]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DEFAULT_LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
"""Latency histogram bucket bounds (seconds) for request workloads; ``+Inf`` is implied."""


def _seconds(owner: str, name: str, value: float, *, positive: bool = False) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value)):
        raise ValueError(f"{owner}.{name} must be a number of seconds, got {value!r}")
    if value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{owner}.{name} must be {bound} seconds, got {value!r}")


def _name(owner: str, value: str) -> None:
    if not _DNS_LABEL.match(value) or len(value) > 63:
        raise ValueError(
            f"{owner} name {value!r} must be a DNS label (lowercase letters, digits, '-')"
        )


@dataclass(frozen=True, slots=True)
class RequestCapacity:
    """How one replica serves requests: a FIFO queue in front of ``concurrency`` slots."""

    concurrency: int = 1
    """Requests one replica serves at the same time."""
    service_time_s: float | None = None
    """Seconds one request takes when the load has no token counts (rates, plain traces)."""
    prefill_tokens_per_s: float | None = None
    """Prompt tokens one request's prefill processes per second (LLM traces)."""
    decode_tokens_per_s: float | None = None
    """Output tokens one request generates per second (LLM traces)."""
    timeout_s: float = 60.0
    """A request that has not started within this many seconds of arriving times out."""
    latency_target_s: float | None = None
    """Requests answered slower than this count as late."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"capacity.concurrency must be >= 1, got {self.concurrency}")
        _seconds("capacity", "timeout_s", self.timeout_s, positive=True)
        if self.service_time_s is not None:
            _seconds("capacity", "service_time_s", self.service_time_s, positive=True)
        for name in ("prefill_tokens_per_s", "decode_tokens_per_s"):
            rate = getattr(self, name)
            if rate is not None and not (math.isfinite(rate) and rate > 0):
                raise ValueError(f"capacity.{name} must be > 0, got {rate!r}")
        if (self.prefill_tokens_per_s is None) != (self.decode_tokens_per_s is None):
            raise ValueError("capacity needs both prefill_tokens_per_s and decode_tokens_per_s")
        if self.service_time_s is None and self.prefill_tokens_per_s is None:
            raise ValueError("capacity needs service_time_s or token rates")
        if self.latency_target_s is not None:
            _seconds("capacity", "latency_target_s", self.latency_target_s, positive=True)

    @classmethod
    def from_rate(cls, requests_per_second: float, **kwargs: float) -> RequestCapacity:
        """One request at a time, each taking ``1 / requests_per_second`` seconds."""
        if not (math.isfinite(requests_per_second) and requests_per_second > 0):
            raise ValueError(f"requests per second must be > 0, got {requests_per_second!r}")
        return cls(concurrency=1, service_time_s=1.0 / requests_per_second, **kwargs)

    @property
    def uses_tokens(self) -> bool:
        """Whether service times come from token counts."""
        return self.prefill_tokens_per_s is not None


@dataclass(frozen=True, slots=True)
class EngineCapacity:
    """How one replica serves requests with ``serving.kind: vllm``: a
    :class:`gpuscale.serving.Engine` per Ready replica, run step by step in virtual time,
    exporting vLLM's metric families (``gpuscale.sim.serving``)."""

    config: EngineConfig
    """The engine's settings (``max_num_seqs``, token budget, KV blocks, block size)."""
    cost: StepCost
    """Seconds per engine step as a function of its work."""
    model_name: str
    """The ``model_name`` label of every vLLM series (vLLM's served model name)."""
    timeout_s: float = 60.0
    """A request unfinished this long after arriving is aborted (the client gave up)."""
    latency_target_s: float | None = None
    """Requests answered slower than this count as late."""

    def __post_init__(self) -> None:
        _seconds("capacity", "timeout_s", self.timeout_s, positive=True)
        if self.latency_target_s is not None:
            _seconds("capacity", "latency_target_s", self.latency_target_s, positive=True)
        if not self.model_name:
            raise ValueError("capacity.model_name must not be empty")

    @property
    def concurrency(self) -> int:
        """Most requests one replica runs at once (``max_num_seqs``)."""
        return self.config.max_num_seqs


@dataclass(frozen=True, slots=True)
class RequestMetricNames:
    """The series a request-serving replica exports (names and histogram buckets)."""

    in_flight: str = "gpuscale_requests_in_flight"
    """Gauge: requests being served now."""
    queued: str = "gpuscale_requests_queued"
    """Gauge: requests waiting in the replica's queue."""
    total: str = "gpuscale_requests_total"
    """Counter: requests answered."""
    latency: str = "gpuscale_request_duration_seconds"
    """Histogram (``_bucket``, ``_sum``, ``_count``): time from arrival to answer."""
    buckets: tuple[float, ...] = DEFAULT_LATENCY_BUCKETS
    """Histogram upper bounds in seconds, increasing; ``+Inf`` is added."""


@dataclass(frozen=True, slots=True)
class SimWorkload:
    """A Deployment: its pod template and how its pods behave."""

    name: str
    """Deployment name."""
    namespace: str = "default"
    """Namespace."""
    replicas: int = 1
    """``spec.replicas`` at the start."""
    requests: Mapping[str, float] = field(default_factory=dict)
    """Container resource requests (cores, bytes, GPUs)."""
    limits: Mapping[str, float] = field(default_factory=dict)
    """Container limits; a resource with a limit and no request requests its limit."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    """``spec.nodeSelector``."""
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    """Required node affinity terms (ORed), or None."""
    tolerations: tuple[Toleration, ...] = ()
    """``spec.tolerations``."""
    image: str = "app:latest"
    """Container image (a node pulls it once)."""
    image_pull_s: float = 0.0
    """Seconds to pull the image onto a node that does not have it."""
    startup_s: float = 0.0
    """Seconds from container start until the program serves (and, with ``readiness``
    ``serving``, is Ready)."""
    readiness: Readiness = "serving"
    """How a pod turns Ready: ``serving`` (when the program serves, an ideal probe),
    ``started`` (no readiness probe: as soon as the container starts) or the container's
    :class:`~gpuscale.controllers.kubelet.ReadinessProbe`."""
    termination_grace_s: float = 30.0
    """``terminationGracePeriodSeconds``."""
    shutdown_s: float = 0.0
    """Seconds the process needs to exit after SIGTERM (beyond draining its requests)."""
    min_ready_s: float = 0.0
    """``minReadySeconds``: Ready this long before a pod counts as available."""
    capacity: RequestCapacity | EngineCapacity | None = None
    """How a replica serves requests (a queue, or a vLLM engine); None for workloads that
    only export gauges."""
    gauges: tuple[str, ...] = ()
    """Gauges each pod exports, starting at 0 in every new pod (e.g. ``my_custom_gauge``)."""
    metric_names: RequestMetricNames = field(default_factory=RequestMetricNames)
    """Names of the request series, for request workloads."""
    container: str = "app"
    """Container name (the ``container`` label of scraped series)."""
    metrics_port: int = 8080
    """Port serving ``/metrics``."""
    metrics_port_name: str = "metrics"
    """Name of that port in the Service (the ``endpoint`` label)."""
    service: str | None = None
    """Service in front of the pods; defaults to the Deployment's name."""
    scrape_interval_s: float | None = None
    """The ServiceMonitor endpoint's ``interval``; None uses Prometheus' own."""
    scraped: bool = True
    """Whether a ServiceMonitor makes Prometheus scrape the pods at all."""
    honor_labels: bool = False
    """The ServiceMonitor endpoint's ``honorLabels``."""
    metrics_path: str = "/metrics"
    """The ServiceMonitor endpoint's ``path``."""
    job: str | None = None
    """The ``job`` label of the scraped series; None: the Service's name (prometheus-operator's
    default without ``jobLabel``)."""
    local_storage: bool = False
    """The pod mounts an emptyDir or hostPath volume (blocks cluster-autoscaler drain)."""

    def __post_init__(self) -> None:
        _name("workload", self.name)
        _name("namespace", self.namespace)
        if self.replicas < 0:
            raise ValueError(f"workload {self.name}: replicas must be >= 0")
        for attr in (
            "image_pull_s",
            "startup_s",
            "termination_grace_s",
            "shutdown_s",
            "min_ready_s",
        ):
            _seconds(f"workload {self.name}", attr, getattr(self, attr))
        if self.scrape_interval_s is not None:
            _seconds(
                f"workload {self.name}", "scrape_interval_s", self.scrape_interval_s, positive=True
            )
        for resource in set(self.requests) & set(self.limits):
            if "/" in resource and self.requests[resource] != self.limits[resource]:
                raise ValueError(
                    f"workload {self.name}: {resource} request must equal its limit "
                    "(extended resources cannot be overcommitted)"
                )
        quantities({**self.limits, **self.requests})

    @property
    def key(self) -> str:
        """``namespace/name``, as the timeline names workloads."""
        return f"{self.namespace}/{self.name}"

    @property
    def service_name(self) -> str:
        """The Service name (the ``job`` label of its scraped series)."""
        return self.service or self.name

    def pod_requirements(self) -> PodRequirements:
        """The scheduler's view of one pod of this workload (requests default to limits)."""
        effective = quantities({**self.limits, **self.requests})
        # extended resources (GPUs) first: they are the ones that decide most fits
        ordered = dict(sorted(effective.items(), key=lambda item: "/" not in item[0]))
        return PodRequirements(
            requests=ordered,
            node_selector=dict(self.node_selector),
            required_terms=self.node_affinity,
            tolerations=self.tolerations,
        )

    def gpus_per_pod(self, gpu_resource_names: tuple[str, ...] = GPU_RESOURCE_NAMES) -> int:
        """GPUs one pod requests (0 for CPU workloads)."""
        effective = {**self.limits, **self.requests}
        return int(sum(effective.get(name, 0) for name in gpu_resource_names))


@dataclass(frozen=True, slots=True)
class SimPool:
    """A node pool (node group): what its nodes offer, cost and how fast they come."""

    name: str
    """Pool name."""
    allocatable: Mapping[str, float]
    """Per node: ``cpu`` cores, ``memory`` bytes, ``pods``, GPUs (``amd.com/gpu``...)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels every node carries (e.g. ``doks.digitalocean.com/gpu-brand: amd``)."""
    taints: tuple[Taint, ...] = ()
    """Taints every node carries (e.g. ``amd.com/gpu:NoSchedule``)."""
    min_nodes: int = 0
    """Autoscaler minimum."""
    max_nodes: int = 1
    """Autoscaler maximum."""
    initial_nodes: int | None = None
    """Ready nodes at the start; None means ``min_nodes``."""
    price_per_hour: float = 0.0
    """Dollars per node-hour."""
    provisioning_s: float = 300.0
    """Seconds from the scale-up decision to a Ready node with GPUs allocatable."""
    deletion_s: float = 0.0
    """Seconds from the end of a node's drain until it is gone (and stops costing)."""
    gpu_model: str = ""
    """GPU model for exporter labels (e.g. ``MI300X``)."""
    template_has_gpus: bool = True
    """Whether the autoscaler's template node for an empty pool lists its GPUs.

    The upstream DigitalOcean provider's template fills only cpu, memory and pods, so a GPU
    pod does not fit an empty GPU pool and scale-from-zero fails."""

    def __post_init__(self) -> None:
        _name("pool", self.name)
        if not 0 <= self.min_nodes <= self.max_nodes:
            raise ValueError(f"pool {self.name}: need 0 <= min_nodes <= max_nodes")
        if self.initial_nodes is not None and not 0 <= self.initial_nodes <= self.max_nodes:
            raise ValueError(f"pool {self.name}: initial_nodes must be within [0, max_nodes]")
        if not (math.isfinite(self.price_per_hour) and self.price_per_hour >= 0):
            raise ValueError(f"pool {self.name}: price_per_hour must be >= 0")
        _seconds(f"pool {self.name}", "provisioning_s", self.provisioning_s)
        _seconds(f"pool {self.name}", "deletion_s", self.deletion_s)
        quantities(self.allocatable)

    @property
    def start_nodes(self) -> int:
        """Nodes Ready at time 0."""
        return self.min_nodes if self.initial_nodes is None else self.initial_nodes

    def gpu_resource(self, gpu_resource_names: tuple[str, ...] = GPU_RESOURCE_NAMES) -> str | None:
        """The GPU resource its nodes offer, or None for CPU pools."""
        for name in gpu_resource_names:
            if self.allocatable.get(name, 0) > 0:
                return name
        return None

    @property
    def gpus_per_node(self) -> int:
        """GPUs per node (0 for CPU pools)."""
        resource = self.gpu_resource()
        return 0 if resource is None else int(self.allocatable[resource])


@dataclass(frozen=True, slots=True)
class ScrapeSpec:
    """How Prometheus scrapes (``scrape/manager.go``, ``scrape/scrape.go``, ``target.go``)."""

    scrape_interval_s: float = 30.0
    """Default scrape interval (kube-prometheus-stack's Prometheus: 30 s)."""
    offset_seed: int = 0
    """Prometheus' offset seed (a hash of its external labels and hostname); shifts every
    target's scrape phase."""
    discovery_refresh_s: float = 5.0
    """The scrape manager applies target changes on this tick (``reloadCh``, 5 s)."""
    ksm_scrape_interval_s: float | None = None
    """kube-state-metrics' ServiceMonitor interval; None uses ``scrape_interval_s``."""
    exporter_scrape_interval_s: float | None = None
    """GPU exporters' ServiceMonitor interval; None uses ``scrape_interval_s``."""
    node_label_allowlist: tuple[str, ...] = ()
    """kube-state-metrics ``--metric-labels-allowlist`` for nodes (empty: no node labels)."""
    gpu_util_window_s: float = 1.0
    """Window over which a GPU exporter's utilization is averaged (the driver's sample period)."""
    gpu_exporters: bool = True
    """Run the AMD device metrics exporter / NVIDIA DCGM exporter on GPU nodes."""

    def __post_init__(self) -> None:
        _seconds("prometheus", "scrape_interval_s", self.scrape_interval_s, positive=True)
        _seconds("prometheus", "discovery_refresh_s", self.discovery_refresh_s)
        _seconds("prometheus", "gpu_util_window_s", self.gpu_util_window_s, positive=True)
        for name in ("ksm_scrape_interval_s", "exporter_scrape_interval_s"):
            value = getattr(self, name)
            if value is not None:
                _seconds("prometheus", name, value, positive=True)


@dataclass(frozen=True, slots=True)
class ControlPlaneSpec:
    """Kubernetes timings around the controllers."""

    endpoint_propagation_s: float = 1.0
    """Seconds from a pod turning Ready (or being deleted) until Services route to it (or
    stop): EndpointSlice update plus kube-proxy's sync."""
    hpa: HPAControllerOptions = field(default_factory=HPAControllerOptions)
    """The HPA controller's flags (the profile's ``hpa`` section, mapped in
    :func:`gpuscale.sim.inputs.hpa_options`); every simulated HPA runs with them."""
    load_balancing: str = "random"
    """How a Service spreads requests over ready pods: ``random`` per connection
    (kube-proxy iptables mode) or ``round-robin`` (IPVS ``rr``)."""

    def __post_init__(self) -> None:
        _seconds("control_plane", "endpoint_propagation_s", self.endpoint_propagation_s)
        _seconds("control_plane", "hpa.sync_period_s", self.hpa.sync_period_s, positive=True)
        if self.load_balancing not in ("random", "round-robin"):
            raise ValueError("control_plane.load_balancing must be random or round-robin")


@dataclass(frozen=True, slots=True)
class SimulationSpec:
    """Everything the world is made of."""

    workloads: tuple[SimWorkload, ...]
    """The Deployments."""
    pools: tuple[SimPool, ...]
    """The node pools."""
    autoscaler: AutoscalingOptions = field(default_factory=AutoscalingOptions)
    """The cluster autoscaler model's options, as the model takes them (the profile's
    ``autoscaler`` section maps onto them in :func:`gpuscale.sim.inputs.autoscaling_options`)."""
    autoscaler_enabled: bool = True
    """Run the cluster autoscaler at all."""
    prometheus: ScrapeSpec = field(default_factory=ScrapeSpec)
    control_plane: ControlPlaneSpec = field(default_factory=ControlPlaneSpec)
    provider: str = "doks"
    """The profile's ``cluster.provider``: what it writes on every node
    (``gpuscale.sim.provider``)."""
    timing: Latencies = field(default_factory=Latencies)
    """The loops' latencies (``gpuscale.sim.timing``); the default is the exact grid,
    a run built from a profile takes the profile's ``timing`` section."""

    def __post_init__(self) -> None:
        if not self.pools:
            raise ValueError("a simulation needs at least one node pool")
        if self.provider not in PROVIDERS:
            raise ValueError(f"unknown provider {self.provider!r}; known: {sorted(PROVIDERS)}")
        keys = [w.key for w in self.workloads]
        if len(set(keys)) != len(keys):
            raise ValueError("workload names must be unique per namespace")
        names = [p.name for p in self.pools]
        if len(set(names)) != len(names):
            raise ValueError("pool names must be unique")

    def workload(self, name: str) -> SimWorkload:
        """The workload called ``name`` (or ``namespace/name``)."""
        for w in self.workloads:
            if name in (w.name, w.key):
                return w
        raise KeyError(name)
