"""Rules on the signals an LLM server is scaled by (vLLM's metrics, GPU utilisation).

An LLM server is recognised by what the set says: a trigger that reads a ``vllm:``
metric, or a target workload whose container image, command or arguments name vLLM.
A profile whose workload has ``serving.kind: vllm`` says so too. The arithmetic in the
findings uses the serving model (:mod:`gpuscale.serving`): the preset of the GPU × model
the profile names when it does, else H100 × Llama-3.1-8B, said so in the finding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuscale.kube import format_duration
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._keda import ScaledObjectView
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    PromTrigger,
    decided_scaled_objects,
    fmt,
    prometheus_triggers,
    target_workload,
)
from gpuscale.manifests import Workload
from gpuscale.serving import METRICS
from gpuscale.serving.presets import ServingPreset, preset

if TYPE_CHECKING:
    from gpuscale.profile import ServingSpec

__all__ = ["DEPRECATED_VLLM_METRICS", "REMOVED_VLLM_METRICS"]

_KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
_GPU_UTILISATION = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "gpu_gfx_activity",
    "nvidia_gpu_duty_cycle",
    "container_accelerator_duty_cycle",
)
"""Busy-time gauges: NVIDIA's DCGM exporter, AMD's Device Metrics Exporter, cAdvisor's."""
_DEMAND_QUERY = (
    'sum(vllm:num_requests_waiting{namespace="ml", service="chat"})'
    ' + sum(vllm:num_requests_running{namespace="ml", service="chat"})'
)
REMOVED_VLLM_METRICS = {
    "vllm:num_requests_swapped": "no replacement: the v1 engine preempts by recompute, never swaps",
    "vllm:cpu_cache_usage_perc": "no replacement: the v1 engine has no CPU swap space",
    "vllm:gpu_prefix_cache_hit_rate": (
        "rate(vllm:prefix_cache_hits_total[5m]) / rate(vllm:prefix_cache_queries_total[5m])"
    ),
    "vllm:cpu_prefix_cache_hit_rate": "no replacement: the v1 engine has no CPU cache",
    "vllm:avg_prompt_throughput_toks_per_s": "rate(vllm:prompt_tokens_total[1m])",
    "vllm:avg_generation_throughput_toks_per_s": "rate(vllm:generation_tokens_total[1m])",
    "vllm:time_in_queue_requests": "vllm:request_queue_time_seconds",
    "vllm:tokens_total": "vllm:prompt_tokens_total + vllm:generation_tokens_total",
}
"""v0 metric names the v1 engine (and so the pinned v0.11 line) does not export, and what
to read instead (vLLM ``docs/design/metrics.md``, "Deprecated Metrics")."""
DEPRECATED_VLLM_METRICS = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
}
"""Still exported by the pinned line beside their replacements, marked DEPRECATED in
their help text (``vllm/v1/metrics/loggers.py``); later lines drop them."""
_SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created")
_EXPORTED = frozenset(spec.name for spec in METRICS)
_DEFAULT_PRESET = ("h100", "llama-3.1-8b")


def _family(name: str) -> str:
    """The metric family of a series name (``_bucket``/``_total``... removed)."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name.removesuffix(suffix) in (
            _EXPORTED | set(REMOVED_VLLM_METRICS)
        ):
            return name.removesuffix(suffix)
    return name


def _metrics(trig: PromTrigger) -> set[str]:
    query = trig.query
    if query is None or not query.parsed:
        return set()
    return {_family(s.metric) for s in query.selectors if s.metric}


def _names_vllm(work: Workload | None) -> bool:
    if work is None:
        return False
    return any(
        "vllm" in " ".join((c.image or "", *c.command, *c.args)).lower() for c in work.containers
    )


def _is_llm_server(ctx: LintContext, so: ScaledObjectView) -> bool:
    reads_vllm = any(
        any(m.startswith("vllm:") for m in _metrics(t))
        for t in prometheus_triggers(ctx)
        if t.so is so
    )
    work = target_workload(ctx, so)
    return reads_vllm or _names_vllm(work) or _serving(ctx, work) is not None


def _serving(ctx: LintContext, work: Workload | None) -> ServingSpec | None:
    """The profile's ``serving`` of the workload when it is ``kind: vllm``."""
    if ctx.profile is None or work is None:
        return None
    serving = ctx.profile.workload(work.name).serving
    return serving if serving.kind == "vllm" else None


def _preset_for(ctx: LintContext, so: ScaledObjectView) -> tuple[ServingPreset, str]:
    """The serving preset the arithmetic uses and how it was chosen."""
    serving = _serving(ctx, target_workload(ctx, so))
    if serving is not None and serving.preset is not None:
        gpu, _, model = serving.preset.partition("/")
        return preset(gpu, model), f"the profile's serving preset {serving.preset}"
    gpu, model = _DEFAULT_PRESET
    return preset(gpu, model), f"{gpu}/{model} (the profile names no serving preset)"


@rule(
    "kv-cache-only-trigger",
    severity=Severity.WARNING,
    title="An LLM server is scaled on its KV-cache usage alone",
    explanation=(
        "vLLM's `vllm:kv_cache_usage_perc` (and the older `vllm:gpu_cache_usage_perc`) is "
        "the fraction of KV blocks held by *running* requests. Waiting requests hold no "
        "blocks, and at most `max_num_seqs` requests run (`Scheduler.schedule` in "
        "`vllm/v1/core/sched/scheduler.py`), so the gauge tops out at "
        "`max_num_seqs × blocks per request / blocks` however long the queue grows: with "
        "short requests it can sit far below the threshold while requests wait minutes "
        "(users report low KV usage, few running and many pending requests, "
        "vllm-project/vllm#13508). Scale on demand (`vllm:num_requests_waiting` + "
        "`vllm:num_requests_running`) and keep KV usage, if at all, as a second trigger."
    ),
    example=snippet({"metadata": {"query": "avg(vllm:kv_cache_usage_perc)", "threshold": "0.8"}}),
    fix=snippet({"metadata": {"query": _DEMAND_QUERY, "threshold": "64"}}),
)
def _kv_cache_only(ctx: LintContext) -> Iterator[Hit]:
    by_so: dict[int, list[PromTrigger]] = {}
    for trig in prometheus_triggers(ctx):
        by_so.setdefault(id(trig.so), []).append(trig)
    for triggers in by_so.values():
        read = [_metrics(t) for t in triggers]
        if not all(names and names <= set(_KV) for names in read):
            continue
        if len(triggers) != len(triggers[0].so.triggers):
            continue  # another (non-Prometheus) trigger can carry demand
        trig = triggers[0]
        chosen, how = _preset_for(ctx, trig.so)
        engine = chosen.engine_config()
        blocks = math.ceil((256 + 128) / engine.block_size)
        ceiling = engine.max_num_seqs * blocks / engine.usable_blocks
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message="the only trigger reads KV-cache usage, which stops rising once the batch "
            "is full: the queue can grow without the replica count moving",
            why=(
                "Waiting requests hold no KV blocks, and at most max_num_seqs run. With "
                f"{how}: max_num_seqs {engine.max_num_seqs} requests of 256 + 128 tokens hold "
                f"{engine.max_num_seqs} × {blocks} = {engine.max_num_seqs * blocks} of "
                f"{engine.usable_blocks} blocks, a usage of {fmt(ceiling)} at most, while any "
                "number of requests wait behind them. A threshold above that is never reached."
            ),
            fix=snippet({"metadata": {"query": _DEMAND_QUERY}})
            + "\n# requests waiting + running, summed; threshold: requests per replica",
        )


@rule(
    "gpu-utilization-trigger-llm",
    severity=Severity.WARNING,
    title="An LLM server is scaled on GPU utilisation",
    explanation=(
        "DCGM's `DCGM_FI_DEV_GPU_UTIL` (AMD's `gpu_gfx_activity`) is the fraction of time a "
        "kernel was running, not how much of the GPU it used. A continuously batching "
        "server runs a kernel for every engine step whether the batch holds 1 sequence or "
        "256, so the gauge reads near 100 % from the first steady request on, while the "
        "throughput it delivers differs by two orders of magnitude: the HPA scales to the "
        "maximum under light load, or (if the threshold is above what the gauge reaches) "
        "never. Users see it move against load too (vllm-project/vllm#6105: 94 % at 1 "
        "concurrent request, 56 % at 100; #3257: 65-75 % whatever the settings). Scale on "
        "`vllm:num_requests_waiting` + `vllm:num_requests_running`."
    ),
    example=snippet({"metadata": {"query": "avg(DCGM_FI_DEV_GPU_UTIL)", "threshold": "80"}}),
    fix=snippet({"metadata": {"query": _DEMAND_QUERY, "threshold": "64"}}),
)
def _gpu_utilisation(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        busy = sorted(_metrics(trig) & set(_GPU_UTILISATION))
        if not busy or not _is_llm_server(ctx, trig.so):
            continue
        chosen, how = _preset_for(ctx, trig.so)
        cost = chosen.step_cost()
        one = cost.seconds(0, 1, 1024)
        many = cost.seconds(0, 64, 64 * 1024)
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=f"{busy[0]} is busy time: an LLM server is near 100 % at any batch size",
            why=(
                f"With {how}, one decode step for 1 sequence of 1024 tokens takes "
                f"{fmt(one * 1000)} ms ({fmt(1 / one)} tokens/s) and for 64 such sequences "
                f"{fmt(many * 1000)} ms ({fmt(64 / many)} tokens/s): the GPU is busy for the "
                f"whole step both times, so the gauge reads the same while throughput "
                f"differs {fmt(64 * one / many)}×."
            ),
            fix=snippet({"metadata": {"query": _DEMAND_QUERY}})
            + "\n# requests waiting + running, summed; threshold: requests per replica",
        )


@rule(
    "llm-scale-to-zero-no-wait",
    severity=Severity.WARNING,
    title="An LLM server scales to zero with a model load of minutes and nothing to hold "
    "the first requests",
    explanation=(
        "At zero replicas the first request waits for a GPU node, the image pull (vLLM "
        "images are several GB) and the model load (minutes for a large model) before any "
        "replica answers. Nothing in the set holds it meanwhile: without KEDA's HTTP "
        "add-on (an `HTTPScaledObject`, whose interceptor queues requests while a replica "
        "starts, kedacore/http-add-on) the Service has no endpoints and the request fails "
        "at once, and clients and gateways give up long before a cold start ends (ingress-"
        "nginx's `proxy-read-timeout` is 60 s). And a vLLM trigger cannot wake it: at zero "
        "replicas no pod exports `vllm:*`."
    ),
    example=snippet({"spec": {"minReplicaCount": 0}}),
    fix=snippet({"spec": {"minReplicaCount": 1}})
    + "\n# or put KEDA's HTTP add-on (HTTPScaledObject) in front, with a wait timeout"
    "\n# longer than the cold start",
)
def _scale_to_zero_no_wait(ctx: LintContext) -> Iterator[Hit]:
    held = {
        (ctx.namespace_of(obj), obj.get(("spec", "scaleTargetRef", "name")))
        for obj in ctx.of_kind("HTTPScaledObject")
    }
    for so in decided_scaled_objects(ctx):
        spec = so.spec
        assert spec is not None
        if not (spec.min_replica_count == 0 or spec.idle_replica_count == 0):
            continue
        if not _is_llm_server(ctx, so):
            continue
        work = target_workload(ctx, so)
        name = work.name if work is not None else (so.target[1] if so.target else None)
        if (ctx.namespace_of(so.obj), name) in held:
            continue
        cold, how = _cold_start(ctx, work)
        if cold < 60:
            continue
        yield Hit(
            obj=so.obj,
            key_path=("spec", "minReplicaCount") if spec.min_replica_count_set else ("spec",),
            message=(
                f"minReplicaCount 0: the first request after idle waits {format_duration(cold)} "
                "for a cold start, and nothing in the set holds it"
            ),
            why=(
                f"A cold start is {how}. At zero replicas the Service has no endpoint, so a "
                "request fails at once (or at the client's timeout, typically 60 s) unless "
                "something queues it; and the replica count only leaves zero on a signal "
                "from outside the pods, since none exports vllm:* metrics."
            ),
            fix=snippet({"spec": {"minReplicaCount": 1}})
            + "\n# or KEDA's HTTP add-on in front, its wait timeout above the cold start",
        )


def _cold_start(ctx: LintContext, work: Workload | None) -> tuple[float, str]:
    """Seconds of a cold start and how it is made up (the profile's when it has one)."""
    if ctx.profile is None or work is None:
        return 300.0, "assumed 5m (no profile: image pull and model load of a vLLM server)"
    spec = ctx.profile.workload(work.name)
    parts = [(spec.image_pull_time, "image pull"), (spec.startup_time, "start-up")]
    pools = [
        p for p in ctx.profile.gpu_pools if p.gpu_resource in work.gpus_per_pod and p.lowest == 0
    ]
    if pools:
        slowest = max(pools, key=lambda p: p.provisioning_time)
        parts.insert(0, (slowest.provisioning_time, f"a {slowest.name} node"))
    total = sum(seconds for seconds, _ in parts)
    detail = " + ".join(f"{what} {format_duration(seconds)}" for seconds, what in parts)
    return total, f"{detail} (from the profile)"


@rule(
    "vllm-metric-not-exported",
    severity=Severity.ERROR,
    title="A trigger reads a vLLM metric the pinned vLLM line does not export",
    explanation=(
        "gpuscale models vLLM's v0.11 line (`gpuscale.serving`), whose v1 engine dropped "
        'several v0 metrics (vLLM `docs/design/metrics.md`, "Deprecated Metrics"): '
        "`vllm:num_requests_swapped` and `vllm:cpu_cache_usage_perc` (no swap space any "
        "more), the prefix-cache hit-rate gauges (now `prefix_cache_hits`/`_queries` "
        "counters), `vllm:avg_prompt_throughput_toks_per_s` and "
        "`vllm:avg_generation_throughput_toks_per_s` (removed, noticed by a user only "
        "afterwards: vllm-project/vllm#13218). A query on a missing series returns "
        "nothing, which KEDA reads as 0 (or as an error with `ignoreNullValues: false`): "
        "the workload never scales up. `vllm:gpu_cache_usage_perc` and "
        "`vllm:time_per_output_token_seconds` are still exported, marked DEPRECATED in "
        "their help text (a warning): later lines drop them."
    ),
    example=snippet({"metadata": {"query": "sum(vllm:num_requests_swapped)"}}),
    fix=snippet({"metadata": {"query": "sum(vllm:num_requests_waiting)"}}),
)
def _vllm_metric(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        for name in sorted(_metrics(trig)):
            if name in REMOVED_VLLM_METRICS:
                instead = REMOVED_VLLM_METRICS[name]
                yield Hit(
                    obj=trig.obj,
                    key_path=trig.path("query"),
                    message=f"{name} is not exported by vLLM's v1 engine (the v0.11 line)",
                    why=(
                        f"The query selects no series, so KEDA reads 0 (or errors) and the "
                        f"workload never scales on it. Instead: {instead}."
                    ),
                    fix=snippet({"metadata": {"query": instead}})
                    if instead.startswith(("vllm:", "rate("))
                    else snippet({"metadata": {"query": _DEMAND_QUERY}}),
                )
            elif name in DEPRECATED_VLLM_METRICS:
                instead = DEPRECATED_VLLM_METRICS[name]
                yield Hit(
                    obj=trig.obj,
                    key_path=trig.path("query"),
                    severity=Severity.WARNING,
                    message=f"{name} is deprecated: use {instead}",
                    why=(
                        f"vLLM's v0.11 line exports {name} beside {instead} with DEPRECATED in "
                        "its help text; a vLLM upgrade removes it and the query then selects "
                        "nothing."
                    ),
                    fix=snippet({"metadata": {"query": trig.trigger.query or ""}}).replace(
                        name, instead
                    ),
                )
