"""The collector during a command's start-up (:mod:`gpuscale.cli._gc`): off from
``paused()`` to ``resume()``, then on with start-up's objects frozen, and as before (on,
nothing frozen) after the block, so that a process running many commands frees their
garbage."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscale.cli import _gc
from gpuscale.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_paused_then_resumed_then_as_before() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with _gc.paused():
        assert not gc.isenabled()
        _gc.resume()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen
        _gc.resume()  # a second call changes nothing
        assert gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_what_a_caller_froze_stays_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    # Frozen objects can still be freed (the count only falls); none is added by resume,
    # and the block unfreezes none (the count would be 0).
    with _gc.paused():
        _gc.resume()
        assert gc.isenabled()
        assert 0 < gc.get_freeze_count() <= frozen
    assert 0 < gc.get_freeze_count() <= frozen


def test_an_error_before_resume_turns_the_collector_back_on() -> None:
    with pytest.raises(RuntimeError), _gc.paused():
        raise RuntimeError
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    with _gc.paused():
        _gc.resume()
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_simulate_leaves_the_collector_as_it_found_it(capsys: pytest.CaptureFixture[str]) -> None:
    examples = ROOT / "examples"
    scenario = str(examples / "tutorial-scenario.yaml")
    assert main(["simulate", str(examples / "tutorial"), "--scenario", scenario, "-o", "json"]) == 0
    assert '"summary"' in capsys.readouterr().out
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
