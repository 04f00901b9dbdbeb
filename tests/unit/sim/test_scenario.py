"""Scenario YAML: the steps of the issue's examples, and errors that name the line."""

from __future__ import annotations

import pytest

from gpuscale.errors import InputError
from gpuscale.sim.scenario import GaugeStep, RampStep, RateStep, parse_scenario

EXAMPLE = """\
until: 30m
steps:
  - at: 60s
    set_gauge: {name: my_custom_gauge, value: 160, pods: 1}
  - at: 0s
    request_rate: 12
  - at: 10m
    ramp: {from: 0, to: 20, over: 10m}
    workload: llm
"""


def test_the_issue_examples_parse_and_sort_by_time() -> None:
    scenario = parse_scenario(EXAMPLE, source="s.yaml")
    assert scenario.until == 1800.0
    assert scenario.steps == (
        RateStep(0.0, 12.0, None, 5),
        GaugeStep(60.0, "my_custom_gauge", 160.0, 1, None, 3),
        RampStep(600.0, 0.0, 20.0, 600.0, "llm", 7),
    )


def test_a_bare_list_and_pods_all() -> None:
    scenario = parse_scenario("- at: 1m\n  set_gauge: {name: g, value: 1, pods: all}\n")
    assert scenario.until is None
    assert scenario.steps[0] == GaugeStep(60.0, "g", 1.0, None, None, 1)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("steps:\n  - at: soon\n    request_rate: 1\n", "s.yaml:2", "duration"),
        ("steps:\n  - request_rate: 1\n", "s.yaml:2", "needs 'at'"),
        ("steps:\n  - at: 1s\n    request_rate: -3\n", "s.yaml:3", ">= 0"),
        (
            "steps:\n  - at: 1s\n    request_rate: 1\n    set_gauge: {name: g, value: 1}\n",
            "s.yaml:2",
            "exactly one",
        ),
        ("steps:\n  - at: 1s\n    wat: 1\n", "s.yaml:3", "unknown key 'wat'"),
        ("steps:\n  - at: 1s\n    set_gauge: {name: g}\n", "s.yaml:3", "needs a value"),
        (
            "steps:\n  - at: 1s\n    set_gauge: {name: g, value: 1, pods: 0}\n",
            "s.yaml:3",
            "positive number or 'all'",
        ),
        ("steps:\n  - at: 1s\n    ramp: {from: 0, to: 1, over: 0s}\n", "s.yaml:3", "longer"),
        ("steps:\n  - at: 1s\n    ramp: {from: 0, to: 1}\n", "s.yaml:3", "needs 'over'"),
        ("until: 0s\nsteps: []\n", "s.yaml:1", "until"),
        (
            "until: 20m\nsteps:\n  - {at: 0s, request_rate: 1}\n  - workload: w\n"
            "    at: 30m\n    request_rate: 2\n",
            "s.yaml:5",
            r"the step at 30m is not before the scenario's until \(20m\)",
        ),
        ("steps:\n  - {at: 20m, request_rate: 1}\nuntil: 20m\n", "s.yaml:2", "not before"),
        ("steps: []\n", "s.yaml:1", "non-empty"),
        ("steps:\n  - at: 1s\n   request_rate: [\n", "s.yaml:3", "not valid YAML"),
    ],
)
def test_errors_name_file_and_line(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_scenario(text, source="s.yaml")
    assert str(info.value).split(": ")[0] == where
