"""The event engine: ordering, advancing, processes and bad input (SimPy's contract)."""

from __future__ import annotations

import math

import pytest

from gpuscale.sim.engine import EventLoop, Priority


def test_same_time_actions_run_by_priority_then_schedule_order() -> None:
    engine = EventLoop()
    ran: list[str] = []
    engine.at(5.0, lambda: ran.append("scrape"), priority=Priority.SCRAPE)
    engine.at(5.0, lambda: ran.append("load"), priority=Priority.LOAD)
    engine.at(5.0, lambda: ran.append("scrape-2"), priority=Priority.SCRAPE)
    engine.at(1.0, lambda: ran.append("early"), priority=Priority.TIMELINE)
    assert engine.advance_to(10.0) == 4
    assert ran == ["early", "load", "scrape", "scrape-2"]
    assert engine.now == 10.0


def test_advance_to_stops_at_the_time_and_runs_actions_due_at_it() -> None:
    engine = EventLoop()
    seen: list[float] = []
    for t in (1.0, 2.0, 3.0):
        engine.at(t, lambda: seen.append(engine.now))
    engine.advance_to(2.0)
    assert seen == [1.0, 2.0]
    assert engine.now == 2.0
    assert engine.peek() == 3.0
    engine.advance_to(2.5)
    assert seen == [1.0, 2.0]
    assert engine.step()
    assert seen == [1.0, 2.0, 3.0]
    assert not engine.step()
    assert engine.peek() == math.inf


@pytest.mark.parametrize("delay", [-1.0, -1e-9, math.nan])
def test_negative_or_nan_delay_is_an_error(delay: float) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        EventLoop().after(delay, lambda: None)


def test_scheduling_in_the_past_or_at_infinity_is_an_error() -> None:
    engine = EventLoop(start=10.0)
    with pytest.raises(ValueError, match="before now"):
        engine.at(9.0, lambda: None)
    with pytest.raises(ValueError, match="infinity"):
        engine.at(math.inf, lambda: None)
    with pytest.raises(ValueError, match="before now"):
        engine.advance_to(5.0)
    with pytest.raises(ValueError, match="finite"):
        EventLoop(start=math.nan)


def test_cancelled_actions_do_not_run() -> None:
    engine = EventLoop()
    ran: list[int] = []
    handle = engine.at(1.0, lambda: ran.append(1))
    engine.at(2.0, lambda: ran.append(2))
    engine.cancel(handle)
    assert engine.peek() == 2.0
    engine.advance_to(5.0)
    assert ran == [2]


def test_processes_sleep_and_wait_for_events() -> None:
    engine = EventLoop()
    log: list[tuple[float, str]] = []
    ready = engine.event()

    def waiter():  # type: ignore[no-untyped-def]
        value = yield ready
        log.append((engine.now, f"woke with {value}"))

    def ticker():  # type: ignore[no-untyped-def]
        for _ in range(3):
            yield 10.0
            log.append((engine.now, "tick"))
        ready.succeed("go")

    proc = engine.process(waiter())
    engine.process(ticker())
    engine.advance_to(100.0)
    assert log == [(10.0, "tick"), (20.0, "tick"), (30.0, "tick"), (30.0, "woke with go")]
    assert proc.finished
    with pytest.raises(RuntimeError, match="already"):
        ready.succeed()
    late: list[object] = []
    ready.add_callback(late.append)
    assert late == ["go"]
