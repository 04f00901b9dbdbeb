"""The profile's schema: what ``gpuscale.yaml`` may say, its defaults, and why.

Every model is frozen and forbids unknown keys; every field's docstring is its
description (``docs/profile.md`` is the reference built from the same facts). Durations
are written as ``30s``/``5m``/``1h30m`` and held as seconds; memory as ``8Gi`` and held
as bytes; prices in US dollars per hour.

Node-pool fields a size slug implies (GPU vendor and model, GPUs per node, vCPUs,
memory, price) and the labels and taints the provider puts on its nodes are filled in
before validation from the catalogue (``gpuscale.profile.catalogue`` plus the profile's
own ``catalogue:`` entries) and the provider, so the validated profile always holds the
effective values.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gpuscale.controllers import autoscaler_defaults as ca
from gpuscale.kube import Taint, format_duration, parse_duration, parse_quantity
from gpuscale.manifests import KeyPath, Location, nearest_location
from gpuscale.profile.catalogue import DOKS_LABEL_DOMAIN, GpuVendor, Size, size_for

if TYPE_CHECKING:
    from gpuscale.serving import EngineConfig, StepCost

__all__ = [
    "DOKS_LABEL_DOMAIN",
    "KEDA_CHART",
    "KUBE_PROMETHEUS_STACK_CHART",
    "TUNABLE",
    "AutoscalerSpec",
    "CalibrationSpec",
    "CatalogueEntry",
    "ClusterSpec",
    "HpaSpec",
    "KedaSpec",
    "NodePool",
    "Profile",
    "PrometheusSpec",
    "ServingSpec",
    "StepCostSpec",
    "TaintSpec",
    "TimingSpec",
    "Tunable",
    "TuneSpec",
    "WorkloadSpec",
]

_GPU_RESOURCE = {"amd": "amd.com/gpu", "nvidia": "nvidia.com/gpu"}


def _seconds(value: Any) -> Any:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        try:
            return parse_duration(value)
        except OverflowError:
            raise ValueError(
                f"expected a duration such as 30s or 5m, got a number of {len(str(value))} "
                "digits, beyond any clock"
            ) from None
    if isinstance(value, bool):
        word = "true" if value else "false"
        raise ValueError(f"expected a duration such as 30s or 5m, got {word}")
    return value


def _version_text(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f"expected a version string, got the number {value!r} (YAML reads 1.20 as 1.2)"
            ' — quote it, e.g. "1.33"'
        )
    return value


VersionText = Annotated[str, BeforeValidator(_version_text)]
"""A version written as text; an unquoted ``1.20`` (a YAML number) is refused."""

KUBE_PROMETHEUS_STACK_CHART = "88.5.x"
"""The kube-prometheus-stack chart versions ``gpuscale install`` takes by default: the
88.5 series, whose ``values.yaml`` the values gpuscale sets were checked against (88.5.3;
``prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues``, ``scrapeInterval``).
A Helm ``--version`` constraint: any 88.5 patch release, never 88.6 or 89."""

KEDA_CHART = "2.20.x"
"""The KEDA chart versions ``gpuscale install`` takes by default: the 2.20 series, whose
``values.yaml`` (``crds.install``, ``prometheus.operator``/``metricServer``
``serviceMonitor.enabled``) and whose KEDA (kedacore/keda v2.20, which
:mod:`gpuscale.controllers.keda` models) gpuscale was checked against."""

_CHART_CONSTRAINT = re.compile(r"[0-9A-Za-z.*^~<>=!,| +-]*[0-9][0-9A-Za-z.*^~<>=!,| +-]*")


def _chart_constraint(value: str) -> str:
    if not _CHART_CONSTRAINT.fullmatch(value.strip()):
        raise ValueError(
            f"{value!r} is not a chart version or version constraint — write a version such "
            'as "88.5.3", or a constraint such as "88.5.x" or "~2.20.0"'
        )
    return value.strip()


ChartVersion = Annotated[VersionText, AfterValidator(_chart_constraint)]
"""A chart version or a Helm ``--version`` constraint (Masterminds semver: ``88.5.3``,
``88.5.x``, ``~2.20.0``, ``>=2.19, <2.21``), passed to ``helm upgrade --version``."""


def _kubernetes_name(limit: int) -> Any:
    def check(value: str) -> str:
        if not _DNS_LABEL.fullmatch(value) or len(value) > limit:
            raise ValueError(
                f"{value!r} is not a valid Kubernetes name — use lower-case letters, digits "
                f"and '-', starting and ending with a letter or digit, at most {limit} characters"
            )
        return value

    return AfterValidator(check)


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")

Namespace = Annotated[str, _kubernetes_name(63)]
"""A namespace name (an RFC 1123 label, at most 63 characters)."""

ReleaseName = Annotated[str, _kubernetes_name(53)]
"""A Helm release name (Helm allows at most 53 characters)."""


def _bytes(value: Any) -> Any:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        try:
            return parse_quantity(value)
        except OverflowError:
            raise ValueError(
                f"expected a quantity such as 8Gi, got a number of {len(str(value))} digits"
            ) from None
    return value


def _format_bytes(value: float) -> str:
    for suffix, size in (("Ti", 1024.0**4), ("Gi", 1024.0**3), ("Mi", 1024.0**2)):
        if value >= size and (value / size) == int(value / size):
            return f"{int(value / size)}{suffix}"
    return f"{value:g}"


Delay = Annotated[
    float,
    BeforeValidator(_seconds),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    Field(ge=0),
]
"""A time to wait, 0 allowed (no wait): seconds, written as ``30s``, ``5m``, ``1h30m``,
``250ms`` or a bare number of seconds."""

Period = Annotated[
    float,
    BeforeValidator(_seconds),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    Field(gt=0),
]
"""A time that something repeats at or divides by (a scrape interval, a sync period, a
look-back window, a timeout): more than 0, written as a :data:`Delay` is. A zero period
would mean a loop without end or a division by zero in the models."""

NodeCount = Annotated[int, Field(ge=0, le=1000)]
"""A number of nodes. At most 1,000: far above any DigitalOcean account's Droplet limit
(25 by default, which also caps an autoscaled pool), and a bound that keeps a simulated
cluster finite."""

Price = Annotated[float, Field(ge=0)]
"""US dollars per hour, a finite number, 0 allowed (a free or already paid machine)."""

GpuCount = Annotated[int, Field(ge=0, le=64)]
"""GPUs per node: the largest machines offer 8 or 16; 64 is a bound, not a catalogue."""

Memory = Annotated[
    float,
    BeforeValidator(_bytes),
    PlainSerializer(_format_bytes, return_type=str, when_used="json"),
    Field(gt=0),
]
"""Bytes, written as a Kubernetes quantity: ``8Gi``, ``512Mi``, ``16G``."""


def _admits(annotation: Any, wanted: Any) -> bool:
    """Whether ``wanted`` (a type, or the validator function of an ``Annotated`` type)
    is part of ``annotation``."""
    if annotation is wanted:
        return True
    if any(getattr(m, "func", None) is wanted for m in getattr(annotation, "__metadata__", ())):
        return True
    return any(_admits(argument, wanted) for argument in typing.get_args(annotation))


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        defer_build=True,
        allow_inf_nan=False,
    )
    """Each field's docstring is its meaning (``docs/profile.md``; ``tests/unit/profile/test_docs``
    reads them from this source). pydantic is not asked to read them
    (``use_attribute_docstrings``): that parses every model's source on import.

    ``allow_inf_nan=False``: every number in a profile is finite (YAML's ``.inf``, or
    ``1e309``, which reads as infinity, is refused with the key's line)."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """pydantic's lax mode reads ``true`` as 1 for a number; YAML's ``true`` there is a
        mistake (``concurrency: true``), so only fields that mean a boolean take one."""
        if not isinstance(value, bool) or info.field_name is None:
            return value
        field = cls.model_fields[info.field_name]
        annotation = field.annotation
        durations = _admits(annotation, _seconds) or any(
            getattr(m, "func", None) is _seconds for m in field.metadata
        )
        if durations or _admits(annotation, bool):
            return value
        word = "true" if value else "false"
        if _admits(annotation, int):
            raise ValueError(f"expected a whole number, got {word} — write a number such as 1")
        if _admits(annotation, float):
            raise ValueError(f"expected a number, got {word} — write a number such as 0.5")
        return value


class ClusterSpec(_Model):
    """The cluster, as ``gpuscale cluster create`` makes it and labels/taints depend on."""

    provider: Literal["doks", "generic"] = "doks"
    """``doks`` (DigitalOcean Kubernetes: node labels, taints and prices as DOKS sets them)
    or ``generic`` (any cluster: only the labels and taints written here)."""
    name: str = "gpuscale"
    """Cluster name (DOKS: the name of the cluster to create or use)."""
    region: str = "tor1"
    """DigitalOcean region slug; the tutorial recommends TOR1, NYC2 or ATL1 for GPUs.
    Which region has which GPU changes: ``gpuscale cluster create`` checks ``/v2/sizes``."""
    version: VersionText = "latest"
    """DOKS version slug (``1.33.1-do.0``), a minor version (``"1.33"``, quoted: YAML reads
    ``1.20`` as the number 1.2) or ``latest``."""
    vpc_uuid: str | None = None
    """VPC to create the cluster in; ``None`` uses the region's default VPC."""
    ha: bool | None = None
    """A highly available control plane (DOKS); ``None`` leaves DigitalOcean's default."""
    tags: tuple[str, ...] = ()
    """Extra tags for the cluster (DigitalOcean adds ``k8s`` and ``k8s:<id>`` itself)."""
    gpu_metrics: bool = True
    """With an AMD pool, also turn on DOKS's AMD Device Metrics Exporter add-on, which is
    off unless asked for (the device plugin add-on is on for GPU pools regardless)."""


class TaintSpec(_Model):
    """A taint the provider (or you) put on every node of a pool."""

    key: str = Field(min_length=1)
    """Taint key, e.g. ``amd.com/gpu``."""
    value: str = ""
    """Taint value; DOKS GPU taints have none."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"
    """What the taint does to pods that do not tolerate it."""

    def to_taint(self) -> Taint:
        """The same taint as the manifest views use it."""
        return Taint(key=self.key, value=self.value, effect=self.effect)


class CatalogueEntry(_Model):
    """A Droplet (or any machine) size, adding to or overriding the built-in catalogue."""

    slug: str = Field(min_length=1)
    """Size slug as the provider names it, e.g. ``gpu-mi300x1-192gb``."""
    gpu_vendor: GpuVendor = "none"
    """``amd``, ``nvidia`` or ``none``."""
    gpu_model: str | None = None
    """GPU model as the provider's ``gpu-model`` node label spells it, e.g. ``mi300x``."""
    gpus: GpuCount = 0
    """GPUs per node."""
    vcpus: float = Field(gt=0)
    """vCPUs per node."""
    memory: Memory
    """Memory per node."""
    price_per_hour: Price
    """US dollars per node-hour."""
    prices_read: str | None = None
    """When the price was read (``YYYY-MM-DD``), for the record."""

    def to_size(self) -> Size:
        """As a catalogue :class:`Size`."""
        return Size(
            slug=self.slug,
            gpu_vendor=self.gpu_vendor,
            gpu_model=self.gpu_model,
            gpus=self.gpus,
            vcpus=self.vcpus,
            memory=self.memory,
            price_per_hour=self.price_per_hour,
            prices_read=self.prices_read or "",
        )


class NodePool(_Model):
    """A node pool: what its nodes offer, how they are labelled and tainted, how many."""

    name: str = Field(min_length=1)
    """Pool name (DOKS puts it on each node as ``doks.digitalocean.com/node-pool``)."""
    size: str = Field(min_length=1)
    """Size slug; its GPU, vCPU, memory and price come from the catalogue unless written."""
    gpu: GpuVendor
    """GPU vendor of the nodes: ``amd``, ``nvidia`` or ``none``; default from the size."""
    gpu_model: str | None = None
    """GPU model label value, default from the size."""
    gpus_per_node: GpuCount
    """GPUs each node offers as ``amd.com/gpu``/``nvidia.com/gpu``; default from the size."""
    cpu: float = Field(gt=0)
    """Allocatable vCPUs per node; default: the size's vCPUs (an upper bound: the kubelet
    and system pods reserve some)."""
    memory: Memory
    """Allocatable memory per node; default: the size's memory (an upper bound, as cpu)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels on every node: yours plus, on DOKS, ``doks.digitalocean.com/node-pool`` and for
    GPU pools ``doks.digitalocean.com/gpu-brand`` and ``gpu-model``."""
    taints: tuple[TaintSpec, ...] = ()
    """Taints on every node; default on DOKS GPU pools: ``amd.com/gpu:NoSchedule`` or
    ``nvidia.com/gpu:NoSchedule``; none otherwise. Write ``taints: []`` for none."""
    count: NodeCount | None = None
    """Fixed number of nodes (no autoscaling). Exclusive with min_nodes/max_nodes."""
    min_nodes: NodeCount | None = None
    """Autoscaling lower bound; 0 allowed (scale to zero). Default 0 when max_nodes is set."""
    max_nodes: NodeCount | None = None
    """Autoscaling upper bound; needed unless count is set."""
    price_per_hour: Price
    """US dollars per node-hour; default from the size."""
    provisioning_time: Delay
    """From the autoscaler's scale-up decision to a Ready node with its GPUs allocatable.
    Default 10m for GPU pools (reported GPU node start-ups range 5–15 min; none published
    for DOKS) and 4m for CPU pools."""

    @model_validator(mode="after")
    def _check_counts(self) -> NodePool:
        if self.count is not None and (self.min_nodes is not None or self.max_nodes is not None):
            raise ValueError(
                "count and min_nodes/max_nodes are both set — keep count (a fixed pool) "
                "or min_nodes/max_nodes (autoscaling)"
            )
        if self.count is None and self.max_nodes is None:
            raise ValueError(
                "the pool has neither max_nodes nor count — set max_nodes (autoscaling) "
                "or count (a fixed pool)"
            )
        if self.max_nodes is not None and (self.min_nodes or 0) > self.max_nodes:
            raise ValueError(
                f"min_nodes {self.min_nodes} is above max_nodes {self.max_nodes} — "
                "lower min_nodes or raise max_nodes"
            )
        if self.gpu == "none" and self.gpus_per_node:
            raise ValueError("gpus_per_node is set but gpu is none — set gpu: amd or gpu: nvidia")
        if self.gpu != "none" and not self.gpus_per_node:
            raise ValueError(f"gpu is {self.gpu} but gpus_per_node is 0 — set gpus_per_node")
        return self

    @property
    def autoscaling(self) -> bool:
        """Whether the cluster autoscaler manages this pool."""
        return self.count is None

    @property
    def lowest(self) -> int:
        """Fewest nodes the pool can have."""
        return self.count if self.count is not None else (self.min_nodes or 0)

    @property
    def highest(self) -> int:
        """Most nodes the pool can have."""
        return self.count if self.count is not None else (self.max_nodes or 0)

    @property
    def gpu_resource(self) -> str | None:
        """The extended resource its GPUs appear as (``amd.com/gpu``), or ``None``."""
        return _GPU_RESOURCE.get(self.gpu)

    @property
    def node_taints(self) -> tuple[Taint, ...]:
        """The taints as the manifest views use them."""
        return tuple(taint.to_taint() for taint in self.taints)


class AutoscalerSpec(_Model):
    """Cluster-autoscaler timings. Defaults: upstream kubernetes/autoscaler flags (FAQ.md
    flag table), from :mod:`gpuscale.controllers.autoscaler_defaults`; DOKS exposes only the
    utilization threshold, the unneeded time and the expanders, and is assumed to keep
    upstream values for the rest."""

    scan_interval: Period = ca.SCAN_INTERVAL_S
    """How often the autoscaler looks for unschedulable pods and unneeded nodes
    (``--scan-interval``)."""
    scale_up_delay: Delay = ca.UNSCHEDULABLE_POD_TIME_BUFFER_S
    """How long a pod must be unschedulable before it triggers a scale-up
    (``unschedulablePodTimeBuffer`` in core/static_autoscaler.go)."""
    scale_up_delay_gpu: Delay = ca.UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S
    """The same for pods that request GPUs (``unschedulablePodWithGpuTimeBuffer``: "nodes
    with GPU are very expensive" so the autoscaler waits for more pods)."""
    new_pod_scale_up_delay: Delay = ca.NEW_POD_SCALE_UP_DELAY_S
    """Pods younger than this are ignored for scale-up (``--new-pod-scale-up-delay``)."""
    scale_down_unneeded_time: Delay = ca.SCALE_DOWN_UNNEEDED_TIME_S
    """A node must be unneeded this long before removal (``--scale-down-unneeded-time``)."""
    scale_down_delay_after_add: Delay = ca.SCALE_DOWN_DELAY_AFTER_ADD_S
    """No scale-down for this long after a scale-up (``--scale-down-delay-after-add``)."""
    scale_down_delay_after_delete: Delay = ca.SCALE_DOWN_DELAY_AFTER_DELETE_S
    """No scale-down for this long after a node deletion."""
    scale_down_delay_after_failure: Delay = ca.SCALE_DOWN_DELAY_AFTER_FAILURE_S
    """No scale-down for this long after a failed one."""
    scale_down_utilization_threshold: float = Field(
        default=ca.SCALE_DOWN_UTILIZATION_THRESHOLD, ge=0, le=1
    )
    """A CPU node whose requested cpu and memory are both below this share of allocatable
    is unneeded (``--scale-down-utilization-threshold``)."""
    scale_down_gpu_utilization_threshold: float = Field(
        default=ca.SCALE_DOWN_GPU_UTILIZATION_THRESHOLD, ge=0, le=1
    )
    """The same for GPU nodes, on requested GPUs only
    (``--scale-down-gpu-utilization-threshold``)."""
    expander: Literal["random", "least-waste", "most-pods", "price", "priority"] = "random"
    """Which pool to grow when several fit. Default: ``random`` on DOKS (DigitalOcean's
    documented default), ``least-waste`` elsewhere (upstream's current default)."""
    expander_priorities: dict[int, list[str]] = Field(default_factory=dict)
    """For ``expander: priority``: priority → regexes of pool names; the highest priority
    with a matching pool wins (the ``cluster-autoscaler-priority-expander`` ConfigMap)."""
    max_nodes_total: int = Field(default=0, ge=0)
    """Most nodes in the cluster, all pools together; 0 means no limit
    (``--max-nodes-total``)."""

    @field_validator("expander_priorities")
    @classmethod
    def _patterns_compile(cls, value: dict[int, list[str]]) -> dict[int, list[str]]:
        for priority, patterns in value.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as error:
                    raise ValueError(
                        f"priority {priority}: {pattern!r} is not a regular expression ({error})"
                    ) from None
        return value


class HpaSpec(_Model):
    """kube-controller-manager's HPA settings (upstream defaults)."""

    sync_period: Period = 15.0
    """How often the HPA recomputes (``--horizontal-pod-autoscaler-sync-period``)."""
    tolerance: float = Field(default=0.1, ge=0)
    """No scaling while the usage ratio is within 1 ± tolerance
    (``--horizontal-pod-autoscaler-tolerance``)."""
    downscale_stabilization: Delay = 300.0
    """Default scale-down stabilization window when a behavior does not set one
    (``--horizontal-pod-autoscaler-downscale-stabilization``)."""


class PrometheusSpec(_Model):
    """The Prometheus KEDA queries, as kube-prometheus-stack installs it."""

    release: ReleaseName = "prometheus"
    """Helm release name of kube-prometheus-stack; with ``selects_all_servicemonitors:
    false`` its Prometheus only selects ServiceMonitors labelled ``release: <release>``."""
    selects_all_servicemonitors: bool = True
    """Whether this Prometheus selects every ServiceMonitor in every namespace (the chart's
    ``serviceMonitorSelectorNilUsesHelmValues: false``, which ``gpuscale install`` sets)
    rather than only those labelled ``release: <release>`` (the chart's own default).
    Default true: the profile describes the stack ``gpuscale install`` installs from it;
    write false for a kube-prometheus-stack installed with the chart's defaults."""
    namespace: Namespace = "monitoring"
    """Namespace kube-prometheus-stack is installed in."""
    chart_version: ChartVersion | None = KUBE_PROMETHEUS_STACK_CHART
    """kube-prometheus-stack chart version (or Helm version constraint) ``gpuscale install``
    installs; default ``88.5.x``, the series gpuscale's values were checked against;
    ``null``: whatever is newest at install time."""
    address: str = ""
    """URL KEDA's prometheus trigger uses; default
    ``http://prometheus-operated.<namespace>.svc.cluster.local:9090``."""
    scrape_interval: Period = 30.0
    """Scrape interval of targets whose ServiceMonitor does not set one (the operator's
    default)."""
    evaluation_interval: Period = 30.0
    """Rule evaluation interval."""
    lookback_delta: Period = 300.0
    """How far back an instant query looks for a sample (``--query.lookback-delta``)."""
    version: Literal["3", "2"] = "3"
    """Prometheus major version, for PromQL semantics (kube-prometheus-stack ships 3)."""

    @model_validator(mode="before")
    @classmethod
    def _default_address(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and not data.get("address"):
            namespace = data.get("namespace", "monitoring")
            address = f"http://prometheus-operated.{namespace}.svc.cluster.local:9090"
            return {**data, "address": address}
        return data


class KedaSpec(_Model):
    """KEDA as installed by its Helm chart."""

    namespace: Namespace = "keda"
    """Namespace KEDA runs in (its chart's documented install namespace)."""
    release: ReleaseName = "keda"
    """Helm release name."""
    chart_version: ChartVersion | None = KEDA_CHART
    """KEDA chart version (or Helm version constraint) ``gpuscale install`` installs;
    default ``2.20.x``, the series gpuscale's values and KEDA model were checked against;
    ``null``: whatever is newest at install time."""


def _preset_name(value: str) -> str:
    # gpuscale.serving is imported by the profiles that use it (serving.kind vllm).
    from gpuscale.serving.presets import presets  # noqa: PLC0415

    table = presets()
    gpu, _, model = value.partition("/")
    if (gpu, model) not in table:
        known = ", ".join(f"{g}/{m}" for g, m in sorted(table))
        raise ValueError(
            f"{value!r} is not a serving preset — write one of {known} "
            "(or drop preset and write num_gpu_blocks and step_cost)"
        )
    return value


PositiveCount = Annotated[int, Field(ge=1)]
"""A whole number of 1 or more (requests, tokens, blocks)."""

NonNegative = Annotated[float, Field(ge=0)]
"""A finite number, 0 allowed."""


class StepCostSpec(_Model):
    """Seconds one engine step takes: ``base + prefill_token × prompt tokens + decode_seq ×
    decoding sequences + context_token × context tokens`` (``gpuscale.serving.StepCost``;
    ``docs/serving.md``). A term not written comes from the preset; without a preset all
    four are needed."""

    base: NonNegative | None = None
    """Seconds of every step whatever its size (reading the weights once, launches)."""
    prefill_token: NonNegative | None = None
    """Seconds per prompt token computed in the step."""
    decode_seq: NonNegative | None = None
    """Seconds per sequence decoding in the step (sampling, per-sequence kernels)."""
    context_token: NonNegative | None = None
    """Seconds per token of context attended (reading the KV cache)."""


class CalibrationSpec(_Model):
    """Where a workload's serving values were measured (``gpuscale calibrate`` writes it;
    the simulation does not read it)."""

    date: str = Field(min_length=1)
    """When the measurement was made (ISO 8601, e.g. ``2026-12-02``)."""
    source: str = Field(min_length=1)
    """What was measured (the endpoint's URL, the GPU and server version)."""
    residuals: dict[str, NonNegative] = Field(default_factory=dict)
    """The fit's quality per quantity (e.g. ``ttft: 0.04``: relative RMS error)."""
    range: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Per swept quantity, the lowest and highest value measured (e.g. ``prompt_tokens:
    [16, 4096]``); outside it the fit is an extrapolation."""


_ENGINE_KEYS = (
    "preset",
    "served_model_name",
    "max_num_seqs",
    "max_num_batched_tokens",
    "num_gpu_blocks",
    "gpu_memory_utilization",
    "block_size",
    "step_cost",
    "calibration",
)


class ServingSpec(_Model):
    """How one replica turns requests into answers: ``queue`` (a FIFO in front of
    ``concurrency`` slots, the workload's capacity keys) or ``vllm`` (the step model of
    ``gpuscale.serving``: continuous batching, chunked prefill, a paged KV cache; its
    settings are vLLM's flags of the same names, ``docs/serving.md``)."""

    kind: Literal["queue", "vllm"] = "queue"
    """``queue`` (today's request model) or ``vllm`` (an engine per replica, exporting
    vLLM's metrics)."""
    preset: Annotated[str, AfterValidator(_preset_name)] | None = None
    """``<gpu>/<model>`` from ``gpuscale.serving.presets`` (e.g. ``mi300x/llama-3.1-8b``):
    fills every engine value and step-cost term not written here. Approximate (a
    datasheet roofline); ``gpuscale calibrate`` measures real ones."""
    served_model_name: str | None = Field(default=None, min_length=1)
    """vLLM's ``model_name`` label on every series; default: the container's
    ``--served-model-name``, else its model argument, else the preset's model."""
    max_num_seqs: PositiveCount | None = None
    """Most requests running at once (``--max-num-seqs``); default the preset's (256)."""
    max_num_batched_tokens: PositiveCount | None = None
    """Token budget of one step (``--max-num-batched-tokens``); default the preset's (2048)."""
    num_gpu_blocks: Annotated[int, Field(ge=2)] | None = None
    """KV-cache blocks, vLLM's null block included (``--num-gpu-blocks-override``);
    exclusive with gpu_memory_utilization; default the preset's."""
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    """Share of GPU memory vLLM may use (``--gpu-memory-utilization``), turned into KV
    blocks from the preset's GPU memory and model weights; needs a preset."""
    block_size: PositiveCount | None = None
    """Tokens per KV block (``--block-size``); default 16. With a preset and no
    num_gpu_blocks, the preset's memory is divided into blocks of this size."""
    step_cost: StepCostSpec | None = None
    """The step-time parameters; terms not written come from the preset."""
    calibration: CalibrationSpec | None = None
    """Where the values came from when measured (written by ``gpuscale calibrate``)."""

    @model_validator(mode="after")
    def _check_kind(self) -> ServingSpec:
        written = [key for key in _ENGINE_KEYS if getattr(self, key) is not None]
        if self.kind == "queue":
            if written:
                one = len(written) == 1
                raise ValueError(
                    f"{', '.join(written)} {'is a vllm setting' if one else 'are vllm settings'}"
                    f" but kind is queue — write kind: vllm, or remove {'it' if one else 'them'}"
                )
            return self
        if self.num_gpu_blocks is not None and self.gpu_memory_utilization is not None:
            raise ValueError(
                "num_gpu_blocks and gpu_memory_utilization are both set — keep one of them"
            )
        if self.preset is None:
            if self.gpu_memory_utilization is not None:
                raise ValueError(
                    "gpu_memory_utilization needs a preset (the GPU's memory and the model's "
                    "weights give the blocks) — add preset: <gpu>/<model>, or write "
                    "num_gpu_blocks instead"
                )
            cost = self.step_cost or StepCostSpec()
            missing = [
                *(["num_gpu_blocks"] if self.num_gpu_blocks is None else []),
                *(f"step_cost.{term}" for term in _TERMS if getattr(cost, term) is None),
            ]
            if missing:
                raise ValueError(
                    f"kind vllm without a preset needs {', '.join(missing)} — write them, "
                    "or add preset: <gpu>/<model> (e.g. mi300x/llama-3.1-8b)"
                )
        try:
            self.engine_settings()
        except ValueError as error:
            raise ValueError(f"{error} — change the serving values") from None
        return self

    def engine_settings(self) -> tuple[EngineConfig, StepCost]:
        """The engine's settings and step cost: the preset's values, each replaced by the
        one written here (the one mapping from profile keys to ``gpuscale.serving``).
        ``ValueError`` for kind queue, or when the values leave no usable engine."""
        if self.kind != "vllm":
            raise ValueError("kind queue has no engine")
        from gpuscale.serving import EngineConfig, StepCost  # noqa: PLC0415 - see _preset_name
        from gpuscale.serving.presets import GPUS, MODELS, kv_blocks, preset  # noqa: PLC0415

        cost = self.step_cost or StepCostSpec()
        terms = {term: getattr(cost, term) for term in _TERMS}
        blocks = self.num_gpu_blocks
        block_size = self.block_size
        seqs, budget = self.max_num_seqs, self.max_num_batched_tokens
        if self.preset is not None:
            gpu, _, model = self.preset.partition("/")
            chosen = preset(gpu, model)
            base = chosen.engine_config()
            block_size = block_size or base.block_size
            if blocks is None:
                utilisation = self.gpu_memory_utilization
                if utilisation is None and block_size == base.block_size:
                    blocks = base.num_gpu_blocks
                else:
                    blocks = kv_blocks(
                        GPUS[gpu],
                        MODELS[model],
                        gpu_memory_utilization=utilisation or 0.9,
                        block_size=block_size,
                    )
                    if blocks < 2:
                        raise ValueError(
                            f"{self.preset} at gpu_memory_utilization {utilisation} leaves "
                            "no memory for the KV cache"
                        )
            seqs = seqs or base.max_num_seqs
            budget = budget or base.max_num_batched_tokens
            preset_cost = chosen.step_cost()
            terms = {
                term: getattr(preset_cost, term) if value is None else value
                for term, value in terms.items()
            }
        assert blocks is not None
        config = EngineConfig(
            num_gpu_blocks=blocks,
            max_num_seqs=seqs or 256,
            max_num_batched_tokens=budget or 2048,
            block_size=block_size or 16,
        )
        return config, StepCost(**terms)

    @property
    def model_name(self) -> str | None:
        """The written ``served_model_name``, else the preset's model, else ``None``."""
        if self.served_model_name is not None:
            return self.served_model_name
        return None if self.preset is None else self.preset.partition("/")[2]


_TERMS = ("base", "prefill_token", "decode_seq", "context_token")
_QUEUE_KEYS = (
    "concurrency",
    "service_time",
    "requests_per_second",
    "prefill_tokens_per_second",
    "decode_tokens_per_second",
)


class TimingSpec(_Model):
    """Latencies of a real cluster between the control loops' steps, so that the
    simulated loops drift and read their clocks as real ones do (``docs/timing.md``).
    Each is drawn per loop and object within ± ``spread`` of its value, from a stream of
    its own per seed. All 0: every loop on its exact grid. The defaults are estimates of a
    small, healthy cluster, each with the metric that measures it on yours."""

    hpa_reconcile: Delay = 0.025
    """One HPA reconcile: GET of the scale, the External metrics read (through KEDA's
    metrics server, which queries Prometheus) and the status update; the next sync is a
    sync period after it ends (``processNextWorkItem``). Measured by
    ``horizontal_pod_autoscaler_controller_reconciliation_duration_seconds``."""
    keda_start: Delay = 0.1
    """From the ScaledObject's creation to KEDA's first poll: its first reconcile, which
    also creates the HPA (finalizer, HPA create, status update)."""
    keda_poll: Delay = 0.01
    """From a poll's tick to KEDA reading the clock: the triggers' queries. Measured by
    ``keda_scaler_metrics_latency_seconds``."""
    autoscaler_run_once: Delay = 0.2
    """One cluster-autoscaler iteration (``RunOnce``); the next waits a scan interval after
    it ends. Measured by ``cluster_autoscaler_function_duration_seconds{function="main"}``."""
    pod_start: Delay = 2.0
    """From a pod's binding to its container starting on a node that has the image
    (kubelet, sandbox, network); 1–3 s with the default spread. Kubernetes' pod start-up
    SLO is 5 s at the 99th percentile, image pulls excluded."""
    spread: float = Field(default=0.5, ge=0, le=1)
    """How far a draw may fall from its value, as a share of it (0.5: ±50 %, uniform)."""


class WorkloadSpec(_Model):
    """What the manifests do not say about one Deployment (keyed by its name)."""

    image_pull_time: Delay = 20.0
    """Time to pull the image onto a fresh node (the gpuscale image is small; model
    servers with multi-GB images take minutes)."""
    startup_time: Delay = 10.0
    """From container start to Ready: loading, warm-up, and any installs at start."""
    concurrency: int = Field(default=1, ge=1)
    """Requests one replica serves at once."""
    service_time: Period | None = None
    """Time to serve one request (more than 0: 0 would mean unlimited capacity);
    exclusive with requests_per_second."""
    requests_per_second: float | None = Field(default=None, gt=0)
    """Throughput of one replica; exclusive with service_time."""
    prefill_tokens_per_second: float | None = Field(default=None, gt=0)
    """For LLM traces: prompt tokens one replica processes per second."""
    decode_tokens_per_second: float | None = Field(default=None, gt=0)
    """For LLM traces: output tokens one replica generates per second."""
    latency_target: Period | None = None
    """A request slower than this counts as late; ``None``: no target."""
    request_timeout: Period = 60.0
    """A request waiting or running longer than this fails."""
    serving: ServingSpec = Field(default_factory=ServingSpec)
    """The serving model: ``kind: queue`` (the capacity keys above) or ``kind: vllm``
    (an engine per replica; ``docs/serving.md``)."""

    @model_validator(mode="after")
    def _check_capacity(self) -> WorkloadSpec:
        if self.serving.kind == "vllm":
            queue = [key for key in _QUEUE_KEYS if key in self.model_fields_set]
            if queue:
                raise ValueError(
                    f"{', '.join(queue)} {'is' if len(queue) == 1 else 'are'} the queue "
                    "model's capacity but serving.kind is vllm — remove "
                    f"{'it' if len(queue) == 1 else 'them'} (the engine's settings decide "
                    "capacity)"
                )
        if self.service_time is not None and self.requests_per_second is not None:
            raise ValueError("service_time and requests_per_second are both set — keep one of them")
        if (self.prefill_tokens_per_second is None) != (self.decode_tokens_per_second is None):
            raise ValueError(
                "only one of prefill_tokens_per_second and decode_tokens_per_second is set"
                " — set both, or neither"
            )
        return self

    def service_time_for(self, prompt_tokens: int = 0, output_tokens: int = 0) -> float | None:
        """Seconds one request takes on a replica; token rates win when set and tokens
        are given, then service_time, then concurrency / requests_per_second."""
        if (
            self.prefill_tokens_per_second
            and self.decode_tokens_per_second
            and (prompt_tokens or output_tokens)
        ):
            return (
                prompt_tokens / self.prefill_tokens_per_second
                + output_tokens / self.decode_tokens_per_second
            )
        if self.service_time is not None:
            return self.service_time
        if self.requests_per_second is not None:
            return self.concurrency / self.requests_per_second
        return None


Tunable = Literal[
    "threshold",
    "activation_threshold",
    "min_replicas",
    "max_replicas",
    "idle_replicas",
    "polling_interval",
    "cooldown",
    "scale_down_stabilization",
    "scale_up_pods",
    "scale_up_period",
    "scale_down_pods",
    "scale_down_period",
    "select_policy",
    "metric_type",
    "gpu_min_nodes",
]
"""A setting ``gpuscale tune`` searches (``docs/tune.md``), as ``tune.keep`` names it."""

TUNABLE: tuple[str, ...] = typing.get_args(Tunable)
"""Every :data:`Tunable`, in the order the search proposes them."""

_NumberRange = tuple[Annotated[float, Field(ge=0)], Annotated[float, Field(ge=0)]]
_ThresholdRange = tuple[Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]]
"""KEDA's webhook refuses a threshold of 0 or less; above 0, the log scale holds."""
_CountRange = tuple[Annotated[int, Field(ge=0, le=1000)], Annotated[int, Field(ge=0, le=1000)]]
_PositiveCount = Annotated[int, Field(ge=1, le=1000)]
_PositiveCountRange = tuple[_PositiveCount, _PositiveCount]
"""maxReplicaCount and a Pods policy's value: the HPA refuses 0."""


def _whole_seconds(seconds: float) -> float:
    if seconds != int(seconds):
        raise ValueError("must be whole seconds, as KEDA and the HPA write them")
    return seconds


_Seconds = Annotated[Delay, AfterValidator(_whole_seconds)]
_DelayRange = tuple[_Seconds, _Seconds]
_Interval = Annotated[_Seconds, Field(ge=1)]
_IntervalRange = tuple[_Interval, _Interval]
"""pollingInterval: at least 1s (the space repairs 0 to 1s)."""
_Period = Annotated[_Seconds, Field(ge=1, le=1800)]
_PeriodRange = tuple[_Period, _Period]
"""A policy's periodSeconds: 1s to 30m (the HPA's validation)."""
_Window = Annotated[_Seconds, Field(le=3600)]
_WindowRange = tuple[_Window, _Window]
"""stabilizationWindowSeconds: at most 1h (the HPA's validation)."""


class TuneSpec(_Model):
    """The bounds ``gpuscale tune`` searches within (``docs/tune.md``), a top-level
    section. Each is ``[low, high]``, both included, within what KEDA and the HPA admit
    (durations in whole seconds); unset, it is derived from the ScaledObject and the
    profile as written there."""

    threshold: _ThresholdRange | None = None
    """The trigger's threshold, both bounds above 0 (KEDA refuses a threshold of 0 or
    less); default a quarter to four times its current value; searched on a log scale."""
    activation_threshold: _NumberRange | None = None
    """The trigger's activationThreshold; default 0 to the current threshold."""
    min_replicas: _CountRange | None = None
    """minReplicaCount; default 0 (scale to zero) to one above the current value. Its low
    at most ``max_replicas``' high."""
    max_replicas: _PositiveCountRange | None = None
    """maxReplicaCount, at least 1; default 1 to twice the current value, at most twice
    what the pools hold (above what they hold, the recommendation raises the GPU pool's
    ``max_nodes``)."""
    polling_interval: _IntervalRange | None = None
    """pollingInterval, at least 1s; default 5s to 1m (or the current value if longer)."""
    cooldown: _DelayRange | None = None
    """cooldownPeriod (read when scaling to zero); default 30s to 10m."""
    scale_down_stabilization: _WindowRange | None = None
    """The HPA behavior's scaleDown.stabilizationWindowSeconds, at most 1h; default 0s to
    30m."""
    scale_up_pods: _PositiveCountRange | None = None
    """Pods one scale-up policy may add per period, at least 1; default 1 to 8."""
    scale_up_period: _PeriodRange | None = None
    """That policy's periodSeconds, 1s to 30m; default 15s to 5m."""
    scale_down_pods: _PositiveCountRange | None = None
    """Pods one scale-down policy may remove per period, at least 1; default 1 to 4."""
    scale_down_period: _PeriodRange | None = None
    """That policy's periodSeconds, 1s to 30m; default 15s to 10m."""
    gpu_min_nodes: _CountRange | None = None
    """The GPU pool's min_nodes (warm nodes); default 0 to 2 (at most max_nodes). Its low
    at most the pool's max_nodes (``gpuscale tune`` checks, knowing the pool)."""
    keep: tuple[Tunable, ...] = ()
    """Settings to keep as written rather than search: any of the names above, and
    ``idle_replicas`` (idleReplicaCount 0 or unset), ``select_policy`` (scaleDown's
    selectPolicy) and ``metric_type`` (AverageValue or Value)."""

    @model_validator(mode="after")
    def _ranges_in_order(self) -> TuneSpec:
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name != "keep" and value is not None and value[0] > value[1]:
                a, b = (f"{v:g}" for v in value)
                raise ValueError(f"{name}: low {a} is above high {b} — write [{b}, {a}]")
        if self.min_replicas is not None and self.max_replicas is not None:
            low, high = self.min_replicas[0], self.max_replicas[1]
            if low > high:
                raise ValueError(
                    f"min_replicas: low {low} is above tune.max_replicas high {high}, so no "
                    "maxReplicaCount of the search is at least its minReplicaCount — "
                    f"lower tune.min_replicas' low to at most {high}, or raise "
                    f"tune.max_replicas' high to at least {low}"
                )
        return self


def _default_pools() -> list[dict[str, Any]]:
    return [
        {"name": "general", "size": "s-4vcpu-8gb", "count": 2},
        {"name": "gpu", "size": "gpu-mi300x1-192gb", "min_nodes": 0, "max_nodes": 8},
    ]


class Profile(_Model):
    """``gpuscale.yaml``: the environment the manifests run in."""

    cluster: ClusterSpec = Field(default_factory=ClusterSpec)
    """The cluster and its provider."""
    node_pools: tuple[NodePool, ...] = ()
    """Node pools; default: ``general`` (2 × s-4vcpu-8gb) and ``gpu``
    (gpu-mi300x1-192gb, 0–8 nodes), as in the tutorial."""
    autoscaler: AutoscalerSpec = Field(default_factory=AutoscalerSpec)
    """Cluster-autoscaler timings."""
    hpa: HpaSpec = Field(default_factory=HpaSpec)
    """HPA controller settings."""
    prometheus: PrometheusSpec = Field(default_factory=PrometheusSpec)
    """The Prometheus KEDA queries."""
    keda: KedaSpec = Field(default_factory=KedaSpec)
    """KEDA's installation."""
    timing: TimingSpec = Field(default_factory=TimingSpec)
    """Latencies between the control loops' steps (reconciles, polls, pod start)."""
    workloads: dict[str, WorkloadSpec] = Field(default_factory=dict)
    """Per Deployment name: start-up, capacity and latency; unlisted ones take defaults."""
    catalogue: tuple[CatalogueEntry, ...] = ()
    """Sizes to add to, or override in, the built-in catalogue (matched by slug)."""
    tune: TuneSpec = Field(default_factory=TuneSpec)
    """The search space of ``gpuscale tune``: bounds that override the derived ones."""

    _positions: dict[KeyPath, Location] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr(default="defaults")

    def __eq__(self, other: object) -> bool:
        """Equal values are equal profiles, wherever each was read from."""
        if not isinstance(other, Profile):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # holds dicts; pydantic's hash would fail

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        cluster = data.get("cluster")
        provider = cluster.get("provider", "doks") if isinstance(cluster, Mapping) else "doks"
        autoscaler = data.get("autoscaler", {})
        if isinstance(autoscaler, Mapping) and "expander" not in autoscaler:
            data["autoscaler"] = {
                **autoscaler,
                "expander": "random" if provider == "doks" else "least-waste",
            }
        extra = _catalogue_sizes(data.get("catalogue"))
        pools = data.get("node_pools", _default_pools())
        if isinstance(pools, list | tuple):
            data["node_pools"] = [
                _fill_pool(pool, provider, extra) if isinstance(pool, Mapping) else pool
                for pool in pools
            ]
        return data

    @field_validator("node_pools", mode="after")
    @classmethod
    def _unique_pools(cls, pools: tuple[NodePool, ...]) -> tuple[NodePool, ...]:
        seen: set[str] = set()
        for pool in pools:
            if pool.name in seen:
                raise ValueError(
                    f"two node pools are called {pool.name!r} — give each pool its own name"
                )
            seen.add(pool.name)
        return pools

    @classmethod
    def default(cls) -> Profile:
        """The profile used when none is given: every default."""
        return cls.model_validate({})

    def located(self, positions: Mapping[KeyPath, Location], source: str) -> Profile:
        """This profile, knowing where each key of its file is written (``positions`` as
        the YAML loader found them) and the name of that file. Called once by the loader;
        the copy shares every value."""
        copy = self.model_copy()
        copy._positions = dict(positions)
        copy._source = source
        return copy

    @property
    def source(self) -> str:
        """The file the profile was read from, or ``defaults`` when none was."""
        return self._source

    def line_of(self, path: KeyPath) -> Location | None:
        """Where the key (or list item) at ``path`` (``("node_pools", 1, "max_nodes")``)
        is written: its own line, else its nearest written ancestor's (a key the profile
        leaves to its default is reported at the section that would hold it); ``None``
        when nothing of the path is written (the built-in defaults)."""
        return nearest_location(self._positions, path)

    def where(self, path: KeyPath) -> str:
        """``file:line`` of :meth:`line_of`, or the file's name (``defaults`` when the
        profile came from no file) where nothing of the path is written: the ``where`` of
        an error about that key."""
        found = self.line_of(path)
        return str(found) if found is not None else self._source

    def creation_problem(self) -> tuple[KeyPath, str, str] | None:
        """Why DigitalOcean could not create this profile's cluster, as (key path,
        message, fix), or ``None``. DigitalOcean's create-cluster operation
        (``POST /v2/kubernetes/clusters``) needs at least one node pool with at least one
        worker, so a DOKS profile whose every pool starts empty (``count: 0``, or
        autoscaling from ``min_nodes: 0``) is refused by ``gpuscale profile check`` and
        ``gpuscale cluster``. ``simulate`` and ``lint`` accept it: they model the
        workload's pools, not the nodes the system pods run on."""
        if self.cluster.provider != "doks" or not self.node_pools:
            return None
        if any(pool.lowest >= 1 for pool in self.node_pools):
            return None
        names = ", ".join(pool.name for pool in self.node_pools)
        return (
            ("node_pools",),
            f"every node pool ({names}) starts with 0 nodes; DigitalOcean creates a "
            "cluster only with at least one pool of at least 1 node",
            "add a general pool with count >= 1 (as the tutorial has: "
            "{name: general, size: s-4vcpu-8gb, count: 2}), or give one pool min_nodes: 1",
        )

    def workload(self, name: str) -> WorkloadSpec:
        """The settings of the Deployment ``name`` (defaults when it is not listed)."""
        return self.workloads.get(name) or WorkloadSpec()

    def pool(self, name: str) -> NodePool | None:
        """The node pool called ``name``."""
        return next((pool for pool in self.node_pools if pool.name == name), None)

    @property
    def gpu_pools(self) -> tuple[NodePool, ...]:
        """Pools whose nodes have GPUs."""
        return tuple(pool for pool in self.node_pools if pool.gpu != "none")


def _catalogue_sizes(raw: Any) -> tuple[Size, ...]:
    if not isinstance(raw, list | tuple):
        return ()
    sizes = []
    for entry in raw:
        try:
            sizes.append(CatalogueEntry.model_validate(entry).to_size())
        except ValueError:
            continue
    return tuple(sizes)


def _fill_pool(pool: Mapping[str, Any], provider: str, extra: tuple[Size, ...]) -> dict[str, Any]:
    filled = dict(pool)
    size = size_for(str(pool.get("size", "")), extra)
    if size is not None:
        filled.setdefault("gpu", size.gpu_vendor)
        filled.setdefault("gpu_model", size.gpu_model)
        filled.setdefault("gpus_per_node", size.gpus)
        filled.setdefault("cpu", size.vcpus)
        filled.setdefault("memory", size.memory)
        filled.setdefault("price_per_hour", size.price_per_hour)
    else:
        filled.setdefault("gpu", "none")
        if filled["gpu"] == "none":  # a wrong type is left for the field to refuse
            filled.setdefault("gpus_per_node", 0)
    vendor = filled.get("gpu")
    has_gpu = isinstance(vendor, str) and vendor in _GPU_RESOURCE
    if "min_nodes" not in filled and "max_nodes" in filled and "count" not in filled:
        filled["min_nodes"] = 0
    filled.setdefault("provisioning_time", "10m" if has_gpu else "4m")
    if provider == "doks":
        labels = pool.get("labels")
        if labels is None or isinstance(labels, Mapping):
            name = pool.get("name")
            provided: dict[str, Any] = {}
            if isinstance(name, str):
                provided[f"{DOKS_LABEL_DOMAIN}/node-pool"] = name
            if has_gpu:
                provided[f"{DOKS_LABEL_DOMAIN}/gpu-brand"] = vendor
                if isinstance(filled.get("gpu_model"), str) and filled["gpu_model"]:
                    provided[f"{DOKS_LABEL_DOMAIN}/gpu-model"] = filled["gpu_model"]
            filled["labels"] = {**provided, **(labels or {})}
        if "taints" not in pool and has_gpu:
            filled["taints"] = [{"key": _GPU_RESOURCE[str(vendor)], "effect": "NoSchedule"}]
    return filled
