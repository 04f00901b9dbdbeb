"""Rules that relate a ScaledObject to its target workload and to the environment:
GPU capacity, cold starts after scale-to-zero, and how often metrics are read vs scraped.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuscale.controllers.hpa import DEFAULT_SYNC_PERIOD_SECONDS
from gpuscale.kube import LabelSelector, format_duration
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._k8s import gpu_undecidable
from gpuscale.lint._keda import ScaledObjectView
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    decided_scaled_objects,
    fmt,
    scrape_interval_for,
    target_workload,
)
from gpuscale.manifests import KeyPath, Workload, is_templated

if TYPE_CHECKING:
    from gpuscale.profile import NodePool

__all__: list[str] = []


def _pool_fits(pool: NodePool, work: Workload) -> bool:
    """Whether the pod's nodeSelector allows the pool, judged on the labels the profile
    knows the pool's nodes carry (a key it does not list is given the benefit of the doubt)."""
    known = {
        key: value
        for key, value in work.node_selector.items()
        if key in pool.labels and not is_templated(value)
    }
    return LabelSelector.from_map(known).matches(pool.labels)


def _max_path(so: ScaledObjectView) -> KeyPath:
    set_ = so.spec is not None and so.spec.max_replica_count_set
    return ("spec", "maxReplicaCount") if set_ else ("spec",)


@rule(
    "max-exceeds-gpu-capacity",
    severity=Severity.WARNING,
    title="maxReplicaCount asks for more GPUs than the node pools can ever offer",
    explanation=(
        "Each replica needs its GPUs on one node; a pool offers at most `max_nodes × "
        "floor(GPUs per node / GPUs per pod)` replicas. Replicas beyond what the matching "
        "pools (same GPU vendor, labels compatible with the pod's nodeSelector) can hold "
        "stay Pending forever while the HPA keeps asking for them, and the scaling signal "
        "is built on replicas that will never run. `maxReplicaCount` defaults to 100. Needs "
        "the profile's node pools."
    ),
    example=snippet({"spec": {"maxReplicaCount": 8}})
    + "\n# profile: one pool of 1-GPU nodes with max_nodes: 4",
    fix=snippet({"spec": {"maxReplicaCount": 4}}) + "\n# or raise the GPU pool's max_nodes to 8",
    requires="profile",
)
def _max_exceeds_gpu_capacity(ctx: LintContext) -> Iterator[Hit]:
    if ctx.profile is None or not ctx.profile.node_pools:
        return
    for so in decided_scaled_objects(ctx):
        assert so.spec is not None
        maximum = so.spec.max_replica_count
        target = target_workload(ctx, so)
        if target is None or gpu_undecidable(target):
            continue
        for resource, amount in target.gpus_per_pod.items():
            need = int(amount)
            if need <= 0 or need != amount:
                continue
            pools = [
                p
                for p in ctx.profile.gpu_pools
                if p.gpu_resource == resource and _pool_fits(p, target)
            ]
            capacity = sum(p.highest * (p.gpus_per_node // need) for p in pools)
            if maximum <= capacity:
                continue
            defaulted = "" if so.spec.max_replica_count_set else " (the default)"
            if pools:
                per_pool = "; ".join(
                    f"pool {p.name}: at most {p.highest} nodes × {p.gpus_per_node // need} "
                    f"pod(s) per node = {p.highest * (p.gpus_per_node // need)}"
                    for p in pools
                )
                offer = f"the matching pools hold at most {capacity} such pods ({per_pool})"
            else:
                offer = f"no node pool in the profile offers {resource}"
            yield Hit(
                obj=so.obj,
                key_path=_max_path(so),
                message=(
                    f"maxReplicaCount {maximum}{defaulted} × {need} {resource} per pod = "
                    f"{maximum * need} GPUs, but {offer.split(' (')[0]}"
                ),
                why=(
                    f"Every replica of {target.kind} {target.name} needs {need} {resource} on "
                    f"one node, and {offer}. Replicas above {capacity} stay Pending however "
                    "long the load lasts, while the HPA keeps asking for them."
                ),
                fix=snippet({"spec": {"maxReplicaCount": max(capacity, 1)}})
                + "\n# or raise the GPU pool's max_nodes in the profile and the cluster",
            )


@rule(
    "scale-to-zero-slow-start",
    severity=Severity.WARNING,
    title="A GPU workload can be scaled to zero before it has started",
    explanation=(
        "With `minReplicaCount: 0`, a ScaledObject that has never been active (just created "
        "or re-created) is scaled to zero at KEDA's first poll that finds it inactive once "
        "`initialCooldownPeriod` (default 0) has passed since its creation "
        "(`RequestScale` → `scaleToZeroOrIdle` in `pkg/scaling/executor/"
        "scale_scaledobjects.go`; kedacore/keda#5008). A GPU workload that is still "
        "starting has no metric yet, which reads as 0: its pod is deleted and the next "
        "request waits for a full cold start (GPU node, image, model). Set "
        "`initialCooldownPeriod` to at least the workload's start-up time (from the "
        "profile when it says)."
    ),
    example=snippet({"spec": {"minReplicaCount": 0}}),
    fix=snippet({"spec": {"minReplicaCount": 0, "initialCooldownPeriod": 900}}),
)
def _scale_to_zero_slow_start(ctx: LintContext) -> Iterator[Hit]:
    for so in decided_scaled_objects(ctx):
        spec = so.spec
        assert spec is not None
        if not (spec.min_replica_count == 0 or spec.idle_replica_count == 0):
            continue
        target = target_workload(ctx, so)
        if target is None or not target.gpus_per_pod:
            continue
        startup = _startup(ctx, target)
        initial = spec.initial_cooldown_period
        if initial > 0 and (startup is None or initial >= startup[0]):
            continue
        if spec.initial_cooldown_period_set:
            path: KeyPath = ("spec", "initialCooldownPeriod")
        elif spec.min_replica_count_set:
            path = ("spec", "minReplicaCount")
        else:
            path = ("spec",)
        suggested = math.ceil(startup[0] / 60.0) * 60 if startup else 900
        if startup is not None:
            wait = f"its start-up time of {format_duration(startup[0])} ({startup[1]})"
        else:
            wait = "a cold start (a GPU node typically takes 5-15 minutes, then image and model)"
        when = "at its first poll" if initial == 0 else "before it has started"
        shown = str(initial) if spec.initial_cooldown_period_set else "unset (0)"
        yield Hit(
            obj=so.obj,
            key_path=path,
            message=(
                f"minReplicaCount 0 with initialCooldownPeriod {shown}: KEDA can scale the GPU "
                f"workload to zero {when}"
            ),
            why=(
                "A new ScaledObject has never been active, so KEDA scales an inactive workload "
                f"to zero as soon as initialCooldownPeriod ({initial} s) has passed since its "
                "creation. While a GPU replica is still starting it exports no metric, which "
                f"reads as 0 (inactive); its pod is deleted, and the next request waits for "
                f"{wait}."
            ),
            fix=snippet({"spec": {"minReplicaCount": 0, "initialCooldownPeriod": suggested}}),
        )


def _startup(ctx: LintContext, work: Workload) -> tuple[float, str] | None:
    """Seconds from a new replica being asked for to it serving, per the profile, and how
    that number is made up: a GPU node when the pool that offers the GPU can be empty,
    the image pull and the workload's own start-up."""
    if ctx.profile is None:
        return None
    spec = ctx.profile.workload(work.name)
    parts = [(spec.image_pull_time, "image pull"), (spec.startup_time, "start-up")]
    pools = [
        pool
        for pool in ctx.profile.gpu_pools
        if pool.gpu_resource in work.gpus_per_pod and pool.lowest == 0
    ]
    if pools:
        slowest = max(pools, key=lambda pool: pool.provisioning_time)
        parts.insert(0, (slowest.provisioning_time, f"a {slowest.name} node"))
    total = sum(seconds for seconds, _ in parts)
    detail = " + ".join(f"{what} {format_duration(seconds)}" for seconds, what in parts)
    return total, f"from the profile: {detail}"


def _readers(ctx: LintContext, so: ScaledObjectView) -> list[tuple[float, str]]:
    """Who reads the metric how often: KEDA's poll (when it matters) and the HPA's sync."""
    assert so.spec is not None
    sync = ctx.profile.hpa.sync_period if ctx.profile else DEFAULT_SYNC_PERIOD_SECONDS
    readers = [(sync, f"the HPA reads it every {fmt(sync)} s")]
    cached = any(t.use_cached_metrics for t in so.spec.triggers)
    if so.spec.scales_to_zero_or_idle or cached:
        interval = so.spec.polling_interval
        readers.append((float(interval), f"KEDA polls it every {interval} s"))
        if cached:
            readers = readers[1:]
    return readers


@rule(
    "polling-faster-than-scrape",
    severity=Severity.INFO,
    title="The metric is read much more often than Prometheus scrapes it",
    explanation=(
        "A series changes once per scrape. KEDA polls it every `pollingInterval` (when it "
        "can scale to zero) and the HPA reads it through KEDA every sync (15 s), so reading "
        "it at less than half the scrape interval only re-reads the same sample. With "
        "`metricType: AverageValue` that costs queries; with `metricType: Value` the HPA "
        "multiplies the current ready pods by value/threshold at every read, so when new "
        "pods turn Ready a sample taken before they took load is applied again to the "
        "larger pod count, and the HPA can overshoot (warning). Needs the scrape interval: "
        "from the ServiceMonitor that scrapes the target, or the profile."
    ),
    example=snippet({"spec": {"pollingInterval": 5}})
    + "\n# ServiceMonitor endpoints: - interval: 60s",
    fix=snippet({"spec": {"pollingInterval": 30}})
    + "\n# ServiceMonitor endpoints: - interval: 15s",
)
def _polling_faster_than_scrape(ctx: LintContext) -> Iterator[Hit]:
    for so in decided_scaled_objects(ctx):
        assert so.spec is not None
        prometheus = [t for t in so.triggers if t.is_prometheus]
        if not prometheus:
            continue
        scrape = scrape_interval_for(ctx, so)
        if scrape is None:
            continue
        interval, source = scrape
        fast = [(period, who) for period, who in _readers(ctx, so) if period < interval / 2]
        if not fast:
            continue
        period, who = min(fast)
        value_type = any(t.metric_type == "Value" for t in prometheus)
        by_keda = who.startswith("KEDA") and so.spec.polling_interval_set
        first: KeyPath = ("spec", "triggers", prometheus[0].index)
        path: KeyPath = ("spec", "pollingInterval") if by_keda else first
        reads = interval / period
        overshoot = (
            " With metricType Value the HPA multiplies the ready pods by value/threshold at "
            "every read, so when new pods turn Ready a sample from before they took load is "
            "applied again to the larger pod count, and the HPA can overshoot."
            if value_type
            else " With metricType AverageValue this costs only queries."
        )
        fix: dict[str, Any] = {"spec": {"endpoints": [{"interval": f"{int(period * 2)}s"}]}}
        yield Hit(
            obj=so.obj,
            key_path=path,
            message=(
                f"{who} but it is scraped every {fmt(interval)} s ({source}): about "
                f"{fmt(reads)} reads of each sample"
            ),
            why=(
                f"A Prometheus series changes once per scrape ({fmt(interval)} s here), and "
                f"{who}, so about {fmt(reads)} consecutive reads see the same value.{overshoot}"
            ),
            fix=(
                snippet({"spec": {"pollingInterval": int(interval)}})
                if by_keda
                else "# ServiceMonitor:\n" + snippet(fix)
            ),
            severity=Severity.WARNING if value_type else None,
        )
