"""The secret-bearing bad inputs of ``cases_secrets.py`` never echo the secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.badinput import _harness
from tests.unit.badinput.cases_secrets import CASES, SECRET

WITH_SECRET = [
    case
    for case in CASES
    if any(SECRET in a for a in case.argv)
    or any(SECRET in (c if isinstance(c, str) else c.decode("utf-8", "replace"))
           for c in case.files.values())
]  # fmt: skip


def test_enough_cases_carry_the_secret() -> None:
    assert len(WITH_SECRET) >= 12


@pytest.mark.parametrize("case", WITH_SECRET, ids=[case.id for case in WITH_SECRET])
def test_the_error_line_does_not_show_the_secret(
    case: _harness.Bad,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("GPUSCALE_SETTER_TOKEN", raising=False)
    line = _harness.run_bad(case, tmp_path, monkeypatch, capsys)
    for start in range(len(SECRET) - 7):
        assert SECRET[start : start + 8] not in line, line
