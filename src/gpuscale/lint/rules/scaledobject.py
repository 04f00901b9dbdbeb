"""Rules on a ScaledObject's own settings: replica bounds, cooldowns, polling, activation,
empty results, trigger metadata, and how it relates to other autoscalers of its target.

KEDA behaviour cited here is ``kedacore/keda@8b4f083`` (v2.20.1-117: ``pkg/scaling``,
``pkg/scalers/prometheus_scaler.go``, ``apis/keda/v1alpha1``); HPA behaviour is
``kubernetes/kubernetes`` ``pkg/controller/podautoscaler`` (``horizontal.go``,
``replica_calculator.go``), as modelled in :mod:`gpuscale.controllers.hpa`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from gpuscale.controllers.hpa import DEFAULT_DOWNSCALE_STABILIZATION_SECONDS
from gpuscale.controllers.keda import (
    ScaledObjectError,
    check_replica_bounds,
    hpa_name,
    metric_target_type,
    validate_scaled_object,
)
from gpuscale.kube import format_duration
from gpuscale.lint._access import as_int, as_map, as_str, dig, iter_list, iter_map
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._keda import (
    HPA_TARGET_TYPES,
    ModelProblem,
    ScaledObjectView,
    TriggerView,
    model_problems,
)
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    PromTrigger,
    decided_scaled_objects,
    fmt,
    name_of,
    objects_in,
    prometheus_triggers,
    repeats,
    same_identity,
    scaled_objects,
    target_workload,
    trigger_path,
)
from gpuscale.manifests import KeyPath, Manifest, is_templated

__all__: list[str] = []

_REPLICA_COUNTS = ("minReplicaCount", "maxReplicaCount", "idleReplicaCount")


def _spec_path(key: str) -> KeyPath:
    return ("spec", key)


@rule(
    "cooldown-has-no-effect",
    severity=Severity.WARNING,
    title="cooldownPeriod is set but KEDA never scales this object to zero",
    explanation=(
        "KEDA reads `cooldownPeriod` only when it scales the workload to zero (or to "
        "`idleReplicaCount`): `scaleToZeroOrIdle` in "
        "`pkg/scaling/executor/scale_scaledobjects.go` is reachable only with "
        "`minReplicaCount: 0` or an idle count. With `minReplicaCount >= 1` scale-down from "
        "N to the minimum is the HPA's, paced by its scale-down stabilization window: the "
        "highest recommendation of the last 300 s by default "
        "(`--horizontal-pod-autoscaler-downscale-stabilization`), or "
        "`advanced.horizontalPodAutoscalerConfig.behavior.scaleDown."
        "stabilizationWindowSeconds`. KEDA 2.20's admission webhook warns about the same "
        'thing ("CooldownPeriod is configured but is not relevant"). An explicit '
        "`cooldownPeriod: 300` is reported too: it reads as a promise it does not keep."
    ),
    example=snippet({"spec": {"cooldownPeriod": 30, "minReplicaCount": 1}}),
    fix=snippet(
        {
            "spec": {
                "minReplicaCount": 1,
                "advanced": {
                    "horizontalPodAutoscalerConfig": {
                        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}
                    }
                },
            }
        }
    ),
)
def _cooldown_has_no_effect(ctx: LintContext) -> Iterator[Hit]:
    default_window = (
        ctx.profile.hpa.downscale_stabilization
        if ctx.profile is not None
        else DEFAULT_DOWNSCALE_STABILIZATION_SECONDS
    )
    for so in decided_scaled_objects(ctx):
        spec = so.spec
        assert spec is not None
        if not spec.cooldown_period_set or spec.scales_to_zero_or_idle:
            continue
        obj, cooldown, minimum = so.obj, spec.cooldown_period, spec.min_replica_count
        written = as_int(dig(spec.hpa_behavior, ("scaleDown", "stabilizationWindowSeconds")))
        if written is None:
            window = fmt(default_window)
            source = (
                f"the HPA's default scale-down stabilization window of {window} s (the "
                "highest recommendation of the window wins)"
            )
        else:
            window = str(written)
            source = (
                "advanced.horizontalPodAutoscalerConfig.behavior.scaleDown."
                f"stabilizationWindowSeconds: {window}"
            )
        suggested, reason = _suggested_window(ctx, so, cooldown, default_window, written)
        yield Hit(
            obj=obj,
            key_path=_spec_path("cooldownPeriod"),
            message=(
                f"cooldownPeriod: {cooldown} has no effect with minReplicaCount "
                f"{minimum}: KEDA only uses it to scale to zero; scale-down "
                f"follows the HPA's {window} s window"
            ),
            why=(
                f"KEDA reads cooldownPeriod only when it scales the workload to 0 or to "
                f"idleReplicaCount (scaleToZeroOrIdle in scale_scaledobjects.go), which never "
                f"happens with minReplicaCount {minimum} and no idleReplicaCount. "
                f"Scale-down from N to {minimum} is done by the HPA KEDA creates, "
                f"paced by {source}: replicas stay up about {window} s after the load drops, "
                f"not {cooldown} s. For GPU workloads keep that window at least as long as a "
                f"replica takes to start, or replicas (and GPU nodes, which the cluster "
                f"autoscaler keeps 10-20 minutes) thrash."
            ),
            fix=snippet(
                {
                    "spec": {
                        "minReplicaCount": minimum,
                        "advanced": {
                            "horizontalPodAutoscalerConfig": {
                                "behavior": {"scaleDown": {"stabilizationWindowSeconds": suggested}}
                            }
                        },
                    }
                }
            )
            + f"\n# {reason}; and delete cooldownPeriod",
        )


def _suggested_window(
    ctx: LintContext,
    so: ScaledObjectView,
    cooldown: float,
    default_window: float,
    written: int | None,
) -> tuple[int, str]:
    """The scale-down window the fix proposes, and why: never shorter than a replica's start
    (the advice the finding gives), nor than the window in force or the cooldown it replaces.

    A replica's start is the profile's pull and startup time of the workload, plus the
    slowest GPU pool's provisioning time when the workload requests GPUs (its replica may
    wait for a new node); without a profile, the HPA's default window stands in for it.
    """
    in_force = float(written) if written is not None else default_window
    start = 0.0
    if ctx.profile is not None:
        target = target_workload(ctx, so)
        settings = ctx.profile.workload(target.name if target is not None else "")
        start = settings.image_pull_time + settings.startup_time
        gpus = target is not None and any(c.gpus for c in target.containers)
        if gpus and ctx.profile.gpu_pools:
            start += max(pool.provisioning_time for pool in ctx.profile.gpu_pools)
    suggested = math.ceil(max(cooldown, in_force, start))
    if start >= max(cooldown, in_force):
        reason = f"at least a replica's start ({format_duration(start)}, from the profile)"
    elif written is not None and in_force >= cooldown:
        reason = "the window in force, at least a replica's start"
    else:
        reason = "keep it at least as long as a replica takes to start"
    return suggested, reason


@rule(
    "polling-interval-has-no-effect",
    severity=Severity.INFO,
    title="pollingInterval is set but the HPA reads the metric on its own 15 s sync",
    explanation=(
        "With `minReplicaCount >= 1` and no `idleReplicaCount`, KEDA's polling loop only "
        "keeps the minimum and the Active condition; the replica count is the HPA's, and "
        "the HPA asks KEDA's metrics server for the value on every sync (15 s by default). "
        "`GetScaledObjectMetrics` in `pkg/scaling/scale_handler.go` then queries Prometheus "
        "live, whatever `pollingInterval` says, unless the trigger sets "
        "`useCachedMetrics: true`. KEDA 2.20's webhook warns \"PollingInterval is "
        'configured but is not relevant".'
    ),
    example=snippet({"spec": {"pollingInterval": 30, "minReplicaCount": 1}}),
    fix=snippet(
        {
            "spec": {
                "minReplicaCount": 1,
                "triggers": [{"type": "prometheus", "useCachedMetrics": True}],
            }
        }
    ),
)
def _polling_interval_has_no_effect(ctx: LintContext) -> Iterator[Hit]:
    sync = fmt(ctx.profile.hpa.sync_period) if ctx.profile is not None else "15"
    for so in decided_scaled_objects(ctx):
        spec = so.spec
        assert spec is not None
        if not spec.polling_interval_set or spec.scales_to_zero_or_idle:
            continue
        if any(trigger.use_cached_metrics for trigger in spec.triggers):
            continue
        obj, shown, minimum = so.obj, spec.polling_interval, spec.min_replica_count
        yield Hit(
            obj=obj,
            key_path=_spec_path("pollingInterval"),
            message=(
                f"pollingInterval: {shown} does not pace scaling with minReplicaCount "
                f"{minimum}: the HPA queries the trigger every {sync} s"
            ),
            why=(
                "With minReplicaCount >= 1 KEDA's own loop only keeps the minimum and the "
                "Active condition. The HPA KEDA creates reads the metric through KEDA's "
                f"metrics server at every sync ({sync} s), and KEDA runs the query live for "
                f"each read (GetScaledObjectMetrics), so scaling reacts on the {sync} s cycle "
                f"whatever pollingInterval says. Prometheus meanwhile gets the query on two "
                f"schedules: every {sync} s for the HPA and every {shown} s for KEDA's own "
                "loop. With useCachedMetrics: true the HPA reads what the last poll stored, "
                f"so pollingInterval ({shown} s) then paces scaling and the query runs once "
                "per poll."
            ),
            fix=snippet({"spec": {"triggers": [{"type": "prometheus", "useCachedMetrics": True}]}})
            + "\n# or delete pollingInterval",
        )


@rule(
    "activation-above-threshold",
    severity=Severity.WARNING,
    title="activationThreshold is at or above threshold: the workload stays at zero under load",
    explanation=(
        "KEDA moves a workload from 0 to 1 replica only while the value is strictly above "
        "`activationThreshold` (`GetMetricsAndActivity` in `pkg/scalers/prometheus_scaler.go`), "
        "and scales it back to 0 after `cooldownPeriod` once it is not. The HPA sizes the "
        "workload from `threshold`. When `activationThreshold >= threshold`, a value between "
        "the two is worth at least one replica to the HPA but leaves the workload at zero. "
        "Only checked when KEDA can scale to zero (`minReplicaCount: 0` or an idle count): "
        "with `minReplicaCount >= 1` KEDA ignores the activation value."
    ),
    example=snippet(
        {"metadata": {"threshold": "10", "activationThreshold": "50"}},
    ),
    fix=snippet({"metadata": {"threshold": "10", "activationThreshold": "5"}}),
)
def _activation_above_threshold(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        spec, prom = trig.so.spec, trig.trigger.prometheus
        if spec is None or prom is None or not spec.scales_to_zero_or_idle:
            continue
        if "activationThreshold" not in trig.trigger.metadata:
            continue
        threshold, activation = prom.threshold, prom.activation_threshold
        if threshold <= 0 or activation < threshold:
            continue
        wanted = math.ceil(activation / threshold)
        arithmetic = (
            f"a value of {fmt(activation)} is worth ceil({fmt(activation)}/{fmt(threshold)}) = "
            f"{wanted} replica(s) to the HPA (metricType AverageValue)"
            if trig.trigger.metric_type == "AverageValue"
            else f"a value between {fmt(threshold)} and {fmt(activation)} is above the target"
        )
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("activationThreshold"),
            message=(
                f"activationThreshold {fmt(activation)} >= threshold {fmt(threshold)}: the "
                "workload stays at zero while the HPA would want replicas"
            ),
            why=(
                f"KEDA activates the workload (0 → 1) only while the value is above "
                f"activationThreshold ({fmt(activation)}), but the HPA sizes it against "
                f"threshold ({fmt(threshold)}): {arithmetic}, yet KEDA keeps it at 0 replicas, "
                f"or scales it back to 0 after cooldownPeriod, until the value exceeds "
                f"{fmt(activation)}."
            ),
            fix=snippet(
                {
                    "metadata": {
                        "threshold": fmt(threshold),
                        "activationThreshold": fmt(threshold / 2),
                    }
                }
            ),
        )


@rule(
    "null-values-ignored",
    severity=Severity.WARNING,
    title="An empty query result silently reads as 0 (ignoreNullValues defaults to true)",
    explanation=(
        "With `ignoreNullValues` left at its default (`true`), KEDA's Prometheus scaler "
        "returns 0 for an empty result, NaN or ±Inf instead of an error "
        "(`ExecutePromQuery` in `pkg/scalers/prometheus_scaler.go`, kedacore/keda#3065). A "
        "ServiceMonitor that matches nothing, a renamed metric or a wrong label all give an "
        "empty result, which then looks exactly like no load, and the ScaledObject reports "
        "no error. With `minReplicaCount: 0` (or idle mode) the workload stays at zero and "
        "never activates; with `minReplicaCount >= 1` the HPA scales down to the minimum and "
        "stays there under any load. With a `fallback` configured it is an error: the "
        "fallback can never trigger, because an empty result is not a failure. Queries that "
        "already turn an empty result into a value (`or vector(0)`, `absent(...)`) are left "
        "alone: they chose the behaviour. Reported on the trigger's `metadata`, where "
        "`ignoreNullValues` goes.\n\n"
        "Severity: a warning with `minReplicaCount: 0` or an `idleReplicaCount` (the "
        "workload never wakes up), an error with a `fallback` (it can never trigger); "
        "otherwise, with `minReplicaCount >= 1`, info: the failure is as silent there (the "
        "workload sits at its minimum under any load while every object looks healthy; the "
        "tutorial's mistake 5, `examples/tutorial/README.md`, is exactly this), but most "
        "such ScaledObjects leave the default on purpose or by habit, and the missing-metric "
        "causes that matter are errors of their own (`servicemonitor-namespace-mismatch`). "
        "A warning on nearly every Prometheus trigger would get the linter switched off. "
        "Suppress it (`# gpuscale: ignore[null-values-ignored]`) where an absent metric "
        "really means no load."
    ),
    example=snippet(
        {
            "spec": {
                "minReplicaCount": 0,
                "triggers": [
                    {"type": "prometheus", "metadata": {"query": 'sum(my_gauge{app="web"})'}}
                ],
            }
        }
    ),
    fix=snippet(
        {
            "spec": {
                "minReplicaCount": 0,
                "triggers": [
                    {
                        "type": "prometheus",
                        "metadata": {
                            "query": 'sum(my_gauge{app="web"})',
                            "ignoreNullValues": "false",
                        },
                    }
                ],
            }
        }
    ),
)
def _null_values_ignored(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        spec, prom, query = trig.so.spec, trig.trigger.prometheus, trig.query
        if spec is None or prom is None or query is None or not prom.ignore_null_values:
            continue
        if "ignoreNullValues" in trig.trigger.metadata or not query.parsed or query.fills_empty:
            continue
        if spec.scales_to_zero_or_idle:
            consequence = (
                "the workload silently stays at zero: an empty result is never above the "
                "activation threshold"
            )
        else:
            consequence = (
                f"the HPA silently scales down to minReplicaCount {spec.min_replica_count} "
                "and stays there however high the load"
            )
        severity: Severity | None = None if spec.scales_to_zero_or_idle else Severity.INFO
        dead_fallback = ""
        if spec.fallback is not None:
            severity = Severity.ERROR
            dead_fallback = (
                f" The fallback ({spec.fallback.replicas} replicas) can never trigger, since "
                "KEDA counts failures only for errors and an empty result is not one."
            )
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("ignoreNullValues"),
            message=(
                "an empty query result reads as 0 (ignoreNullValues defaults to true): if "
                f"the metric goes missing {consequence.split(':')[0]}"
            ),
            why=(
                "KEDA's Prometheus scaler returns 0, not an error, when the query result is "
                "empty, NaN or ±Inf and ignoreNullValues is true, its default "
                "(ExecutePromQuery). A ServiceMonitor that selects nothing, a metric renamed "
                "by a new release, or a label typo all give an empty result, and "
                f"{consequence}; the ScaledObject reports no error.{dead_fallback}"
            ),
            fix=snippet({"metadata": {"query": query.query, "ignoreNullValues": "false"}})
            + "\n# or end the query with `or vector(0)` if an absent metric really means 0",
            severity=severity,
        )


@rule(
    "replica-bounds-invalid",
    severity=Severity.ERROR,
    title="minReplicaCount, maxReplicaCount and idleReplicaCount contradict each other",
    explanation=(
        "The ScaledObject CRD requires `minReplicaCount <= maxReplicaCount` (100 when unset) "
        "and KEDA's `CheckReplicaCountBoundsAreValid` "
        "(`apis/keda/v1alpha1/scaledobject_types.go`) also requires `idleReplicaCount` to "
        "be below the minimum (as KEDA counts it: 0 when unset, at least 1 when set). Such "
        "a ScaledObject is rejected or never reconciled."
    ),
    example=snippet({"spec": {"minReplicaCount": 4, "maxReplicaCount": 2}}),
    fix=snippet({"spec": {"minReplicaCount": 2, "maxReplicaCount": 4}}),
)
def _replica_bounds_invalid(ctx: LintContext) -> Iterator[Hit]:
    for so in scaled_objects(ctx):
        spec = so.obj.spec
        counts = {key: spec.get(key) for key in _REPLICA_COUNTS}
        if any(value is not None and as_int(value) is None for value in counts.values()):
            continue
        minimum, maximum, idle = (as_int(value) for value in counts.values())
        try:
            check_replica_bounds(
                min_replica_count=minimum, max_replica_count=maximum, idle_replica_count=idle
            )
        except ScaledObjectError as error:
            key = (error.where or "spec.minReplicaCount").rsplit(".", 1)[-1]
            fixed: dict[str, int | None]
            if key == "idleReplicaCount" and idle is not None:
                fixed = {"idleReplicaCount": 0, "minReplicaCount": max(1, idle + 1)}
            else:
                fixed = {"minReplicaCount": minimum, "maxReplicaCount": minimum}
            yield Hit(
                obj=so.obj,
                key_path=("spec", key),
                message=f"KEDA rejects the replica bounds: {error.message}",
                why=(
                    "The ScaledObject CRD rejects minReplicaCount above maxReplicaCount (its "
                    "CEL rule uses 100 when maxReplicaCount is unset), and KEDA's "
                    "CheckReplicaCountBoundsAreValid also wants idleReplicaCount below the "
                    "minimum (KEDA scales to the idle count when inactive, to the minimum or "
                    "more when active), so the object is never applied or never reconciled."
                ),
                fix=snippet({"spec": fixed}),
            )


@rule(
    "trigger-metadata-not-string",
    severity=Severity.ERROR,
    title="A trigger metadata value is a number or boolean, not a string",
    explanation=(
        "A trigger's `metadata` is a `map[string]string` (`ScaleTriggers.Metadata` in "
        "`apis/keda/v1alpha1/scaletriggers_types.go`); the API server rejects a ScaledObject "
        'whose metadata holds an unquoted number or boolean ("spec.triggers.metadata.'
        'threshold in body must be of type string", kedacore/keda-docs#302, #350). Quote '
        "the value."
    ),
    example=snippet({"metadata": {"threshold": 80, "ignoreNullValues": False}}),
    fix=snippet({"metadata": {"threshold": "80", "ignoreNullValues": "false"}}),
)
def _trigger_metadata_not_string(ctx: LintContext) -> Iterator[Hit]:
    for so in scaled_objects(ctx):
        obj = so.obj
        for trigger in so.triggers:
            for key, value in iter_map(trigger.metadata):
                if isinstance(value, str):
                    continue
                yield Hit(
                    obj=obj,
                    key_path=trigger_path(trigger.index, key),
                    message=f"metadata.{key} is {type(value).__name__} {value!r}, not a string",
                    why=(
                        "KEDA declares trigger metadata as map[string]string, so the API "
                        f'server rejects the ScaledObject: "spec.triggers.metadata.{key} in '
                        'body must be of type string". YAML reads an unquoted 80 as a '
                        "number and an unquoted false as a boolean."
                    ),
                    fix=snippet({"metadata": {key: _as_go_string(value)}}),
                )


def _as_go_string(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return fmt(float(value))
    return str(value)


@rule(
    "metricname-ignored",
    severity=Severity.INFO,
    title="metricName in trigger metadata is ignored since KEDA 2.12",
    explanation=(
        "KEDA deprecated `metricName` in trigger metadata in v2.10 and removed it in v2.12 "
        "(CHANGELOG, kedacore/keda#4220 and #4899): the Prometheus scaler names its metric "
        "`s<index>-prometheus` and does not read the key. It suggests, wrongly, that the "
        "trigger watches that metric; the query alone decides."
    ),
    example=snippet({"metadata": {"metricName": "my_custom_gauge", "query": "sum(x)"}}),
    fix=snippet({"metadata": {"query": "sum(x)"}}),
)
def _metricname_ignored(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        if "metricName" not in trig.trigger.metadata:
            continue
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("metricName"),
            message="metricName is ignored by KEDA's Prometheus scaler (removed in KEDA 2.12)",
            why=(
                "KEDA 2.12 removed metricName from trigger metadata; the scaler exposes its "
                f"value to the HPA as s{trig.trigger.index}-prometheus and only the query "
                "decides what is measured."
            ),
            fix="# delete metricName from the trigger's metadata",
        )


@rule(
    "prometheus-address-namespace",
    severity=Severity.ERROR,
    title="serverAddress points at a namespace where the profile's Prometheus is not",
    explanation=(
        "kube-prometheus-stack puts its Services (`prometheus-operated`, "
        "`<release>-kube-prometheus-prometheus`) in the namespace the chart was installed "
        "into. A `serverAddress` of the form `http://<service>.<namespace>.svc...` naming "
        "another namespace does not resolve, every query fails, and nothing scales. Needs "
        "the profile's Prometheus namespace."
    ),
    example=snippet(
        {"metadata": {"serverAddress": "http://prometheus-operated.kube-system.svc:9090"}}
    ),
    fix=snippet({"metadata": {"serverAddress": "http://prometheus-operated.monitoring.svc:9090"}}),
    requires="profile",
)
def _prometheus_address_namespace(ctx: LintContext) -> Iterator[Hit]:
    if ctx.profile is None:
        return
    expected = ctx.profile.prometheus.namespace
    for found in _service_addresses(ctx):
        service, namespace = found.service, found.namespace
        if namespace == expected:
            continue
        yield Hit(
            obj=found.trigger.obj,
            key_path=found.trigger.path("serverAddress"),
            message=(
                f"serverAddress names namespace {namespace}, but the profile installs "
                f"Prometheus in {expected}"
            ),
            why=(
                f"{service}.{namespace}.svc resolves only if the Service lives in namespace "
                f"{namespace}; kube-prometheus-stack creates its Services in the namespace it "
                f"is installed into ({expected}, per the profile's prometheus.namespace). Every "
                "query then fails and the ScaledObject never scales."
            ),
            fix=snippet({"metadata": {"serverAddress": found.moved_to(expected)}}),
        )


@dataclass(frozen=True)
class _ServiceAddress:
    """A trigger's ``serverAddress`` of the form ``scheme://service.namespace.svc...``."""

    trigger: PromTrigger
    service: str
    namespace: str
    port: int | None

    def moved_to(self, namespace: str) -> str:
        """The same Service's address in ``namespace``."""
        port = f":{self.port}" if self.port else ""
        return f"http://{self.service}.{namespace}.svc.cluster.local{port}"


def _service_addresses(ctx: LintContext) -> Iterator[_ServiceAddress]:
    """The triggers whose serverAddress names an in-cluster Service."""
    for trig in prometheus_triggers(ctx):
        address = as_str(trig.trigger.metadata.get("serverAddress"))
        if address is None or is_templated(address):
            continue
        try:
            parts = urlsplit(address.strip())
            host, port = parts.hostname or "", parts.port
        except ValueError:
            continue
        labels = host.split(".")
        if len(labels) >= 3 and labels[2] == "svc":
            yield _ServiceAddress(trig, labels[0], labels[1], port)


@rule(
    "prometheus-in-kube-system",
    severity=Severity.WARNING,
    title="serverAddress points at a Prometheus installed into kube-system",
    explanation=(
        '`kube-system` is "the namespace for objects created by the Kubernetes system" '
        "(kubernetes.io, Namespaces: initial namespaces): managed platforms such as DOKS "
        "run and reconcile their own components there, and cluster upgrades and policies "
        "treat it as theirs. A `serverAddress` such as "
        "`http://prometheus-operated.kube-system.svc.cluster.local:9090` means "
        "kube-prometheus-stack was installed with `-n kube-system`, as the tutorial does, "
        "and hard-codes that into every ScaledObject: the address is wrong on any cluster "
        "where the stack lives in its own namespace (`monitoring` is the usual one and "
        "`gpuscale install`'s default), and a ServiceMonitor copied along with it "
        "(`namespaceSelector: [kube-system]`) scrapes the wrong namespace. Install the "
        "stack into its own namespace and point the trigger there. When the profile names "
        "another Prometheus namespace, `prometheus-address-namespace` reports the address "
        "instead."
    ),
    example=snippet(
        {
            "metadata": {
                "serverAddress": "http://prometheus-operated.kube-system.svc.cluster.local:9090"
            }
        }
    ),
    fix=snippet(
        {
            "metadata": {
                "serverAddress": "http://prometheus-operated.monitoring.svc.cluster.local:9090"
            }
        }
    )
    + "\n# after: helm install prometheus prometheus-community/kube-prometheus-stack -n monitoring",
)
def _prometheus_in_kube_system(ctx: LintContext) -> Iterator[Hit]:
    if ctx.profile is not None and ctx.profile.prometheus.namespace != "kube-system":
        return
    for found in _service_addresses(ctx):
        if found.namespace != "kube-system":
            continue
        service = found.service
        told = " (as the profile says)" if ctx.profile is not None else ""
        yield Hit(
            obj=found.trigger.obj,
            key_path=found.trigger.path("serverAddress"),
            message=(
                f"serverAddress points at {service} in kube-system: Prometheus is installed "
                f"into the cluster's system namespace{told}"
            ),
            why=(
                "kube-system is the namespace of the cluster's own components, which the "
                "platform manages. kube-prometheus-stack installed there puts its Services "
                f"({service}) there, and this address only works on clusters set up the same "
                "way; installed into its own namespace (monitoring), the stack can be "
                "upgraded and removed on its own, and the address says where it is."
            ),
            fix=snippet({"metadata": {"serverAddress": found.moved_to("monitoring")}})
            + "\n# and install kube-prometheus-stack with -n monitoring",
        )


@rule(
    "scaledobject-target-missing",
    severity=Severity.ERROR,
    title="scaleTargetRef names a workload that is not in the set",
    explanation=(
        "`scaleTargetRef` must name a workload in the ScaledObject's own namespace (KEDA "
        'scaledobject-spec: "Must be in the same namespace as the ScaledObject"). When the '
        "set holds workloads of that kind in that namespace and none has the name, it is a "
        "typo (error). When the workload exists only in another namespace, the ScaledObject "
        "is in the wrong one: an error when both manifests name their namespaces, an info "
        "when one relies on `--namespace` (`kubectl apply -n` may put them together). When "
        "the set holds no such workloads, or the name is a placeholder, lint notes that the "
        "target is not in the set (info) and checks the ScaledObject on its own."
    ),
    example=snippet({"spec": {"scaleTargetRef": {"name": "go-from-configmpa"}}}),
    fix=snippet({"spec": {"scaleTargetRef": {"name": "go-from-configmap"}}}),
)
def _scaledobject_target_missing(ctx: LintContext) -> Iterator[Hit]:
    path = ("spec", "scaleTargetRef", "name")
    for so in decided_scaled_objects(ctx):
        assert so.spec is not None
        obj, kind, target = so.obj, so.spec.scale_target_kind, so.target
        namespace = ctx.namespace_of(obj)
        if target is None:
            yield Hit(
                obj=obj,
                key_path=path,
                message=(
                    f"target {kind} {so.spec.scale_target_name} is not in the set; checked "
                    "the ScaledObject alone"
                ),
                why=(
                    "The target's name is a placeholder, so the rules that need the workload "
                    "(GPU capacity, start-up, scrape interval) could not run."
                ),
                fix=snippet({"spec": {"scaleTargetRef": {"kind": kind, "name": "<workload>"}}}),
                severity=Severity.INFO,
            )
            continue
        name = target[1]
        if same_identity(ctx, kind, namespace, name) is not None:
            continue
        here = objects_in(ctx, kind, namespace)
        elsewhere = [w for w in ctx.of_kind(kind) if w.name == name]
        if here:
            names = ", ".join(sorted(name_of(w) for w in here))
            also = (
                f"; a {kind} of that name is in namespace {ctx.namespace_of(elsewhere[0])}"
                if elsewhere
                else ""
            )
            yield Hit(
                obj=obj,
                key_path=path,
                message=(
                    f"no {kind} named {name} in namespace {namespace} (the set has {names}){also}"
                ),
                why=(
                    f"KEDA reports the ScaledObject as not ready and scales nothing while its "
                    f"target {kind} {namespace}/{name} does not exist."
                ),
                fix=snippet({"spec": {"scaleTargetRef": {"name": name_of(here[0])}}}),
            )
        elif elsewhere:
            other = ctx.namespace_of(elsewhere[0])
            # Only two explicit namespaces disagree for sure: an object without one goes
            # wherever `kubectl apply -n` puts it, which lint cannot know.
            both_explicit = bool(obj.namespace) and bool(elsewhere[0].namespace)
            yield Hit(
                obj=obj,
                key_path=path,
                message=(
                    f"{kind} {name} is in namespace {other}, but the ScaledObject is in {namespace}"
                ),
                why=(
                    "KEDA looks the target up in the ScaledObject's own namespace; "
                    "scaleTargetRef has no namespace field. Put the ScaledObject in "
                    f"{other} too."
                ),
                fix=snippet({"metadata": {"namespace": other}}),
                severity=None if both_explicit else Severity.INFO,
            )
        else:
            yield Hit(
                obj=obj,
                key_path=path,
                message=(
                    f"target {kind} {namespace}/{name} is not in the set; checked the "
                    "ScaledObject alone"
                ),
                why=(
                    "Rules that need the workload (GPU capacity, start-up, scrape interval) "
                    "could not run. Lint the workload's manifest together with this one to "
                    "check them."
                ),
                fix="# lint the ScaledObject together with its workload's manifest",
                severity=Severity.INFO,
            )


@rule(
    "hpa-and-scaledobject",
    severity=Severity.ERROR,
    title="An HPA and a ScaledObject scale the same workload",
    explanation=(
        "KEDA creates and owns an HPA for every ScaledObject. A second HPA on the same "
        "workload writes `spec.replicas` from its own metrics every sync and the two fight. "
        "KEDA's admission webhook rejects such a ScaledObject (`verifyHpas` in "
        '`apis/keda/v1alpha1/scaledobject_webhook.go`: "the workload ... is already managed '
        'by the hpa ...") unless ownership is being transferred with the '
        "`scaledobject.keda.sh/transfer-hpa-ownership` annotation and "
        "`advanced.horizontalPodAutoscalerConfig.name`. HPAs owned by a ScaledObject, or "
        "named as KEDA names its own (`getHPAName`: `keda-hpa-<ScaledObject name>` or "
        "`horizontalPodAutoscalerConfig.name`), are KEDA's (exported from a cluster) and "
        "are not reported."
    ),
    example="kind: HorizontalPodAutoscaler\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
    "    name: web\n---\nkind: ScaledObject\nspec:\n  scaleTargetRef:\n    name: web",
    fix="# delete the HorizontalPodAutoscaler; move its behavior to the ScaledObject:\n"
    + snippet({"spec": {"advanced": {"horizontalPodAutoscalerConfig": {"behavior": {}}}}}),
)
def _hpa_and_scaledobject(ctx: LintContext) -> Iterator[Hit]:
    hpas: dict[tuple[str, str, str], list[Manifest]] = {}
    for hpa in ctx.of_kind("HorizontalPodAutoscaler"):
        ref = as_map(hpa.get(("spec", "scaleTargetRef"))) or {}
        kind, name = as_str(ref.get("kind")), as_str(ref.get("name"))
        owners = hpa.get(("metadata", "ownerReferences"))
        if any(as_str(dig(o, ("kind",))) == "ScaledObject" for _, o in iter_list(owners)):
            continue
        annotations = as_map(hpa.get(("metadata", "annotations"))) or {}
        if annotations.get("validations.keda.sh/hpa-ownership") == "false":
            continue
        if kind and name:
            hpas.setdefault((kind, ctx.namespace_of(hpa), name), []).append(hpa)
    if not hpas:
        return
    for so in decided_scaled_objects(ctx):
        if so.target is None or so.spec is None:
            continue
        obj, (kind, name) = so.obj, so.target
        own = hpa_name(so.spec.source, obj.name)
        for hpa in hpas.get((kind, ctx.namespace_of(obj), name), []):
            other = name_of(hpa)
            if other == own:
                continue
            annotations = as_map(obj.get(("metadata", "annotations"))) or {}
            transfer = annotations.get("scaledobject.keda.sh/transfer-hpa-ownership") == "true"
            if transfer and so.spec.hpa_name_override == other:
                continue
            file, line, _ = hpa.line_of(())
            yield Hit(
                obj=obj,
                key_path=("spec", "scaleTargetRef", "name"),
                message=(
                    f"HorizontalPodAutoscaler {other} ({file}:{line}) already scales {kind} {name}"
                ),
                why=(
                    "KEDA creates its own HPA (keda-hpa-<name>) for this ScaledObject; two "
                    "HPAs writing spec.replicas of one workload from different metrics undo "
                    "each other every 15 s. KEDA's webhook rejects the ScaledObject (\"the "
                    f"workload '{name}' ... is already managed by the hpa "
                    f"'{other}'\")."
                ),
                fix=(
                    f"# delete HorizontalPodAutoscaler {other}; put its scaling behavior "
                    "here:\n"
                    + snippet(
                        {
                            "spec": {
                                "advanced": {
                                    "horizontalPodAutoscalerConfig": {
                                        "behavior": {
                                            "scaleDown": {"stabilizationWindowSeconds": 300}
                                        }
                                    }
                                }
                            }
                        }
                    )
                ),
            )


@rule(
    "scaledobjects-share-target",
    severity=Severity.ERROR,
    title="Two ScaledObjects scale the same workload",
    explanation=(
        "KEDA's admission webhook rejects a ScaledObject whose target another ScaledObject "
        "already scales (`verifyScaledObjects` in "
        "`apis/keda/v1alpha1/scaledobject_webhook.go`). Put all triggers in one "
        "ScaledObject: the HPA takes the highest replica count any of them asks for."
    ),
    example="kind: ScaledObject\nmetadata:\n  name: a\nspec:\n  scaleTargetRef:\n    name: web\n"
    "---\nkind: ScaledObject\nmetadata:\n  name: b\nspec:\n  scaleTargetRef:\n    name: web",
    fix="# one ScaledObject for web with both triggers under spec.triggers",
)
def _scaledobjects_share_target(ctx: LintContext) -> Iterator[Hit]:
    keyed = (
        ((so.target[0], ctx.namespace_of(so.obj), so.target[1]), so.obj)
        for so in decided_scaled_objects(ctx)
        if so.target is not None
    )
    for (kind, _, name), obj, other in repeats(keyed):
        file, line, _ = other.line_of(())
        other_name = name_of(other)
        yield Hit(
            obj=obj,
            key_path=("spec", "scaleTargetRef", "name"),
            message=(f"ScaledObject {other_name} ({file}:{line}) already scales {kind} {name}"),
            why=(
                'KEDA rejects a second ScaledObject for one workload ("the workload ... is '
                f"already managed by the ScaledObject '{other_name}'\"); had both been "
                "accepted, their two HPAs would overwrite each other's replica count."
            ),
            fix=f"# move this object's triggers into ScaledObject {other_name} and delete it",
        )


_SAMPLE_VALUES = {
    "threshold": "80",
    "activationThreshold": "5",
    "ignoreNullValues": "false",
    "unsafeSsl": "false",
    "timeout": "30s",
    "customHeaders": "X-Scope-OrgID=tenant-a",
    "queryParameters": "stats=all",
    "authModes": "bearer",
}
"""A value KEDA accepts for each typed metadata key of the prometheus scaler, for fixes."""
_SCALED_OBJECT_REFUSED = (
    "KEDA's admission webhook (or the CRD's own validation) refuses the ScaledObject, so "
    "kubectl apply fails and no HPA is created (the message is KEDA's, from gpuscale's "
    "model of scaledobject_webhook.go and the CRD)."
)
_TRIGGER_REFUSED = (
    "The API server stores the ScaledObject (trigger metadata is a map of strings), but "
    "KEDA cannot build the trigger's scaler from it: the ScaledObject never becomes Ready, "
    "KEDA serves the HPA no value for this metric, and nothing scales on it (the message "
    "is KEDA's parsePrometheusMetadata, from gpuscale's model of prometheus_scaler.go)."
)


@rule(
    "scaledobject-invalid",
    severity=Severity.ERROR,
    title="KEDA refuses the ScaledObject or cannot build one of its triggers",
    explanation=(
        "The ScaledObject is read by gpuscale's KEDA model (`gpuscale.controllers.keda`), "
        "which ports KEDA's own checks, and each refusal is reported with KEDA's message on "
        "the key it names. `validate_scaled_object` is what the API server and KEDA's "
        "admission webhook check (`apis/keda/v1alpha1/scaledobject_webhook.go`: the CRD's "
        "types and minimums, `minReplicaCount <= maxReplicaCount`, fallback, trigger names, "
        "scalingModifiers formulas); such an object is never created. "
        "`parse_prometheus_trigger` is `parsePrometheusMetadata` "
        "(`pkg/scalers/prometheus_scaler.go`): the API server accepts any string, but KEDA "
        'fails to build the scaler for `threshold: "abc"`, `ignoreNullValues: "maybe"` '
        "(Go's `strconv.ParseBool` takes `true`, `false`, `1`, `0`, `t`, `f`...), "
        '`unsafeSsl: "yes"`, a missing `serverAddress`..., and the ScaledObject never '
        "scales. A trigger's `metricType` other than `AverageValue` or `Value` is refused "
        "too: KEDA refuses `Utilization` for external metrics and passes anything else to "
        "the HPA it generates, which the API server then rejects "
        '(`validateMetricTarget`: "must be either Utilization, Value, or AverageValue"). '
        "Values with a placeholder are not judged, and problems the schema "
        "(`schema-invalid`), `trigger-metadata-not-string` or `replica-bounds-invalid` "
        "report on the same line are left to them. A trigger with an `authenticationRef` "
        "takes its auth parameters from a TriggerAuthentication, whose secrets lint does "
        "not read: only the metadata's own values are judged."
    ),
    example=snippet({"metadata": {"threshold": "abc", "ignoreNullValues": "maybe"}}),
    fix=snippet({"metadata": {"threshold": "80", "ignoreNullValues": "false"}}),
    defers_to=("schema-invalid", "trigger-metadata-not-string", "replica-bounds-invalid"),
)
def _scaledobject_invalid(ctx: LintContext) -> Iterator[Hit]:
    for so in scaled_objects(ctx):
        obj = so.obj
        name = obj.name if obj.name and not is_templated(obj.name) else None
        try:
            validate_scaled_object(obj.spec, name=name)
        except ScaledObjectError as error:
            for problem in model_problems(obj, error):
                yield _refused(obj, problem, _SCALED_OBJECT_REFUSED, "# " + problem.fix)
        for trigger in so.triggers:
            if trigger.refusal is not None:
                for problem in model_problems(obj, trigger.refusal):
                    yield _refused(obj, problem, _TRIGGER_REFUSED, _trigger_fix(problem))
            yield from _metric_type_refused(obj, trigger)


def _refused(obj: Manifest, problem: ModelProblem, consequence: str, fix: str) -> Hit:
    return Hit(
        obj=obj,
        key_path=problem.key_path,
        message=f"KEDA refuses it: {problem.message}",
        why=consequence,
        fix=fix,
    )


def _trigger_fix(problem: ModelProblem) -> str:
    key = problem.key_path[-1]
    sample = _SAMPLE_VALUES.get(key) if isinstance(key, str) else None
    if sample is None:
        return f"# {problem.fix}"
    return snippet({"metadata": {key: sample}}) + f"\n# {problem.fix}"


def _metric_type_refused(obj: Manifest, trigger: TriggerView) -> Iterator[Hit]:
    raw = obj.get(("spec", "triggers", trigger.index, "metricType"))
    if not isinstance(raw, str) or not raw or is_templated(raw) or raw in HPA_TARGET_TYPES:
        return
    if trigger.type in ("cpu", "memory"):
        return
    try:
        metric_target_type(raw)
    except ValueError as error:
        message = str(error)
    else:
        message = (
            f'the generated HPA\'s target type "{raw}" must be either Utilization, Value, or '
            "AverageValue (the API server refuses the HPA)"
        )
    yield Hit(
        obj=obj,
        key_path=("spec", "triggers", trigger.index, "metricType"),
        message=f"KEDA refuses it: metricType {raw!r}: {message}",
        why=(
            "A trigger's metricType becomes the target type of the external metric in the "
            "HPA KEDA creates (GetMetricTargetType in pkg/scalers/scaler.go): KEDA refuses "
            "Utilization for external metrics and passes any other value through, and the "
            "API server then rejects the HPA, so nothing scales. AverageValue (the default) "
            "divides the value by the replica count; Value compares it as a whole."
        ),
        fix=snippet({"metricType": "AverageValue"}) + "\n# or Value, or delete the key",
    )
