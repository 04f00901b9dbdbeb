"""``flaps-under-steady-load``: the rule a simulation proves.

Source of the expected flap: the tutorial's own arithmetic (examples/tutorial/README.md,
row 2): a per-replica query under metricType AverageValue with the gauge at twice the
threshold reads 160 at 1 replica (desired 2) and 80 at 2 (80/2 = 40 per replica, desired 1),
turning every 300 s scale-down window plus the HPA's syncs. The simulation itself is
:func:`gpuscale.sim.flap.steady_load_flap`; these tests check what the rule runs it on and
what it reports.
"""

from __future__ import annotations

from typing import Any

import pytest

import gpuscale.sim.flap
from gpuscale.lint import LintOptions, run_lint
from gpuscale.manifests import load_text
from tests.unit.lint.conftest import line_of, lint_yaml, only
from tests.unit.lint.manifests import deployment, docs, scaled_object, service, service_monitor

SLUG = "flaps-under-steady-load"
PER_REPLICA = (
    'sum(my_gauge{service="web"}) / sum(kube_deployment_status_replicas{deployment="web"})'
)
TOTAL = 'sum(my_gauge{service="web"})'
TOLERATES_GPU = "tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n"


def _app(query: str, *, spec: str = "minReplicaCount: 1\n", trigger: str = "") -> str:
    return docs(
        deployment(pod_spec=TOLERATES_GPU),
        service(),
        service_monitor(),
        scaled_object(query, spec=spec, trigger=trigger),
    )


@pytest.fixture
def simulations(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """For each simulation the rule runs (the real simulator runs), the names of the
    objects it was given."""
    given: list[list[str]] = []
    real = gpuscale.sim.flap.steady_load_flap

    def counted(manifests: Any, *args: Any, **kwargs: Any) -> Any:
        given.append(sorted(f"{m.kind}/{m.name}" for m in manifests))
        return real(manifests, *args, **kwargs)

    monkeypatch.setattr(gpuscale.sim.flap, "steady_load_flap", counted)
    return given


def test_a_per_replica_query_under_average_value_flaps(simulations: list[list[str]]) -> None:
    text = _app(PER_REPLICA)
    [finding] = only(lint_yaml(text, select=[SLUG]), SLUG)
    assert finding.location.line == line_of(text, "query:")
    # the window (300 s) plus two HPA syncs, each a sync period after the last reconcile
    # ended: ~330.5 s (on an exact 15 s grid a recommendation exactly 300 s old would
    # still count, and the period would be 360 s)
    assert "flaps 1 ↔ 2 every 5m3" in finding.message
    assert (
        "at 1 replica, 160 / 1 replica = 160 per replica against a target of 80 per replica: "
        "ceil(1 × 160/80) = 2" in finding.message
    )
    assert (
        "at 2 replicas, 80 / 2 replicas = 40 per replica against a target of 80 per replica: "
        "ceil(2 × 40/80) = 1" in finding.message
    )
    assert "Each turn above is the HPA's own computation (metricType AverageValue)" in (finding.why)
    assert "metricType: Value" in finding.fix
    assert "the same simulation holds 2 replicas" in finding.fix
    # one simulation to find the flap, one to check the fix
    assert len(simulations) == 2


@pytest.mark.parametrize(
    "query",
    [PER_REPLICA, 'avg(my_gauge{service="web"})', 'sum(my_gauge) / count(my_gauge{service="web"})'],
    ids=["divides-by-replicas", "avg", "divides-by-count"],
)
def test_each_per_replica_form_flaps(query: str) -> None:
    [finding] = only(lint_yaml(_app(query), select=[SLUG]), SLUG)
    assert "flaps 1 ↔ 2 every" in finding.message


@pytest.mark.parametrize(
    ("query", "trigger", "spec"),
    [
        (TOTAL, "", "minReplicaCount: 1\n"),
        (PER_REPLICA, "metricType: Value\n", "minReplicaCount: 1\n"),
        (
            PER_REPLICA,
            "",
            "minReplicaCount: 1\nadvanced:\n  scalingModifiers:\n    formula: trig\n",
        ),
        ("sum(${METRIC})", "", "minReplicaCount: 1\n"),
    ],
    ids=["total-average-value", "per-replica-value", "scaling-modifiers", "templated"],
)
def test_near_misses_are_not_simulated(
    simulations: list[list[str]], query: str, trigger: str, spec: str
) -> None:
    assert only(lint_yaml(_app(query, trigger=trigger, spec=spec), select=[SLUG]), SLUG) == []
    assert simulations == []


def test_a_suspect_the_simulation_clears_is_not_reported(simulations: list[list[str]]) -> None:
    # the same per-replica query, but maxReplicaCount 1: nothing can oscillate
    text = _app(PER_REPLICA, spec="minReplicaCount: 1\nmaxReplicaCount: 1\n")
    assert only(lint_yaml(text, select=[SLUG]), SLUG) == []
    assert len(simulations) == 1


def test_no_simulation_without_the_target_in_the_set(simulations: list[list[str]]) -> None:
    text = docs(service(), service_monitor(), scaled_object(PER_REPLICA))
    assert only(lint_yaml(text, select=[SLUG]), SLUG) == []
    assert simulations == []


def test_the_fixed_query_is_simulated_nowhere_and_reports_nothing(
    simulations: list[list[str]],
) -> None:
    fixed = _app(PER_REPLICA, trigger="metricType: Value\n")
    assert lint_yaml(fixed, select=[SLUG]) == []
    assert simulations == []


def test_one_simulation_sees_only_the_objects_it_needs(simulations: list[list[str]]) -> None:
    others = [
        docs(
            deployment(name=f"app{i}", namespace="other"),
            service(name=f"app{i}", namespace="other"),
            scaled_object(PER_REPLICA, name=f"app{i}", target=f"app{i}", namespace="other"),
        )
        for i in range(5)
    ]
    lint_yaml(docs(_app(PER_REPLICA), *others), select=[SLUG])
    assert len(simulations) >= 6
    # each time: the ScaledObject, its target, the Services and ServiceMonitors that can
    # reach its namespace (theirs, or none set); no other app's workload or ScaledObject
    for names in simulations:
        assert len([n for n in names if n.startswith("ScaledObject/")]) == 1
        assert len([n for n in names if n.startswith("Deployment/")]) == 1
    [app0] = [names for names in simulations if "ScaledObject/app0" in names]
    services = [f"Service/app{i}" for i in range(5)]
    assert app0 == sorted(
        ["ScaledObject/app0", "Deployment/app0", *services, "Service/web", "ServiceMonitor/web"]
    )


def test_a_service_monitor_elsewhere_counts_only_when_its_selector_reaches(
    simulations: list[list[str]],
) -> None:
    def app(monitor_namespaces: str) -> str:
        return docs(
            deployment(namespace="prod", pod_spec=TOLERATES_GPU),
            service(namespace="prod"),
            service_monitor(namespace="monitoring", namespace_selector=monitor_namespaces),
            scaled_object(PER_REPLICA, namespace="prod"),
        )

    reached = []
    for selector in ("matchNames: [prod]", "any: true", "matchNames: [staging]"):
        simulations.clear()
        lint_yaml(app(f"namespaceSelector:\n  {selector}\n"), select=[SLUG])
        reached.append("ServiceMonitor/web" in simulations[0])
    assert reached == [True, True, False]


def test_a_simulator_failure_is_a_note_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(gpuscale.sim.flap, "steady_load_flap", broken)
    options = LintOptions(select=frozenset({SLUG}))
    report = run_lint(load_text(_app(PER_REPLICA), "m.yaml"), None, options)
    assert report.findings == ()
    [note] = [n for n in report.notes if SLUG in n]
    assert "could not simulate ScaledObject web (ZeroDivisionError: boom)" in note
    assert note.startswith("m.yaml")
