"""The corrected manifest set ``gpuscale init`` writes: the tutorial's system done right.

:func:`scaffold` is pure: options in, files (name and text) out; the CLI writes them.
Each object carries comments that say why it is written the way it is, keyed to the
mistakes ``examples/tutorial/README.md`` lists:

- Deployment: the workload image (entrypoint ``gpuscale app``), GPU request = limit, the
  provider's real GPU node label (DOKS: ``doks.digitalocean.com/gpu-brand``), a toleration
  for the GPU taint only, a readiness probe on ``/readyz``.
- Service: selects the pods, names its port so the ServiceMonitor can refer to it.
- Deployment without ``spec.replicas``: the HPA KEDA creates owns the count; a count in
  the manifest would be re-applied by every ``kubectl apply``/server-side apply and fight
  the HPA (Kubernetes' own advice for HPA-managed workloads).
- ServiceMonitor: in the app's namespace, labelled ``release: <kube-prometheus-stack
  release>`` so that Prometheus selects it, with a namespaceSelector naming that namespace;
  scraped at the profile's ``prometheus.scrape_interval``, one number written in both
  places so that the simulator and lint see the interval Prometheus uses.
- ScaledObject: a query summed over the workload's own series (scoped by namespace and
  service) with ``metricType: AverageValue``, so the HPA divides by the replica count
  once; ``ignoreNullValues: "false"`` so a broken scrape is an error, not a silent 0; an
  explicit HPA behavior instead of a ``cooldownPeriod`` that min ≥ 1 would ignore; no
  ``pollingInterval``: KEDA's default (30s) is right, and with min ≥ 1 the HPA reads the
  metric every 15s whatever it says (lint's ``polling-interval-has-no-effect``).
- ``gpuscale.yaml``: the profile for the same setup.

That is the ``gauge`` preset (the tutorial's workload). ``preset="vllm"`` writes a vLLM
server instead: :mod:`._scaffold_vllm` says what and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from gpuscale import __version__
from gpuscale.errors import InputError
from gpuscale.kube import format_duration, parse_duration
from gpuscale.manifests._model import KeyPath
from gpuscale.manifests._render import render
from gpuscale.manifests._scaffold_parts import (
    Placed,
    deployment,
    prometheus_server,
    service,
    service_monitor,
)
from gpuscale.manifests._scaffold_vllm import (
    NODE_PROVISIONING_SECONDS,
    VLLM_IMAGES,
    VLLM_PORT,
    vllm_objects,
    vllm_workload_profile,
)
from gpuscale.manifests.names import name_problem, suggest_name

__all__ = ["DEFAULT_IMAGE", "ScaffoldFile", "ScaffoldOptions", "scaffold", "scaffold_objects"]

DEFAULT_IMAGE = "ghcr.io/gpuscale/gpuscale"
"""The workload image (tag: the gpuscale version); its entrypoint is ``gpuscale app``."""

_GPU_RESOURCE = {"amd": "amd.com/gpu", "nvidia": "nvidia.com/gpu"}
_DOKS_GPU_SIZE = {"amd": "gpu-mi300x1-192gb", "nvidia": "gpu-h100x1-80gb"}


@dataclass(frozen=True)
class ScaffoldOptions:
    """What ``gpuscale init`` asks for."""

    name: str
    """Name of the Deployment, Service, ServiceMonitor and ScaledObject: a DNS-1035 label
    (the Service's rule, the strictest of the four: it starts with a letter)."""
    namespace: str
    """Namespace of all four objects."""
    gpu: Literal["amd", "nvidia"] = "amd"
    """GPU vendor: decides the resource (``amd.com/gpu``), taint and node label value."""
    provider: Literal["doks", "generic"] = "doks"
    """``doks`` selects nodes by DOKS' ``gpu-brand`` label; ``generic`` relies on the GPU
    request alone (no portable GPU node label exists across providers)."""
    preset: Literal["gauge", "vllm"] = "gauge"
    """``gauge``: the tutorial's workload (``gpuscale app``) scaled on its gauge;
    ``vllm``: a vLLM server scaled on its requests waiting + running."""
    model: str = "llama-3.1-8b"
    """With ``vllm``: the open model served (a ``gpuscale.serving.presets.MODELS`` key)."""
    image: str | None = None
    """Container image; default ``ghcr.io/gpuscale/gpuscale:<version>`` (entrypoint
    ``gpuscale app``), or the pinned vLLM image of the vendor with ``vllm``."""
    metric: str = "my_custom_gauge"
    """The gauge the workload exports and the ScaledObject scales on (``gauge`` only)."""
    threshold: float | None = None
    """Target value of the summed metric per replica (KEDA ``threshold``): 80 for the
    gauge; with ``vllm`` derived from the preset's capacity unless given."""
    min_replicas: int = 1
    """Lowest replica count; at least 1 for the gauge, since its metric comes from the pods
    themselves; 0 is allowed with ``vllm`` (the CLI warns about cold starts)."""
    max_replicas: int = 8
    """Highest replica count (each replica holds one GPU)."""
    prometheus_release: str = "prometheus"
    """Helm release name of kube-prometheus-stack (the ServiceMonitor's ``release`` label)."""
    prometheus_namespace: str = "monitoring"
    """Namespace kube-prometheus-stack runs in (the query's server address)."""
    scrape_interval: str = "15s"
    """How often Prometheus scrapes the workload: the ServiceMonitor endpoint's
    ``interval`` and the profile's ``prometheus.scrape_interval`` (a duration, at least
    1s; 15s matches the HPA's sync period)."""

    @property
    def port(self) -> int:
        """Port the server listens on: ``gpuscale app``'s 8080, vLLM's 8000."""
        return VLLM_PORT if self.preset == "vllm" else 8080

    def image_ref(self) -> str:
        """The image written: :attr:`image`, else the preset's default."""
        if self.image:
            return self.image
        if self.preset == "vllm":
            return VLLM_IMAGES[self.gpu]
        return f"{DEFAULT_IMAGE}:{__version__}"

    def gauge_threshold(self) -> float:
        return 80.0 if self.threshold is None else self.threshold

    def check(self) -> None:
        """Raise :class:`InputError` (naming the flag) for an option Kubernetes would reject."""
        if problem := name_problem(self.name, "dns1035-label"):
            raise InputError(
                f"{self.name!r} cannot name the Service (nor the Deployment, ServiceMonitor "
                f"and ScaledObject that share it): it {problem}",
                where="--name",
                fix=f"use a name such as {suggest_name(self.name, 'dns1035-label')}",
            )
        for flag, value in (
            ("--namespace", self.namespace),
            ("--prometheus-namespace", self.prometheus_namespace),
        ):
            if problem := name_problem(value, "dns1123-label"):
                raise InputError(
                    f"{value!r} is not a valid namespace: it {problem}",
                    where=flag,
                    fix=f"use a namespace such as {suggest_name(value, 'dns1123-label')}",
                )
        if self.preset == "vllm":
            self._check_vllm()
        elif self.min_replicas < 1:
            raise InputError(
                f"min replicas {self.min_replicas} is below 1",
                where="--min-replicas",
                fix="use 1 or more: the scaling metric comes from the pods themselves, so at "
                "0 replicas there is no series and nothing can scale the workload back up",
            )
        if self.max_replicas < self.min_replicas:
            raise InputError(
                f"max replicas {self.max_replicas} is below min replicas {self.min_replicas}",
                where="--max-replicas",
                fix="raise --max-replicas",
            )
        if self.threshold is not None and not self.threshold > 0:
            raise InputError(
                f"threshold {self.threshold:g} must be above 0",
                where="--threshold",
                fix="use the metric value one replica should handle, e.g. 80",
            )
        self.scrape_seconds()
        if not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", self.metric):
            raise InputError(
                f"{self.metric!r} is not a Prometheus metric name",
                where="--metric",
                fix="use letters, digits, '_' and ':', not starting with a digit",
            )

    def _check_vllm(self) -> None:
        from gpuscale.serving.presets import MODELS, presets  # noqa: PLC0415 - vllm only

        if self.model not in MODELS:
            raise InputError(
                f"unknown model {self.model!r}",
                where="--model",
                fix=f"use one of {', '.join(sorted(MODELS))}",
            )
        gpu_model = {"amd": "mi300x", "nvidia": "h100"}[self.gpu]
        if (gpu_model, self.model) not in presets():
            raise InputError(
                f"{self.model} does not fit one {gpu_model} GPU with room for its KV cache",
                where="--model",
                fix="choose a smaller model, e.g. --model llama-3.1-8b",
            )
        if self.min_replicas < 0:
            raise InputError(
                f"min replicas {self.min_replicas} is below 0",
                where="--min-replicas",
                fix="use 0 or more",
            )

    def scrape_seconds(self) -> float:
        """:attr:`scrape_interval` in seconds; :class:`InputError` naming the flag if bad."""
        try:
            seconds = parse_duration(self.scrape_interval)
        except ValueError as exc:
            raise InputError(str(exc), where="--scrape-interval", fix="e.g. 15s or 1m") from None
        if seconds < 1:
            raise InputError(
                f"{self.scrape_interval} is shorter than 1s",
                where="--scrape-interval",
                fix="use 1s or more; 15s matches the HPA's sync period",
            )
        return seconds

    def scrape_text(self) -> str:
        """:attr:`scrape_interval` as a Prometheus duration (``15s``, ``1m30s``, ``1500ms``)."""
        seconds = self.scrape_seconds()
        if seconds != int(seconds):
            return f"{round(seconds * 1000)}ms"
        return format_duration(seconds)


@dataclass(frozen=True)
class ScaffoldFile:
    """One file ``gpuscale init`` writes."""

    name: str
    """Path inside the target directory: ``manifests/<kind>.yaml`` for the four manifests
    (so that ``kubectl apply -f DIR/manifests`` takes them) and ``gpuscale.yaml``."""
    text: str
    """Its content."""
    manifest: bool = True
    """Whether it holds Kubernetes objects (``False`` for the profile)."""


def _labels(options: ScaffoldOptions) -> dict[str, str]:
    return {"app.kubernetes.io/name": options.name}


def _threshold(value: float) -> str:
    return f"{value:g}"


def scaffold_objects(
    options: ScaffoldOptions,
) -> list[Placed]:
    """``(file name, object, comments by key path)`` for the four manifests."""
    options.check()
    labels = _labels(options)
    resource = _GPU_RESOURCE[options.gpu]
    pod_spec: dict[str, Any] = {}
    pod_comments: dict[KeyPath, str] = {}
    spec_path: KeyPath = ("spec", "template", "spec")
    if options.provider == "doks":
        pod_spec["nodeSelector"] = {"doks.digitalocean.com/gpu-brand": options.gpu}
        pod_comments[(*spec_path, "nodeSelector")] = (
            "DOKS labels its GPU nodes doks.digitalocean.com/gpu-brand: amd|nvidia."
        )
    else:
        pod_comments[(*spec_path, "tolerations")] = (
            "No nodeSelector: no GPU node label is common to all providers, and the\n"
            f"{resource} request below already keeps the pod off nodes without GPUs."
        )
    pod_spec["tolerations"] = [{"key": resource, "operator": "Exists", "effect": "NoSchedule"}]
    if options.provider == "doks":
        pod_comments[(*spec_path, "tolerations")] = (
            f"DOKS taints GPU nodes {resource}:NoSchedule; tolerate that taint and no other\n"
            "(not CriticalAddonsOnly, which is for system add-ons)."
        )
    if options.preset == "vllm":
        placed = vllm_objects(options, labels, pod_spec)
        placed[0][2].update(pod_comments)
        return placed
    pod_spec["terminationGracePeriodSeconds"] = 30
    pod_spec["securityContext"] = {"runAsNonRoot": True}
    container_path: KeyPath = (*spec_path, "containers", 0)
    pod_spec["containers"] = [
        {
            "name": "app",
            "image": options.image_ref(),
            "args": ["--port", str(options.port)],
            "ports": [{"name": "http", "containerPort": options.port}],
            "readinessProbe": {
                "httpGet": {"path": "/readyz", "port": "http"},
                "periodSeconds": 5,
            },
            "livenessProbe": {
                "httpGet": {"path": "/healthz", "port": "http"},
                "periodSeconds": 10,
            },
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi", resource: 1},
                "limits": {"memory": "256Mi", resource: 1},
            },
        }
    ]
    pod_comments[(*container_path, "image")] = (
        "The image runs `gpuscale app`: nothing is compiled or installed at start."
    )
    pod_comments[(*container_path, "resources")] = "GPUs are whole and not shared: request = limit."
    pod_comments[(*container_path, "readinessProbe")] = (
        "Ready only when serving, so the Service and the HPA count it only then."
    )
    server = prometheus_server(options)
    query = f'sum({options.metric}{{namespace="{options.namespace}", service="{options.name}"}})'
    trigger_path: KeyPath = ("spec", "triggers", 0)
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": options.name, "namespace": options.namespace},
        "spec": {
            "scaleTargetRef": {"name": options.name},
            "minReplicaCount": options.min_replicas,
            "maxReplicaCount": options.max_replicas,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        "scaleUp": {
                            "stabilizationWindowSeconds": 0,
                            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}],
                        },
                        "scaleDown": {
                            "stabilizationWindowSeconds": 600,
                            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}],
                        },
                    }
                }
            },
            "triggers": [
                {
                    "type": "prometheus",
                    "metricType": "AverageValue",
                    "metadata": {
                        "serverAddress": server,
                        "query": query,
                        "threshold": _threshold(options.gauge_threshold()),
                        "ignoreNullValues": "false",
                    },
                }
            ],
        },
    }
    scaled_comments: dict[KeyPath, str] = {
        ("spec", "minReplicaCount"): (
            "No cooldownPeriod: with minReplicaCount >= 1 KEDA never reads it; scale-down\n"
            "pacing is the HPA behavior below."
        ),
        ("spec", "advanced"): (
            "Scale down slowly: a GPU node added for a replica lives 10-20 min anyway\n"
            "(cluster-autoscaler scale-down delays), so flapping only costs start-ups."
        ),
        (*trigger_path, "metricType"): (
            "AverageValue: the HPA wants ceil(query / threshold) replicas, so the query\n"
            "is the total over all pods, not already divided by the replica count."
        ),
        (*trigger_path, "metadata", "query"): (
            "Scoped to this workload's series; sum() returns exactly one."
        ),
        (*trigger_path, "metadata", "ignoreNullValues"): (
            "An empty result (no scrape) is an error KEDA reports, not a silent 0."
        ),
    }
    return [
        deployment(options, labels, pod_spec, pod_comments),
        service(
            options,
            labels,
            options.port,
            "The ServiceMonitor's endpoint refers to this port by its name.",
        ),
        service_monitor(options, labels),
        ("manifests/scaledobject.yaml", scaled, scaled_comments),
    ]


def scaffold(options: ScaffoldOptions) -> tuple[ScaffoldFile, ...]:
    """The files of a corrected set: four manifests and ``gpuscale.yaml``."""
    files = [
        ScaffoldFile(name, render([body], comments={0: comments}))
        for name, body, comments in scaffold_objects(options)
    ]
    files.append(ScaffoldFile("gpuscale.yaml", _profile_text(options), manifest=False))
    return tuple(files)


def _profile_text(options: ScaffoldOptions) -> str:
    resource = _GPU_RESOURCE[options.gpu]
    if options.provider == "doks":
        pools = f"""\
node_pools:
  # Prometheus, KEDA, kube-system and other non-GPU pods.
  - name: general
    size: s-4vcpu-8gb
    count: 2
  # GPU vendor, GPUs per node, vCPU, memory and price come from the size's catalogue
  # entry; DOKS adds the gpu-brand/gpu-model/node-pool labels and the {resource} taint.
  - name: gpu
    size: {_DOKS_GPU_SIZE[options.gpu]}
    min_nodes: 0
    max_nodes: {options.max_replicas}
    provisioning_time: {format_duration(NODE_PROVISIONING_SECONDS)}
"""
    else:
        pools = f"""\
node_pools:
  - name: general
    size: general-node
    gpu: none
    cpu: 4
    memory: 16Gi
    price_per_hour: 0.20   # your provider's price
    count: 2
  - name: gpu
    size: gpu-node
    gpu: {options.gpu}
    gpus_per_node: 1
    cpu: 16
    memory: 128Gi
    price_per_hour: 2.50   # your provider's price
    taints:
      - key: {resource}
        effect: NoSchedule
    min_nodes: 0
    max_nodes: {options.max_replicas}
    provisioning_time: {format_duration(NODE_PROVISIONING_SECONDS)}
"""
    return f"""\
# gpuscale profile: what the manifests do not say. Every key is optional;
# `gpuscale profile show gpuscale.yaml` prints the effective values, docs/profile.md
# explains each one.
cluster:
  provider: {options.provider}
{pools}prometheus:
  release: {options.prometheus_release}
  namespace: {options.prometheus_namespace}
  scrape_interval: {options.scrape_text()}   # the ServiceMonitor's interval too
workloads:
  {options.name}:
{_workload_text(options)}"""


def _workload_text(options: ScaffoldOptions) -> str:
    if options.preset == "vllm":
        return vllm_workload_profile(options)
    return """\
    image_pull_time: 20s
    startup_time: 5s
    concurrency: 4
    service_time: 200ms
    latency_target: 1s
"""
