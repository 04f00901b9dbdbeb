"""Rules on a ScaledObject's own settings: replica bounds, cooldowns, polling, activation,
empty results, trigger metadata, and how it relates to other autoscalers of its target.

KEDA behaviour cited here is ``kedacore/keda@8b4f083`` (v2.20.1-117); HPA behaviour is
``kubernetes/kubernetes`` ``pkg/controller/podautoscaler`` (see
``/work/shared/reference/keda.md`` and ``hpa.md`` for the full notes).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from urllib.parse import urlsplit

from gpuscale.lint._access import as_map, as_str, dig, iter_list, iter_map
from gpuscale.lint._context import LintContext, ManifestObject
from gpuscale.lint._findings import Hit, KeyPath, Severity
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    fmt,
    name_of,
    objects_in,
    prometheus_triggers,
    same_identity,
    scaled_objects,
    trigger_path,
)

__all__: list[str] = []

_HPA_DEFAULT_SCALE_DOWN_WINDOW = 300


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
def cooldown_has_no_effect(ctx: LintContext) -> Iterator[Hit]:
    for obj, so in scaled_objects(ctx):
        if "cooldownPeriod" not in so.explicit or so.idle_mode:
            continue
        if so.min_replica_count is None or so.min_replica_count < 1 or so.cooldown_period is None:
            continue
        cooldown = so.cooldown_period
        window = so.scale_down_window
        if window is None:
            window = _HPA_DEFAULT_SCALE_DOWN_WINDOW
            source = (
                "the HPA's default scale-down stabilization window of 300 s (the highest "
                "recommendation of the last 5 minutes wins)"
            )
        else:
            source = (
                "advanced.horizontalPodAutoscalerConfig.behavior.scaleDown."
                f"stabilizationWindowSeconds: {window}"
            )
        yield Hit(
            obj=obj,
            key_path=_spec_path("cooldownPeriod"),
            message=(
                f"cooldownPeriod: {cooldown} has no effect with minReplicaCount "
                f"{so.min_replica_count}: KEDA only uses it to scale to zero; scale-down "
                f"follows the HPA's {window} s window"
            ),
            why=(
                f"KEDA reads cooldownPeriod only when it scales the workload to 0 or to "
                f"idleReplicaCount (scaleToZeroOrIdle in scale_scaledobjects.go), which never "
                f"happens with minReplicaCount {so.min_replica_count} and no idleReplicaCount. "
                f"Scale-down from N to {so.min_replica_count} is done by the HPA KEDA creates, "
                f"paced by {source}: replicas stay up about {window} s after the load drops, "
                f"not {cooldown} s. For GPU workloads keep that window at least as long as a "
                f"replica takes to start, or replicas (and GPU nodes, which the cluster "
                f"autoscaler keeps 10-20 minutes) thrash."
            ),
            fix=snippet(
                {
                    "spec": {
                        "minReplicaCount": so.min_replica_count,
                        "advanced": {
                            "horizontalPodAutoscalerConfig": {
                                "behavior": {
                                    "scaleDown": {"stabilizationWindowSeconds": max(cooldown, 0)}
                                }
                            }
                        },
                    }
                }
            )
            + "\n# and delete cooldownPeriod",
        )


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
def polling_interval_has_no_effect(ctx: LintContext) -> Iterator[Hit]:
    for obj, so in scaled_objects(ctx):
        if "pollingInterval" not in so.explicit or so.idle_mode:
            continue
        if so.min_replica_count is None or so.min_replica_count < 1:
            continue
        if any(trigger.use_cached_metrics for trigger in so.triggers):
            continue
        interval = so.polling_interval
        shown = interval if interval is not None else "(templated)"
        yield Hit(
            obj=obj,
            key_path=_spec_path("pollingInterval"),
            message=(
                f"pollingInterval: {shown} does not pace scaling with minReplicaCount "
                f"{so.min_replica_count}: the HPA queries the trigger every 15 s"
            ),
            why=(
                "With minReplicaCount >= 1 KEDA's own loop only keeps the minimum and the "
                "Active condition. The HPA KEDA creates reads the metric through KEDA's "
                "metrics server at every sync (15 s by default), and KEDA runs the query "
                "live each time (GetScaledObjectMetrics), so Prometheus is queried about "
                f"every 15 s and every {shown} s, and scaling reacts on the 15 s cycle."
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
def activation_above_threshold(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        meta = trig.metadata
        if "activationThreshold" not in meta.explicit or trig.so.scales_to_zero is not True:
            continue
        threshold, activation = meta.threshold, meta.activation_threshold
        if threshold is None or activation is None or threshold <= 0 or activation < threshold:
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
        "empty result, which then looks exactly like no load. With `minReplicaCount: 0` (or "
        "idle mode) the workload stays at zero and never activates (warning); with a "
        "`fallback` configured, the fallback can never trigger because an empty result is "
        "not an error (error); with `minReplicaCount >= 1` the HPA quietly scales down to "
        "the minimum (info). Queries that already turn an empty result into a value "
        "(`or vector(0)`, `absent(...)`) are left alone: they chose the behaviour."
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
def null_values_ignored(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        if "ignoreNullValues" in trig.metadata.explicit or trig.query is None:
            continue
        if not trig.query.parsed or trig.query.fills_empty:
            continue
        to_zero = trig.so.scales_to_zero
        if to_zero is None:
            continue
        fallback = trig.so.fallback
        if to_zero:
            consequence = (
                "the workload silently stays at zero: an empty result is never above the "
                "activation threshold"
            )
            severity = Severity.WARNING
        else:
            consequence = (
                f"the HPA silently scales down to minReplicaCount {trig.so.min_replica_count}"
            )
            severity = Severity.INFO
        dead_fallback = ""
        if fallback is not None:
            severity = Severity.ERROR if to_zero else Severity.WARNING
            replicas = dig(fallback, ("replicas",))
            dead_fallback = (
                f" The fallback ({replicas} replicas) can never trigger, since KEDA counts "
                "failures only for errors and an empty result is not one."
            )
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=(
                "an empty query result reads as 0 (ignoreNullValues defaults to true): if "
                f"the metric goes missing {consequence.split(':')[0]}"
            ),
            why=(
                "KEDA's Prometheus scaler returns 0, not an error, when the query result is "
                "empty, NaN or ±Inf and ignoreNullValues is true, its default "
                "(ExecutePromQuery). A ServiceMonitor that selects nothing, a metric renamed "
                "by a new release, or a label typo all give an empty result, and "
                f"{consequence}.{dead_fallback}"
            ),
            fix=snippet(
                {
                    "metadata": {
                        "query": trig.query.query,
                        "ignoreNullValues": "false",
                    }
                }
            )
            + "\n# or end the query with `or vector(0)` if an absent metric really means 0",
            severity=severity,
        )


def _replica_bound_hits(ctx: LintContext) -> Iterator[Hit]:
    for obj, so in scaled_objects(ctx):
        minimum, maximum, idle = so.min_replica_count, so.max_replica_count, so.idle_replica_count
        if minimum is None or maximum is None:
            continue
        hpa_min = 0 if "minReplicaCount" not in so.explicit else (minimum if minimum > 0 else 1)
        if hpa_min > maximum:
            where = "maxReplicaCount" if "maxReplicaCount" in so.explicit else "minReplicaCount"
            yield Hit(
                obj=obj,
                key_path=_spec_path(where),
                message=(
                    f"minReplicaCount {minimum} is greater than maxReplicaCount {maximum}"
                    + ("" if "maxReplicaCount" in so.explicit else " (the default)")
                ),
                why=(
                    "The ScaledObject CRD rejects minReplicaCount above maxReplicaCount (its "
                    "CEL rule uses 100 when maxReplicaCount is unset), and KEDA's controller "
                    "refuses it too (CheckReplicaCountBoundsAreValid), so the object is never "
                    "applied or never reconciled."
                ),
                fix=snippet({"spec": {"minReplicaCount": minimum, "maxReplicaCount": minimum}}),
            )
        if so.idle_mode and idle is not None and idle >= hpa_min:
            yield Hit(
                obj=obj,
                key_path=_spec_path("idleReplicaCount"),
                message=(
                    f"idleReplicaCount {idle} must be less than minReplicaCount "
                    f"{minimum if 'minReplicaCount' in so.explicit else '(unset: 0)'}"
                ),
                why=(
                    "KEDA scales to idleReplicaCount when the triggers are inactive and to "
                    "minReplicaCount or more when they are active, so the idle count must be "
                    "below the minimum; CheckReplicaCountBoundsAreValid rejects the "
                    "ScaledObject otherwise and it is never reconciled."
                ),
                fix=snippet({"spec": {"idleReplicaCount": 0, "minReplicaCount": max(1, idle + 1)}}),
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
def replica_bounds_invalid(ctx: LintContext) -> Iterator[Hit]:
    yield from _replica_bound_hits(ctx)


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
def trigger_metadata_not_string(ctx: LintContext) -> Iterator[Hit]:
    for obj, so in scaled_objects(ctx):
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
def metricname_ignored(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        if "metricName" not in trig.metadata.explicit:
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
def prometheus_address_namespace(ctx: LintContext) -> Iterator[Hit]:
    expected = ctx.profile.prometheus_namespace if ctx.profile is not None else None
    if not expected:
        return
    for trig in prometheus_triggers(ctx):
        address = trig.metadata.server_address
        host = _service_host(address) if address else None
        if host is None:
            continue
        service, namespace = host
        if namespace == expected:
            continue
        port = urlsplit(address).port if address else None
        fixed = f"http://{service}.{expected}.svc.cluster.local" + (f":{port}" if port else "")
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("serverAddress"),
            message=(
                f"serverAddress names namespace {namespace}, but the profile installs "
                f"Prometheus in {expected}"
            ),
            why=(
                f"{service}.{namespace}.svc resolves only if the Service lives in namespace "
                f"{namespace}; kube-prometheus-stack creates its Services in the namespace it "
                f"is installed into ({expected}, per the profile). Every query then fails and "
                "the ScaledObject never scales."
            ),
            fix=snippet({"metadata": {"serverAddress": fixed}}),
        )


def _service_host(address: str) -> tuple[str, str] | None:
    try:
        host = urlsplit(address).hostname
    except ValueError:
        return None
    if not host:
        return None
    parts = host.split(".")
    if len(parts) >= 3 and parts[2] == "svc":
        return parts[0], parts[1]
    return None


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
def scaledobject_target_missing(ctx: LintContext) -> Iterator[Hit]:
    for obj, so in scaled_objects(ctx):
        kind = so.target_kind
        if kind is None:
            continue
        namespace = ctx.namespace_of(obj)
        path = ("spec", "scaleTargetRef", "name")
        raw_name = as_str(dig(obj.body, path))
        if so.target_name is None:
            shown = raw_name if raw_name else "(none)"
            yield Hit(
                obj=obj,
                key_path=path,
                message=f"target {kind} {shown} is not in the set; checked the ScaledObject alone",
                why=(
                    "The target's name is a placeholder or missing, so the rules that need "
                    "the workload (GPU capacity, start-up, scrape interval) could not run."
                ),
                fix=snippet({"spec": {"scaleTargetRef": {"kind": kind, "name": "<workload>"}}}),
                severity=Severity.INFO,
            )
            continue
        if same_identity(ctx, kind, namespace, so.target_name) is not None:
            continue
        here = objects_in(ctx, kind, namespace)
        elsewhere = [w for w in ctx.of_kind(kind) if w.name == so.target_name]
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
                    f"no {kind} named {so.target_name} in namespace {namespace} (the set has "
                    f"{names}){also}"
                ),
                why=(
                    f"KEDA reports the ScaledObject as not ready and scales nothing while its "
                    f"target {kind} {namespace}/{so.target_name} does not exist."
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
                    f"{kind} {so.target_name} is in namespace {other}, but the ScaledObject is "
                    f"in {namespace}"
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
                    f"target {kind} {namespace}/{so.target_name} is not in the set; checked the "
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
        "`advanced.horizontalPodAutoscalerConfig.name`. HPAs owned by a ScaledObject "
        "(exported from a cluster) are not reported."
    ),
    example="kind: HorizontalPodAutoscaler\nspec:\n  scaleTargetRef:\n    kind: Deployment\n"
    "    name: web\n---\nkind: ScaledObject\nspec:\n  scaleTargetRef:\n    name: web",
    fix="# delete the HorizontalPodAutoscaler; move its behavior to the ScaledObject:\n"
    + snippet({"spec": {"advanced": {"horizontalPodAutoscalerConfig": {"behavior": {}}}}}),
)
def hpa_and_scaledobject(ctx: LintContext) -> Iterator[Hit]:
    hpas: dict[tuple[str, str, str], list[ManifestObject]] = {}
    for hpa in ctx.of_kind("HorizontalPodAutoscaler"):
        ref = as_map(dig(hpa.body, ("spec", "scaleTargetRef"))) or {}
        kind, name = as_str(ref.get("kind")), as_str(ref.get("name"))
        owners = dig(hpa.body, ("metadata", "ownerReferences"))
        if any(as_str(dig(o, ("kind",))) == "ScaledObject" for _, o in iter_list(owners)):
            continue
        annotations = as_map(dig(hpa.body, ("metadata", "annotations"))) or {}
        if annotations.get("validations.keda.sh/hpa-ownership") == "false":
            continue
        if kind and name:
            hpas.setdefault((kind, ctx.namespace_of(hpa), name), []).append(hpa)
    if not hpas:
        return
    for obj, so in scaled_objects(ctx):
        if so.target_kind is None or so.target_name is None:
            continue
        key = (so.target_kind, ctx.namespace_of(obj), so.target_name)
        for hpa in hpas.get(key, []):
            hpa_name = name_of(hpa)
            transfer = dig(obj.body, ("metadata", "annotations"))
            transfer_on = (as_map(transfer) or {}).get(
                "scaledobject.keda.sh/transfer-hpa-ownership"
            ) == "true"
            named = dig(obj.body, ("spec", "advanced", "horizontalPodAutoscalerConfig", "name"))
            if transfer_on and named == hpa_name:
                continue
            file, line, _ = hpa.line_of(())
            yield Hit(
                obj=obj,
                key_path=("spec", "scaleTargetRef", "name"),
                message=(
                    f"HorizontalPodAutoscaler {hpa_name} ({file}:{line}) already scales "
                    f"{so.target_kind} {so.target_name}"
                ),
                why=(
                    "KEDA creates its own HPA (keda-hpa-<name>) for this ScaledObject; two "
                    "HPAs writing spec.replicas of one workload from different metrics undo "
                    "each other every 15 s. KEDA's webhook rejects the ScaledObject (\"the "
                    f"workload '{so.target_name}' ... is already managed by the hpa "
                    f"'{hpa_name}'\")."
                ),
                fix=(
                    f"# delete HorizontalPodAutoscaler {hpa_name}; put its scaling behavior "
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
def scaledobjects_share_target(ctx: LintContext) -> Iterator[Hit]:
    first: dict[tuple[str, str, str], ManifestObject] = {}
    for obj, so in scaled_objects(ctx):
        if so.target_kind is None or so.target_name is None:
            continue
        key = (so.target_kind, ctx.namespace_of(obj), so.target_name)
        if key not in first:
            first[key] = obj
            continue
        other = first[key]
        file, line, _ = other.line_of(())
        other_name = name_of(other)
        yield Hit(
            obj=obj,
            key_path=("spec", "scaleTargetRef", "name"),
            message=(
                f"ScaledObject {other_name} ({file}:{line}) already scales {so.target_kind} "
                f"{so.target_name}"
            ),
            why=(
                'KEDA rejects a second ScaledObject for one workload ("the workload ... is '
                f"already managed by the ScaledObject '{other_name}'\"); had both been "
                "accepted, their two HPAs would overwrite each other's replica count."
            ),
            fix=f"# move this object's triggers into ScaledObject {other_name} and delete it",
        )
