"""Bad autoscaler settings and simulation inputs of the world branch (issue 12): the
profile's new ``expander_priorities`` and ``max_nodes_total``, the removed
``scale_down_unready_time``, an unknown provider, and load a simulation cannot bind."""

from __future__ import annotations

from pathlib import Path

from tests.unit.badinput._harness import Bad

_ROOT = Path(__file__).resolve().parents[3]
_TUTORIAL = (_ROOT / "examples" / "tutorial" / "resources.yaml").read_text()
_PROFILE = (_ROOT / "examples" / "tutorial" / "gpuscale.yaml").read_text()
_SCENARIO = (_ROOT / "examples" / "tutorial-scenario.yaml").read_text()


def _profile(case: str, autoscaler: str, names: tuple[str, ...]) -> Bad:
    return Bad(
        id=f"world-profile-{case}",
        argv=("profile", "check", "gpuscale.yaml"),
        files={"gpuscale.yaml": f"autoscaler:\n{autoscaler}"},
        names=names,
    )


def _simulate(case: str, scenario: str, names: tuple[str, ...], profile: str = _PROFILE) -> Bad:
    return Bad(
        id=f"world-simulate-{case}",
        argv=("simulate", "{d}/app", "--scenario", "{d}/s.yaml", "--until", "5m"),
        files={"app/resources.yaml": _TUTORIAL, "app/gpuscale.yaml": profile, "s.yaml": scenario},
        names=names,
    )


CASES = [
    _profile(
        "priority-not-a-regex",
        "  expander: priority\n  expander_priorities: {10: ['gpu((']}\n",
        ("gpuscale.yaml:3", "expander_priorities", "gpu(("),
    ),
    _profile(
        "priority-not-a-list",
        "  expander_priorities: {10: 7}\n",
        ("gpuscale.yaml:2", "expander_priorities"),
    ),
    _profile(
        "priority-key-not-a-number",
        "  expander_priorities: {high: ['.*']}\n",
        ("gpuscale.yaml:2", "expander_priorities"),
    ),
    _profile(
        "max-nodes-total-negative",
        "  max_nodes_total: -1\n",
        ("gpuscale.yaml:2", "max_nodes_total"),
    ),
    _profile(
        "max-nodes-total-text", "  max_nodes_total: lots\n", ("gpuscale.yaml:2", "max_nodes_total")
    ),
    _profile(
        "scale-down-unready-time-removed",
        "  scale_down_unready_time: 20m\n",
        ("gpuscale.yaml:2", "scale_down_unready_time"),
    ),
    Bad(
        id="world-profile-unknown-provider",
        argv=("profile", "check", "gpuscale.yaml"),
        files={"gpuscale.yaml": "cluster:\n  provider: aws\n"},
        names=("gpuscale.yaml:2", "provider"),
    ),
    _simulate(
        "step-names-no-such-workload",
        "steps:\n  - at: 60s\n    workload: nope\n"
        "    set_gauge: {name: my_custom_gauge, value: 1}\n",
        ("s.yaml", "nope"),
    ),
    _simulate(
        "scenario-workload-no-such-workload",
        "workload: nope\nsteps:\n  - at: 60s\n    set_gauge: {name: my_custom_gauge, value: 1}\n",
        ("nope",),
    ),
    _simulate(
        "priority-regex-in-simulate",
        _SCENARIO,
        ("gpuscale.yaml", "expander_priorities"),
        profile=_PROFILE + "autoscaler:\n  expander: priority\n  expander_priorities: {1: ['[']}\n",
    ),
]
