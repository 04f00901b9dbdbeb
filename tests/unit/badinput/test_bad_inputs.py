"""Every bad input in ``cases_*.py`` gets one error line, its exit code, and no trace.

See :mod:`tests.unit.badinput._harness` for the contract. The suite must hold at least
300 cases across the commands (issue 11).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from tests.unit.badinput import _harness

MIN_CASES = 300


def _all_cases() -> list[_harness.Bad]:
    package = Path(__file__).parent
    cases: list[_harness.Bad] = []
    for info in sorted(pkgutil.iter_modules([str(package)]), key=lambda i: i.name):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.unit.badinput.{info.name}")
            cases.extend(module.CASES)
    return cases


CASES = _all_cases()


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(
    case: _harness.Bad,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _harness.run_bad(case, tmp_path, monkeypatch, capsys)


def test_the_suite_holds_enough_cases_across_the_commands() -> None:
    assert len(CASES) >= MIN_CASES, len(CASES)
    commands = {case.argv[0] for case in CASES}
    expected = {"profile", "render", "lint", "simulate", "deploy", "report", "demo", "app"}
    assert expected <= commands, sorted(expected - commands)
