"""``gpuscale init --preset vllm``: the manifests a careful engineer deploys a vLLM server with.

Pure, like :mod:`.scaffold` (which calls it): options in, objects and comments out. What it
writes, and why (each object's comments repeat the why):

- Deployment: the vLLM server image pinned by version (``vllm/vllm-openai:v0.11.0`` for
  NVIDIA; AMD's ``rocm/vllm`` build of the same vLLM line for AMD, whose entrypoint is a
  shell, so the command is ``vllm serve`` for both), the model and the engine settings of
  the serving preset as arguments, a GPU request = limit, ``/dev/shm`` as a memory
  ``emptyDir`` (PyTorch shares tensors through it; a container's default 64 MiB is too
  small), readiness on ``/health`` (vLLM answers it once the engine is up), a start-up
  probe long enough for the model load, and a Hugging Face token from an optional Secret.
- Service and ServiceMonitor on port 8000 (vLLM's default ``--port``; ``/metrics`` is
  served on the same port), the ServiceMonitor in the **app's** namespace with a
  ``namespaceSelector`` naming it (the tutorial put it in ``kube-system``, where it
  selected nothing).
- ScaledObject: ``vllm:num_requests_waiting`` + ``vllm:num_requests_running``, summed over
  the workload's series, with ``metricType: AverageValue`` against a per-replica target
  derived from the preset (:func:`concurrency_target`), so the HPA divides the total by the
  replica count once (docs/scaling-semantics.md §1); HPA behavior for cold starts of
  minutes: scale up at once, scale down only after a window longer than a cold start.
- The profile's workload: ``serving: {kind: vllm, preset: <gpu>/<model>}``, an image pull
  and a start-up time sized for a multi-GB image and the model's weights
  (:func:`startup_seconds`), all approximate and said so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gpuscale.kube import format_duration
from gpuscale.manifests._model import KeyPath
from gpuscale.manifests._scaffold_parts import (
    Placed,
    deployment,
    prometheus_server,
    service,
    service_monitor,
)
from gpuscale.serving.presets import MODELS, ServingPreset, preset

if TYPE_CHECKING:
    from gpuscale.manifests.scaffold import ScaffoldOptions

__all__ = [
    "NODE_PROVISIONING_SECONDS",
    "VLLM_IMAGES",
    "VLLM_PORT",
    "concurrency_target",
    "image_pull_seconds",
    "serving_preset",
    "startup_seconds",
    "vllm_objects",
    "vllm_workload_profile",
]

VLLM_PORT = 8000
"""vLLM's ``--port`` default; the OpenAI API and ``/metrics`` share it."""
VLLM_IMAGES = {
    "nvidia": "vllm/vllm-openai:v0.11.0",
    "amd": "rocm/vllm:rocm7.0.0_vllm_0.11.2_20251210",
}
"""The vLLM line ``gpuscale.serving`` models (v0.11), one image per vendor."""
_GPU_MODEL = {"amd": "mi300x", "nvidia": "h100"}
"""The GPU of each vendor's DOKS size (``gpu-mi300x1-192gb``, ``gpu-h100x1-80gb``)."""
_IMAGE_GB = {"amd": 20.0, "nvidia": 10.0}
"""Approximate unpacked image sizes (the ROCm build carries the whole ROCm stack)."""
_PULL_BYTES_PER_SECOND = 100e6
"""Assumed registry-to-node throughput for the pull and the weights' download."""
NODE_PROVISIONING_SECONDS = 600.0
"""The GPU pool's ``provisioning_time`` both presets' profiles write (10m)."""
_ENGINE_INIT_SECONDS = 90.0
"""Assumed engine start beside the weights: profiling, CUDA/HIP graph capture, warm-up."""
_PROMPT_TOKENS = 1024
_OUTPUT_TOKENS = 256
_ITL_SLOWDOWN = 2.0


def serving_preset(options: ScaffoldOptions) -> ServingPreset:
    """The serving preset the scaffold sizes itself by: the vendor's GPU × ``--model``."""
    return preset(_GPU_MODEL[options.gpu], options.model)


def concurrency_target(chosen: ServingPreset) -> tuple[int, str]:
    """Requests (waiting + running) one replica should carry, and the arithmetic.

    The smallest of: ``max_num_seqs``; the sequences of a 1024-token prompt and 256
    output tokens the KV cache holds; and the batch at which a decode step takes twice a
    single stream's (``base × (2 − 1) / (decode_seq + context_token × mean context)``),
    i.e. the inter-token latency a user sees is at most twice the idle server's.
    """
    cost = chosen.step_cost()
    engine = chosen.engine_config()
    context = _PROMPT_TOKENS + _OUTPUT_TOKENS / 2
    per_seq = cost.decode_seq + cost.context_token * context
    by_itl = math.floor(cost.base * (_ITL_SLOWDOWN - 1) / per_seq) if per_seq > 0 else 10**9
    blocks_per_request = math.ceil((_PROMPT_TOKENS + _OUTPUT_TOKENS) / engine.block_size)
    by_kv = engine.usable_blocks // blocks_per_request
    target = max(1, min(engine.max_num_seqs, by_kv, by_itl))
    why = (
        f"min(max_num_seqs {engine.max_num_seqs}, KV cache {by_kv} requests of "
        f"{_PROMPT_TOKENS}+{_OUTPUT_TOKENS} tokens, {by_itl} sequences at which a decode "
        f"step is {_ITL_SLOWDOWN:g}x the idle one) = {target}"
    )
    return target, why


def image_pull_seconds(options: ScaffoldOptions) -> float:
    """An image pull of the vendor's vLLM image at the assumed throughput, whole minutes."""
    return _minutes(_IMAGE_GB[options.gpu] * 1e9 / _PULL_BYTES_PER_SECOND)


def startup_seconds(options: ScaffoldOptions) -> float:
    """Container start to ``/health``: download the BF16 weights, then the engine's init."""
    weights = MODELS[options.model].weight_bytes
    return _minutes(weights / _PULL_BYTES_PER_SECOND + _ENGINE_INIT_SECONDS)


def _minutes(seconds: float) -> float:
    return 60.0 * math.ceil(seconds / 60.0)


def vllm_objects(
    options: ScaffoldOptions, labels: dict[str, str], pod_spec: dict[str, Any]
) -> list[Placed]:
    """The four manifests for a vLLM server; ``pod_spec`` holds the node placement already."""
    chosen = serving_preset(options)
    engine = chosen.engine_config()
    model = MODELS[options.model]
    resource = "amd.com/gpu" if options.gpu == "amd" else "nvidia.com/gpu"
    startup = startup_seconds(options)
    probe_period = 10
    spec_path: KeyPath = ("spec", "template", "spec")
    container_path: KeyPath = (*spec_path, "containers", 0)
    comments: dict[KeyPath, str] = {}
    pod_spec["terminationGracePeriodSeconds"] = 120
    comments[(*spec_path, "terminationGracePeriodSeconds")] = (
        "Time for requests in flight to finish after SIGTERM (a long generation takes a minute)."
    )
    pod_spec["volumes"] = [
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        {"name": "cache", "emptyDir": {}},
    ]
    comments[(*spec_path, "volumes")] = (
        "shm: PyTorch shares tensors through /dev/shm; a container's default 64 MiB is\n"
        "too small. cache: the weights' download; a PersistentVolume or a node-local\n"
        "cache here shortens every cold start by the download."
    )
    pod_spec["containers"] = [
        {
            "name": "vllm",
            "image": options.image_ref(),
            "command": ["vllm", "serve"],
            "args": [
                model.repo,
                "--served-model-name",
                options.model,
                "--port",
                str(VLLM_PORT),
                "--max-num-seqs",
                str(engine.max_num_seqs),
                "--max-num-batched-tokens",
                str(engine.max_num_batched_tokens),
                "--block-size",
                str(engine.block_size),
                "--gpu-memory-utilization",
                "0.9",
            ],
            "env": [
                {"name": "HF_HOME", "value": "/cache"},
                {
                    "name": "HF_TOKEN",
                    "valueFrom": {
                        "secretKeyRef": {"name": "hf-token", "key": "token", "optional": True}
                    },
                },
            ],
            "ports": [{"name": "http", "containerPort": VLLM_PORT}],
            "startupProbe": {
                "httpGet": {"path": "/health", "port": "http"},
                "periodSeconds": probe_period,
                "failureThreshold": math.ceil(2 * startup / probe_period),
            },
            "readinessProbe": {
                "httpGet": {"path": "/health", "port": "http"},
                "periodSeconds": 5,
                "failureThreshold": 3,
            },
            "livenessProbe": {
                "httpGet": {"path": "/health", "port": "http"},
                "periodSeconds": 15,
                "failureThreshold": 4,
            },
            "resources": {
                "requests": {"cpu": "4", "memory": "32Gi", resource: 1},
                "limits": {"memory": "64Gi", resource: 1},
            },
            "volumeMounts": [
                {"name": "shm", "mountPath": "/dev/shm"},
                {"name": "cache", "mountPath": "/cache"},
            ],
        }
    ]
    comments[(*container_path, "image")] = (
        "vLLM pinned by version (the v0.11 line gpuscale's serving model follows);\n"
        "never :latest, whose metrics and flags change under you."
    )
    comments[(*container_path, "args")] = (
        f"The engine settings of the serving preset {chosen.gpu}/{chosen.model} (the profile's\n"
        "serving.preset): change them here and there together."
    )
    comments[(*container_path, "env")] = (
        "Gated models (Llama) need a token: kubectl create secret generic hf-token\n"
        "--from-literal=token=... in this namespace; optional, so open models start without."
    )
    comments[(*container_path, "startupProbe")] = (
        f"Up to {format_duration(2 * startup)} (twice the expected download and engine start of\n"
        f"{format_duration(startup)}) before the kubelet gives up; liveness waits for it."
    )
    comments[(*container_path, "readinessProbe")] = (
        "vLLM answers /health once the engine runs: only then does the Service send requests."
    )
    comments[(*container_path, "resources")] = "GPUs are whole and not shared: request = limit."
    return [
        deployment(options, labels, pod_spec, comments),
        service(options, labels, VLLM_PORT, "vLLM serves the API and /metrics on one port, 8000."),
        service_monitor(options, labels),
        ("manifests/scaledobject.yaml", *_scaled_object(options, chosen, startup)),
    ]


def _scaled_object(
    options: ScaffoldOptions, chosen: ServingPreset, startup: float
) -> tuple[dict[str, Any], dict[KeyPath, str]]:
    target, why = concurrency_target(chosen)
    threshold = options.threshold if options.threshold is not None else float(target)
    scope = f'{{namespace="{options.namespace}", service="{options.name}"}}'
    query = f"sum(vllm:num_requests_waiting{scope}) + sum(vllm:num_requests_running{scope})"
    server = prometheus_server(options)
    cold = startup + image_pull_seconds(options)
    down_window = int(max(900.0, _minutes(2 * cold)))
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": options.name},
        "minReplicaCount": options.min_replicas,
        "maxReplicaCount": options.max_replicas,
    }
    comments: dict[KeyPath, str] = {}
    if options.min_replicas == 0:
        spec["initialCooldownPeriod"] = int(_minutes(cold + NODE_PROVISIONING_SECONDS))
        spec["cooldownPeriod"] = down_window
        comments[("spec", "minReplicaCount")] = (
            f"0: every wake-up is a cold start of about {format_duration(cold)} (image and\n"
            "model) plus a GPU node; the metric comes from the pods, so at zero something\n"
            "else must wake it (another trigger on your gateway's requests, KEDA's HTTP\n"
            "add-on). initialCooldownPeriod covers the first start; cooldownPeriod keeps a\n"
            "replica through short idle spells."
        )
    else:
        comments[("spec", "minReplicaCount")] = (
            "At least one replica stays warm: a cold start costs minutes (image, model load)."
        )
    spec["advanced"] = {
        "horizontalPodAutoscalerConfig": {
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": down_window,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}],
                },
            }
        }
    }
    comments[("spec", "advanced")] = (
        "Scale up at once (a new replica serves only after its cold start); scale down one\n"
        f"replica per 5 min after {format_duration(down_window)} of lower demand, longer than a "
        "cold start,\nso a dip does not cost a replica that the next peak waits minutes for."
    )
    trigger: dict[str, Any] = {
        "type": "prometheus",
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": server,
            "query": query,
            "threshold": f"{threshold:g}",
            "ignoreNullValues": "false",
        },
    }
    trigger_path: KeyPath = ("spec", "triggers", 0)
    if options.min_replicas == 0:
        trigger["metadata"]["activationThreshold"] = "0"
        comments[(*trigger_path, "metadata", "activationThreshold")] = (
            "Any request waiting or running wakes the workload from zero."
        )
    spec["triggers"] = [trigger]
    comments[(*trigger_path, "metricType")] = (
        "AverageValue: the HPA wants ceil(total / threshold) replicas, so the query is the\n"
        "total over all pods, not divided by the replica count (that would divide twice)."
    )
    comments[(*trigger_path, "metadata", "query")] = (
        "Demand: requests waiting plus running. The KV-cache gauge alone can sit flat while\n"
        "the queue grows, and GPU utilisation is near 100% at any batch size."
    )
    source = "--threshold" if options.threshold is not None else why
    comments[(*trigger_path, "metadata", "threshold")] = f"Requests per replica: {source}."
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": options.name, "namespace": options.namespace},
        "spec": spec,
    }
    return scaled, comments


def vllm_workload_profile(options: ScaffoldOptions) -> str:
    """The ``workloads.<name>`` entry of the profile, as YAML lines (indented 4)."""
    chosen = serving_preset(options)
    return f"""\
    # A cold start: pull the vLLM image (about {_IMAGE_GB[options.gpu]:g} GB), then download
    # and load {chosen.model}'s weights (approximate: {_PULL_BYTES_PER_SECOND / 1e6:g} MB/s
    # assumed, plus {_ENGINE_INIT_SECONDS:g} s of engine start). Measure yours and replace them.
    image_pull_time: {format_duration(image_pull_seconds(options))}
    startup_time: {format_duration(startup_seconds(options))}
    # The serving model of docs/serving.md: the preset's engine and step cost
    # (approximate; `gpuscale calibrate URL` measures a real server and writes them here).
    serving:
      kind: vllm
      preset: {chosen.gpu}/{chosen.model}
    latency_target: 30s
"""
