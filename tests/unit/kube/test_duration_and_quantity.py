from __future__ import annotations

import pytest

from gpuscale.kube import format_duration, parse_duration, parse_quantity, quantity_or_none


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("5m", 300.0),
        ("1h30m", 5400.0),
        ("250ms", 0.25),
        ("2d", 172800.0),
        ("1m0s", 60.0),
        ("1.5s", 1.5),
        ("15", 15.0),
        (15, 15.0),
        (0.5, 0.5),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "bad", ["", "5x", "m5", "5m 3s", "-5s", "1h-3m", "abc", True, float("nan")]
)
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"), [(45, "45s"), (300, "5m"), (3723, "1h2m3s"), (0, "0s"), (0.25, "0.25s")]
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1.0),
        ("500m", 0.5),
        ("2Gi", 2 * 2**30),
        ("1k", 1000.0),
        ("1.5", 1.5),
        (2, 2.0),
        ("1e3", 1000.0),
    ],
)
def test_parse_quantity(text: str | int, value: float) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["", "1Zi", "one", "1 Gi", True])
def test_parse_quantity_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="quantity"):
        parse_quantity(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("500m", 0.5), (2, 2.0), ("2Gi", 2.0 * 1024**3), ("n/a", None), ("", None)],
)
def test_quantity_or_none_reads_live_fields(value: object, expected: float | None) -> None:
    assert quantity_or_none(value) == expected


def test_scheduler_counts_are_exact_quantities() -> None:
    from gpuscale.controllers.scheduler import quantities
    from gpuscale.kube import milli_value, whole_value

    # Value() and MilliValue() round up; a float is read at its shortest spelling
    assert whole_value("1.5") == 2
    assert milli_value("0.0001") == 1
    assert whole_value("2Gi") == 2**31
    assert quantities({"cpu": "250m", "memory": "1.5Gi", "amd.com/gpu": 1}) == {
        "cpu": 250,
        "memory": 1610612736,
        "amd.com/gpu": 1,
    }
    # a float sum's binary error (0.1 + 0.2 = 0.30000000000000004) is below a nano-unit
    assert quantities({"cpu": 0.1 + 0.2})["cpu"] == 300
    assert quantities({"cpu": 0.1001})["cpu"] == 101
    with pytest.raises(ValueError, match="non-negative"):
        quantities({"cpu": -1.0})
