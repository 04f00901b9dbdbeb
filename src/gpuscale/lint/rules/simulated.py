"""The rule a simulation proves: ``flaps-under-steady-load``.

The other rules read what a configuration says; this one runs it. For each ScaledObject
whose target is in the set and whose query could make it flap,
:func:`gpuscale.sim.flap.steady_load_flap` simulates KEDA's poll, the HPA it generates,
Prometheus, the scheduler and the cluster autoscaler under the constant load the trigger
is meant for (with the profile when there is one, else the profile's defaults) and says
whether the replica count keeps reversing. A flap is reported on the driven trigger's
query with its period, the counts it cycles through and each turn as the HPA computed
it. When the query's value falls as replicas are added (a per-replica figure) and the
same simulation with ``metricType: Value`` holds, the fix says so; the fix is never a
guess the simulator has not run.

Cost: a simulation is 10 to 100 ms (less when the count settles: the simulator stops a
run once the rest is proven quiet), so the rule runs one only where the cheap
preconditions hold (:func:`_suspects`: a per-replica query under metricType
AverageValue, the cause the query analysis can see) and on the few objects the
simulation needs (:func:`_world`), and a second one when it flaps (to check the fix).
``benchmarks/lint_1000.py`` measures this rule apart from the rest. The
simulator is imported when the rule first runs, not when the catalogue is read
(``gpuscale lint --list`` stays light). The simulator answers None for input it refuses;
anything it raises besides is a bug, and it never ends a lint (or deploy) run: the rule
notes it (:meth:`LintContext.note <gpuscale.lint.LintContext.note>`) and stays silent for
that object.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuscale._hpa_words import hpa_step_text
from gpuscale.kube import format_duration
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._k8s import workload_view
from gpuscale.lint._keda import ScaledObjectView
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import (
    PER_REPLICA_QUERY_EXAMPLE,
    TOTAL_QUERY_FIX,
    PromTrigger,
    fmt,
    name_of,
    prometheus_triggers,
    same_identity,
    trigger_path,
)
from gpuscale.manifests import Manifest, ManifestSet

if TYPE_CHECKING:
    from gpuscale.sim.flap import FlapStep, FlapVerdict

__all__: list[str] = []

_SLUG = "flaps-under-steady-load"


def _replicas(count: int) -> str:
    return f"{count} replica" if count == 1 else f"{count} replicas"


def _computed(step: FlapStep, metric_type: str, threshold: float) -> str:
    """One turn as the HPA computes it (``GetExternalPerPodMetricReplicas`` for
    AverageValue, ``GetExternalMetricReplicas`` for Value)."""
    value, target = fmt(step.value), fmt(threshold)
    if metric_type == "AverageValue":
        arithmetic = hpa_step_text(
            target_type="AverageValue",
            usage=step.value / step.replicas,
            target=threshold,
            replicas=step.replicas,
            desired=step.desired,
            read=step.value,
        )
        return f"at {_replicas(step.replicas)}, {arithmetic}"
    arithmetic = f"{value} vs target {target}, ratio {fmt(step.value / threshold)}"
    return f"at {_replicas(step.replicas)}, {arithmetic} → {step.desired}"


def _per_replica(steps: tuple[FlapStep, ...]) -> bool:
    """Whether the value read falls as the replica count rises (the query is already a
    per-replica figure)."""
    by_count = sorted((s.replicas, s.value) for s in steps)
    return len({n for n, _ in by_count}) > 1 and all(
        later < earlier for (n1, earlier), (n2, later) in itertools.pairwise(by_count) if n2 > n1
    )


def _with_metric_type(obj: Manifest, index: int, metric_type: str) -> Manifest:
    body = copy.deepcopy(obj.body)
    body["spec"]["triggers"][index]["metricType"] = metric_type
    return replace(obj, body=body)


def _suspects(ctx: LintContext) -> Iterator[PromTrigger]:
    """The cheap preconditions: the trigger the simulation drives (the ScaledObject's first
    ``prometheus`` one) reads a per-replica figure (``query-divides-by-replicas``' analysis)
    under metricType AverageValue, with a positive threshold and no scaling modifiers."""
    seen: set[int] = set()
    for trig in prometheus_triggers(ctx):
        so = trig.so
        if id(so.obj) in seen:
            continue
        seen.add(id(so.obj))
        if so.spec is None or so.uses_scaling_modifiers:
            continue
        prom = trig.trigger.prometheus
        query = trig.query
        if prom is None or prom.threshold <= 0 or query is None or not query.parsed:
            continue
        if query.per_replica is not None and trig.trigger.metric_type == "AverageValue":
            yield trig


_WORLD_KINDS = (
    "Service",
    "ServiceMonitor",
    "HorizontalPodAutoscaler",
    "TriggerAuthentication",
    "ClusterTriggerAuthentication",
)


def _target(ctx: LintContext, so: ScaledObjectView) -> Manifest | None:
    """The target's manifest, when the set holds it and its view reads it."""
    if so.target is None:
        return None
    kind, name = so.target
    found = same_identity(ctx, kind, ctx.namespace_of(so.obj), name)
    return found if found is not None and workload_view(ctx, found) is not None else None


def _may_concern(obj: Manifest, namespace: str | None) -> bool:
    """Whether ``obj`` can act on a workload in ``namespace`` (``None``: unknown, so yes):
    it is in that namespace or sets none, or it is a ServiceMonitor whose
    ``namespaceSelector`` reaches there, or it is cluster-wide."""
    if namespace is None or obj.namespace in (None, namespace):
        return True
    if obj.kind == "ClusterTriggerAuthentication":
        return True
    if obj.kind != "ServiceMonitor":
        return False
    spec = obj.body.get("spec")
    selector = spec.get("namespaceSelector") if isinstance(spec, dict) else None
    if not isinstance(selector, dict):
        return False
    names = selector.get("matchNames")
    return selector.get("any") is True or (isinstance(names, list) and namespace in names)


def _world(ctx: LintContext, scaled_object: Manifest, target: Manifest) -> ManifestSet:
    """What the simulation of one ScaledObject needs from the set: it, its target, and the
    objects that decide whether the target's metric is scraped (Services, ServiceMonitors)
    or act on its replicas, when they can reach the target's namespace. Taking only these
    keeps one simulation's cost independent of the size of the set."""
    namespace = target.namespace
    return ManifestSet(
        [scaled_object, target]
        + [m for m in ctx.of_kind(*_WORLD_KINDS) if _may_concern(m, namespace)]
    )


def _verdict(manifests: ManifestSet, ctx: LintContext, obj: Manifest) -> FlapVerdict | None:
    from gpuscale.sim.flap import steady_load_flap  # noqa: PLC0415 - see module doc

    # Objects without a namespace go where the ScaledObject's ServiceMonitor looks, so the
    # metric flows: a namespace mismatch is servicemonitor-namespace-mismatch's finding.
    return steady_load_flap(manifests, ctx.profile, obj)


def _value_holds(manifests: ManifestSet, ctx: LintContext, obj: Manifest, index: int) -> int | None:
    """The count the same simulation holds with ``metricType: Value``, or None."""
    changed = _with_metric_type(obj, index, "Value")
    swapped = ManifestSet([changed if m is obj else m for m in manifests])
    verdict = _verdict(swapped, ctx, changed)
    return verdict.replicas[0] if verdict is not None and not verdict.flaps else None


def _fix(so: ScaledObjectView, verdict: FlapVerdict, held: int | None) -> str:
    trigger = next(t for t in so.triggers if t.index == verdict.trigger)
    if held is None:
        return (
            "Make the query's value independent of the replica count: with metricType "
            "AverageValue the HPA divides it by the replica count, so the query must return "
            "the total (sum(...)); a per-replica figure wants metricType Value."
        )
    entry = {
        "type": "prometheus",
        "metricType": "Value",
        "metadata": {
            "query": trigger.query,
            "threshold": trigger.metadata.get("threshold"),
        },
    }
    note = (
        f"# the same simulation holds {_replicas(held)}; or keep AverageValue and query "
        "the total (sum(...))"
    )
    return f"{snippet({'triggers': [entry]})}\n{note}"


def _hit(so: ScaledObjectView, verdict: FlapVerdict, held: int | None, *, profile: bool) -> Hit:
    cycle = " ↔ ".join(str(r) for r in verdict.replicas)
    period = "" if verdict.period_s is None else f" every {format_duration(verdict.period_s)}"
    computed = "; ".join(
        _computed(s, verdict.metric_type, verdict.threshold) for s in verdict.steps
    )
    timings = "the profile's timings" if profile else "gpuscale's default profile"
    falls = (
        " The value the query returns falls as replicas are added, so no count satisfies "
        "it for long."
        if _per_replica(verdict.steps)
        else ""
    )
    return Hit(
        obj=so.obj,
        key_path=trigger_path(verdict.trigger, "query"),
        message=f"under a steady load the replica count flaps {cycle}{period}"
        + (f": {computed}" if computed else ""),
        why=(
            f"A simulation of KEDA's poll, the HPA it generates, Prometheus, the scheduler "
            f"and the cluster autoscaler ({timings}) under a constant load, "
            f"{verdict.load}, shows the replica count reversing {verdict.reversals} times "
            f"in {format_duration(verdict.simulated_s)} and still turning at the end. "
            + (
                f"Each turn above is the HPA's own computation (metricType "
                f"{verdict.metric_type}).{falls} "
                if computed
                else ""
            )
            + "Every turn up can ask for a GPU node that the cluster autoscaler then keeps "
            "until it has been unneeded for its scale-down-unneeded-time, and every turn "
            "down takes capacity from a load that has not changed."
        ),
        fix=_fix(so, verdict, held),
    )


@rule(
    _SLUG,
    severity=Severity.WARNING,
    title="Under constant load the replica count oscillates (proved by simulation)",
    explanation=(
        "gpuscale simulates the ScaledObject with the real models of KEDA's polling loop "
        "(`pkg/scaling/scale_handler.go`), the HPA it generates (`replica_calculator.go`, "
        "`horizontal.go`: tolerance, the 300 s scale-down stabilization window), "
        "Prometheus' scrapes, kube-state-metrics, the scheduler and the cluster autoscaler, "
        "under a constant load the trigger is meant for: for a gauge the workload "
        "exports, the gauge at twice the threshold on one pod (the tutorial's own test); "
        "for gpuscale's request series, the rate that keeps 2 replicas 75 % busy. When the "
        "replica count still reverses direction in the last third of the run, the finding "
        "gives the period, the counts it cycles through and each turn as the HPA computed "
        "it (under AverageValue: at N replicas, X / N replicas = X/N per replica against "
        "the target per replica, ceil(N × (X/N)/target) = M). The period is the "
        "stabilization window plus two HPA syncs plus the HPA's drift (each sync comes a "
        "sync period after the last reconcile ended): about 5m30s for the defaults, "
        "where an exact 15 s grid would give 6m (docs/timing.md). The usual cause is a query "
        "whose value depends on the replica count, such as an average under metricType "
        "AverageValue. To keep lint fast the rule simulates only the ScaledObjects where "
        "that cause is present: the driven trigger (the first `prometheus` one) has a "
        "query whose top level is a per-replica figure (as `query-divides-by-replicas` "
        "finds it) under metricType AverageValue, a positive threshold, no scaling "
        "modifiers, and its target workload in the set. The simulation uses the profile's "
        "timings when one is given, else the defaults; a trigger it cannot drive (a query "
        "on cluster metrics only) or input it cannot simulate leaves the rule silent. It "
        "is a warning, not an error: it shows one load, not every load. A run stops once "
        "it is proven settled, so most cost 5–20 ms; one that flaps runs to its end, and a "
        "second run checks the fix."
    ),
    example=PER_REPLICA_QUERY_EXAMPLE,
    fix=TOTAL_QUERY_FIX,
    requires="simulator",
)
def _flaps_under_steady_load(ctx: LintContext) -> Iterator[Hit]:
    for trig in _suspects(ctx):
        so = trig.so
        target = _target(ctx, so)
        if target is None:
            continue
        manifests = _world(ctx, so.obj, target)
        try:
            verdict = _verdict(manifests, ctx, so.obj)
            if verdict is None or not verdict.flaps:
                continue
            held = None
            if verdict.metric_type == "AverageValue" and _per_replica(verdict.steps):
                held = _value_holds(manifests, ctx, so.obj, verdict.trigger)
        except Exception as error:  # see the module docstring
            ctx.note(
                f"{so.obj.source}: rule {_SLUG} could not simulate ScaledObject "
                f"{name_of(so.obj)} ({type(error).__name__}: {error}); this is a bug in "
                "gpuscale, please report it"
            )
            continue
        yield _hit(so, verdict, held, profile=ctx.profile is not None)
