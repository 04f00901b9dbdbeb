"""What Prometheus scrapes in the simulated cluster: kube-state-metrics, each pod's
metrics endpoint, and each GPU node's exporter. Pure.

Each target is a :class:`~gpuscale.sim.scrape.ScrapeTarget` whose collector reads the
cluster's objects (``gpuscale.sim.cluster``) at the scrape's instant. The GPU exporters
are data (:data:`GPU_EXPORTERS`): the port, job, metric and per-GPU label set of AMD's
device metrics exporter (``ROCm/device-metrics-exporter``, ``gpu_gfx_activity`` on
:5000) and NVIDIA's DCGM exporter (``NVIDIA/dcgm-exporter``, ``DCGM_FI_DEV_GPU_UTIL`` on
:9400), each GPU's series carrying the pod that holds it as both exporters do.
"""

from __future__ import annotations

import functools
import itertools
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.controllers import kube_state_metrics as ksm
from gpuscale.sim.cluster import Node, Pod
from gpuscale.sim.scrape import ScrapeTarget, SeriesKey

if TYPE_CHECKING:
    from gpuscale.sim.serving import EngineRouter
    from gpuscale.sim.world import World

__all__ = [
    "EXPORTER_NAMES",
    "GPU_EXPORTERS",
    "GpuExporter",
    "KubeStateMetrics",
    "exporter_target",
    "pod_target",
]


@dataclass(frozen=True, slots=True)
class GpuExporter:
    """A GPU vendor's metrics exporter, one per GPU node."""

    job: str
    port: int
    metric: str
    """The utilisation gauge, in percent."""
    gpu_labels: tuple[tuple[str, str], ...]
    """Each GPU's labels after ``__name__``: name and a template over ``gpu`` (index),
    ``node`` (the node's number), ``uuid``, ``model`` and ``host``."""


GPU_EXPORTERS: dict[str, GpuExporter] = {
    "amd.com/gpu": GpuExporter(
        "amd-device-metrics-exporter",
        5000,
        "gpu_gfx_activity",
        (
            ("gpu_id", "{gpu}"),
            ("serial_number", "{node:04d}{gpu:04d}"),
            ("card_model", "{model}"),
            ("hostname", "{host}"),
        ),
    ),
    "nvidia.com/gpu": GpuExporter(
        "nvidia-dcgm-exporter",
        9400,
        "DCGM_FI_DEV_GPU_UTIL",
        (
            ("gpu", "{gpu}"),
            ("UUID", "GPU-{uuid}"),
            ("device", "nvidia{gpu}"),
            ("modelName", "{model}"),
            ("Hostname", "{host}"),
        ),
    ),
}
"""The exporters by the GPU resource name their nodes offer."""

EXPORTER_NAMES = frozenset(e.metric for e in GPU_EXPORTERS.values())


def _name_of(key: SeriesKey) -> str:
    return next((value for label, value in key if label == "__name__"), "")


def _format_le(bound: float) -> str:
    return "+Inf" if math.isinf(bound) else repr(float(bound))


class KubeStateMetrics:
    """The kube-state-metrics target: Deployments, pods and nodes as they are at its scrape.

    Series are cached per object state, and the whole answer is reused while nothing the
    timeline sees has changed (every change kube-state-metrics reports is one).
    """

    __slots__ = ("_cache", "_last", "_seen", "_world")

    def __init__(self, world: World) -> None:
        self._world = world
        self._cache: dict[object, list[tuple[SeriesKey, float]]] = {}
        self._last: tuple[tuple[object, ...], list[SeriesKey], list[float]] | None = None
        self._seen = -1
        prometheus = world.spec.prometheus
        interval = prometheus.ksm_scrape_interval_s or prometheus.scrape_interval_s
        labels = {
            "job": "kube-state-metrics",
            "instance": "10.244.0.5:8080",
            "__address__": "10.244.0.5:8080",
            "__metrics_path__": "/metrics",
            "__scheme__": "http",
        }
        target = ScrapeTarget(
            "kube-state-metrics",
            labels,
            "http://10.244.0.5:8080/metrics",
            interval,
            self.collect,
            honor_labels=True,
            seed=prometheus.offset_seed,
            names=ksm.FAMILIES,
        )
        world.scrape.add(target, immediate=True)

    def _cached(
        self, key: object, build: Callable[[], list[ksm.Series]]
    ) -> list[tuple[SeriesKey, float]]:
        hit = self._cache.get(key)
        if hit is None:
            hit = [((("__name__", name), *labels), value) for name, labels, value in build()]
            self._cache[key] = hit
        return hit

    def collect(self, now: float) -> tuple[Sequence[SeriesKey], Sequence[float]]:
        world = self._world
        changes = world.recorder.changes
        last = self._last
        if last is not None and self._seen == changes:
            return last[1], last[2]  # nothing changed since the last scrape
        self._seen = changes
        allow = world.spec.prometheus.node_label_allowlist
        cache = self._cache
        parts: list[tuple[object, ...]] = []
        for workload in world.workloads.values():
            spec = workload.spec
            active = workload.active()
            ready = sum(1 for p in active if p.state == "Ready")
            available = sum(1 for p in active if p.state == "Ready" and p.available)
            key: tuple[object, ...] = (
                spec.key,
                workload.spec_replicas,
                len(active),
                ready,
                available,
            )
            parts.append(key)
            if key not in cache:
                status = ksm.DeploymentStatus(
                    spec.namespace,
                    spec.name,
                    workload.spec_replicas,
                    len(active),
                    ready,
                    available,
                    len(active),
                )
                self._cached(key, functools.partial(ksm.deployment_series, status))
            for pod in workload.pods.values():
                key = (pod.uid, pod.running, pod.state, pod.node is not None)
                parts.append(key)
                if key not in cache:
                    node = pod.node
                    info = ksm.PodInfo(
                        spec.namespace,
                        pod.name,
                        pod.uid,
                        "Running" if pod.running else "Pending",
                        pod.state == "Ready",
                        node is not None,
                        node.name if node is not None else "",
                        node.ip if node is not None else "",
                        pod.ip,
                        "ReplicaSet",
                        workload.owner.rsplit("/", 1)[1],
                    )
                    self._cached(key, functools.partial(ksm.pod_series, info))
        provider = world.provider
        for node in world.nodes:
            if node.state not in ("ready", "deleting"):
                continue
            key = ("node", node.name)
            parts.append(key)
            info_n = ksm.NodeInfo(node.name, node.labels, node.ip, provider.provider_id(node.index))
            self._cached(key, functools.partial(ksm.node_series, info_n, allow))
        signature = tuple(parts)
        last = self._last
        if last is not None and last[0] == signature:
            return last[1], last[2]
        keys: list[SeriesKey] = []
        values: list[float] = []
        for part in parts:
            for series_key, value in cache[part]:
                keys.append(series_key)
                values.append(value)
        self._last = (signature, keys, values)
        if len(cache) > 50_000:
            cache.clear()
        return keys, values


def pod_target(world: World, pod: Pod) -> ScrapeTarget:
    """The pod's metrics endpoint: its gauges, and a request server's counters and
    latency histogram."""
    spec = pod.workload.spec
    address = f"{pod.ip}:{spec.metrics_port}"
    labels = {
        "job": spec.job or spec.service_name,
        "instance": address,
        "namespace": spec.namespace,
        "pod": pod.name,
        "service": spec.service_name,
        "endpoint": spec.metrics_port_name,
        "container": spec.container,
        "__address__": address,
        "__metrics_path__": spec.metrics_path,
        "__scheme__": "http",
    }
    interval = spec.scrape_interval_s or world.spec.prometheus.scrape_interval_s
    names = spec.metric_names
    router = pod.workload.router
    gauge_names = [g for g in pod.gauges if g in spec.gauges]
    keys: list[SeriesKey] = [(("__name__", g),) for g in gauge_names]
    if router is not None:
        # A workload with requests: their modules import numpy, which a run of gauge
        # steps alone does not load (collect() reads ReplicaServer only with a router).
        from gpuscale.sim.requests import ReplicaServer  # noqa: PLC0415
        from gpuscale.sim.serving import EngineRouter  # noqa: PLC0415

        if isinstance(router, EngineRouter):
            return _engine_target(world, pod, router, labels, keys, gauge_names)
        keys += [
            (("__name__", names.in_flight),),
            (("__name__", names.queued),),
            (("__name__", names.total),),
        ]
        keys += [
            (("__name__", f"{names.latency}_bucket"), ("le", _format_le(b)))
            for b in (*names.buckets, math.inf)
        ]
        keys += [
            (("__name__", f"{names.latency}_sum"),),
            (("__name__", f"{names.latency}_count"),),
        ]
    fixed_keys = tuple(keys)
    keep = world.scrape.keep
    latencies = keep is None or not keep.isdisjoint(
        {f"{names.latency}_bucket", f"{names.latency}_sum", f"{names.latency}_count"}
    )

    def collect(now: float) -> tuple[Sequence[SeriesKey], Sequence[float]] | None:
        if now >= pod.gone_at or pod.state == "Gone" or now < pod.serving_at:
            return None
        gauges = pod.gauges
        values = [gauges[g] for g in gauge_names]
        server = pod.server
        if router is not None:
            if not isinstance(server, ReplicaServer):
                return None
            router.advance(now)
            if now >= server.gone_at:
                return None
            in_flight, queued = server.snapshot(now, router.bounds, latencies=latencies)
            completed = float(server.completed)
            values += (float(in_flight), float(queued), completed)
            values += map(float, itertools.accumulate(server.histogram))
            values += (server.latency_sum, completed)
        return fixed_keys, values

    return ScrapeTarget(
        f"pod/{pod.key}",
        labels,
        f"http://{address}{spec.metrics_path}",
        interval,
        collect,
        honor_labels=spec.honor_labels,
        seed=world.spec.prometheus.offset_seed,
        names={_name_of(key) for key in fixed_keys},
    )


def _engine_target(  # noqa: PLR0917 - pod_target's pieces, handed on
    world: World,
    pod: Pod,
    router: EngineRouter,
    labels: dict[str, str],
    gauge_keys: list[SeriesKey],
    gauge_names: list[str],
) -> ScrapeTarget:
    """A ``vllm`` replica's endpoint: the pod's gauges and vLLM's families
    (``gpuscale.sim.serving.series_keys``)."""
    from gpuscale.sim.serving import EngineServer, reads_histograms, series_keys  # noqa: PLC0415

    spec = pod.workload.spec
    fixed_keys = (*gauge_keys, *series_keys(router.capacity.model_name))
    histograms = reads_histograms(world.scrape.keep)

    def collect(now: float) -> tuple[Sequence[SeriesKey], Sequence[float]] | None:
        if now >= pod.gone_at or pod.state == "Gone" or now < pod.serving_at:
            return None
        server = pod.server
        if not isinstance(server, EngineServer):
            return None
        router.advance(now)
        if now >= server.gone_at:
            return None
        gauges = pod.gauges
        values = [gauges[g] for g in gauge_names]
        values += server.values(histograms=histograms)
        return fixed_keys, values

    return ScrapeTarget(
        f"pod/{pod.key}",
        labels,
        labels["__scheme__"] + "://" + labels["__address__"] + spec.metrics_path,
        spec.scrape_interval_s or world.spec.prometheus.scrape_interval_s,
        collect,
        honor_labels=spec.honor_labels,
        seed=world.spec.prometheus.offset_seed,
        names={_name_of(key) for key in fixed_keys},
    )


def exporter_target(world: World, node: Node) -> ScrapeTarget:
    """The GPU node's exporter: one utilisation series per GPU, labelled with its holder.

    A resource other than AMD's is served by NVIDIA's exporter, as before the table.
    """
    exporter = GPU_EXPORTERS.get(node.gpu_resource or "", GPU_EXPORTERS["nvidia.com/gpu"])
    address = f"{node.ip}:{exporter.port}"
    labels = {
        "job": exporter.job,
        "instance": address,
        "__address__": address,
        "__metrics_path__": "/metrics",
        "__scheme__": "http",
    }
    prometheus = world.spec.prometheus
    interval = prometheus.exporter_scrape_interval_s or prometheus.scrape_interval_s
    window = prometheus.gpu_util_window_s
    model = node.pool.gpu_model

    def base(i: int) -> list[tuple[str, str]]:
        fields = {
            "gpu": i,
            "node": node.index,
            "uuid": uuid.UUID(int=(node.index << 16) + i),
            "model": model,
            "host": node.name,
        }
        return [
            ("__name__", exporter.metric),
            *((name, template.format(**fields)) for name, template in exporter.gpu_labels),
        ]

    key_cache: dict[tuple[str, ...], tuple[SeriesKey, ...]] = {}

    def collect(now: float) -> tuple[Sequence[SeriesKey], Sequence[float]] | None:
        if node.state == "gone":
            return None
        holders = tuple("" if h is None else h.name for h in node.gpu_slots)
        keys = key_cache.get(holders)
        if keys is None:
            built: list[SeriesKey] = []
            for i, holder in enumerate(node.gpu_slots):
                labels_i = base(i)
                if holder is not None:
                    spec = holder.workload.spec
                    labels_i += [
                        ("pod", holder.name),
                        ("namespace", spec.namespace),
                        ("container", spec.container),
                    ]
                built.append(tuple(labels_i))
            keys = tuple(built)
            key_cache.clear()
            key_cache[holders] = keys
        values: list[float] = []
        for holder in node.gpu_slots:
            util = 0.0
            if holder is not None:
                router = holder.workload.router
                if router is not None and holder.server is not None:
                    router.advance(now)
                    util = 100.0 * holder.server.utilisation(now, window)
            values.append(util)
        return keys, values

    return ScrapeTarget(
        f"exporter/{node.name}",
        labels,
        f"http://{address}/metrics",
        interval,
        collect,
        honor_labels=True,
        seed=prometheus.offset_seed,
        names=EXPORTER_NAMES,
    )
