from __future__ import annotations

import pytest

from gpuscale.report import (
    Summary,
    SummaryRow,
    SummarySection,
    format_value,
    side_by_side,
    timeline_basics,
)
from gpuscale.report.tables import SummaryValue
from tests.unit.report import timelines


def test_side_by_side_lines_up_sections_and_rows() -> None:
    first = Summary(
        (
            SummarySection("Replicas", (SummaryRow("max", 2), SummaryRow("flaps", 3, "5m period"))),
            SummarySection("Cost", (SummaryRow("dollars", "$0.40"),)),
        )
    )
    second = Summary(
        (
            SummarySection("Cost", (SummaryRow("dollars", "$0.50"),)),
            SummarySection("Replicas", (SummaryRow("max", 2, "held"), SummaryRow("min", 1))),
        )
    )
    grid = side_by_side(["tutorial", "fixed"], [first, second])
    assert grid.columns == ("tutorial", "fixed")
    assert [s.title for s in grid.sections] == ["Replicas", "Cost"]
    replicas = grid.sections[0]
    assert [(r.label, r.values, r.note) for r in replicas.rows] == [
        ("max", (2, 2), "held"),
        ("flaps", (3, None), "5m period"),
        ("min", (None, 1), ""),
    ]
    assert grid.sections[1].rows[0].values == ("$0.40", "$0.50")
    with pytest.raises(ValueError, match="one column label per summary"):
        side_by_side(["a"], [first, second])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (True, "yes"),
        (12345, "12,345"),
        (0.1234567, "0.1235"),
        (2.0, "2"),
        (123456.7, "123,457"),
        ("$3.98", "$3.98"),
    ],
)
def test_format_value(value: SummaryValue, text: str) -> None:
    assert format_value(value) == text


def test_timeline_basics_of_the_tutorial() -> None:
    summary = timeline_basics(timelines.tutorial())
    values = {(s.title, r.label): r.value for s in summary.sections for r in s.rows}
    workload = f"Workload {timelines.WORKLOAD}"
    assert values[("Run", "duration")] == "15m"
    assert values[("Run", "records")] == 12
    assert values[("Run", "controller decisions")] == 6
    assert values[(workload, "replicas min")] == 1
    assert values[(workload, "replicas max")] == 2
    assert values[(workload, "final replicas")] == 2
    assert values[(workload, "pending pods max")] == 1
    assert values[("Nodes", "gpu nodes max")] == 2
    # 1 node for 100 s, then 2 nodes for 800 s, at $1.99/h.
    expected = 1.99 * (100 + 2 * 800) / 3600
    assert values[("Cost", "dollars")] == f"${expected:,.2f}"
    assert summary.as_json()[0]["rows"][0] == {"label": "world", "value": "simulate", "note": ""}
