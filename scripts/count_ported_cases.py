"""Count the test cases ported from upstream's own tests into the HPA and KEDA models' suites.

A ported case is a collected test carrying ``@pytest.mark.upstream(source, test=...)``
(see ``tests/unit/controllers/_upstream.py``); one mark is one case. The upstream test is
the mark's ``test`` or, without it, the case id up to its first ``/`` (``TestFunc/<case>``).
The script collects ``tests/unit/controllers`` with pytest (nothing runs) and prints, per
model, the cases per upstream file and test function, and the totals. Run from the project
root:

    .venv/bin/python scripts/count_ported_cases.py            # the table
    .venv/bin/python scripts/count_ported_cases.py --json     # the same, as JSON

It exits 1 when a mark has no usable source or test name.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "unit" / "controllers"
SOURCE = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{7,40}) (?P<path>\S+_test\.go)")
MODELS = {"test_hpa_": "HPA", "test_keda_": "KEDA"}


class _Collector:
    """A pytest plugin that keeps the collected items."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


def collect() -> list[pytest.Item]:
    """The tests under ``tests/unit/controllers``, collected but not run."""
    collector = _Collector()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = pytest.main(
            ["--collect-only", "-q", "-p", "no:cacheprovider", str(TESTS)], plugins=[collector]
        )
    if code != 0:
        sys.stderr.write(output.getvalue())
        raise SystemExit(f"pytest could not collect {TESTS.relative_to(ROOT)} (exit {code})")
    return collector.items


def ported_cases(items: list[pytest.Item]) -> tuple[list[dict[str, str]], list[str]]:
    """One record per ``upstream`` mark (model, repo, commit, file, test, case) and the
    problems found (marks without a usable source or test name)."""
    cases: list[dict[str, str]] = []
    problems: list[str] = []
    for item in items:
        marks = list(item.iter_markers("upstream"))
        if not marks:
            continue
        model = next((m for prefix, m in MODELS.items() if item.path.name.startswith(prefix)), "")
        callspec = getattr(item, "callspec", None)
        case_id = callspec.id if callspec is not None else ""
        for mark in marks:
            source = str(mark.args[0]) if mark.args else ""
            found = SOURCE.fullmatch(source)
            test = str(mark.kwargs.get("test") or case_id.split("/")[0])
            if not model or not found or not re.fullmatch(r"Test\w+|It|Describe\(.*\)", test):
                problems.append(f"{item.nodeid}: source {source!r}, test {test!r}")
                continue
            cases.append(
                {
                    "model": model,
                    "repo": found["repo"],
                    "commit": found["commit"],
                    "file": found["path"],
                    "test": test,
                    "case": str(mark.kwargs.get("case") or case_id or item.name),
                    "nodeid": item.nodeid,
                }
            )
    return cases, problems


def render(cases: list[dict[str, str]]) -> str:
    """The counts as a plain-text table: per model, per upstream file and test."""
    lines = [
        "Test cases ported from upstream tests (marked @pytest.mark.upstream in "
        "tests/unit/controllers)",
    ]
    totals: Counter[str] = Counter(c["model"] for c in cases)
    for model in MODELS.values():
        mine = [c for c in cases if c["model"] == model]
        per_test = Counter((c["repo"], c["commit"][:8], c["file"], c["test"]) for c in mine)
        lines += ["", f"{model} model", f"  {'cases':>5}  upstream test"]
        current = None
        for (repo, commit, path, test), n in sorted(per_test.items()):
            where = f"{repo}@{commit} {path}"
            if where != current:
                lines.append(f"  {where}")
                current = where
            lines.append(f"  {n:>5}    {'It(...) specs (Ginkgo)' if test == 'It' else test}")
        files = len({(c["repo"], c["file"]) for c in mine})
        lines.append(
            f"  {totals[model]:>5}  {model} total: {len(per_test)} upstream tests in {files} files"
        )
    lines += ["", f"{sum(totals.values()):>7}  total ported cases"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the cases as JSON")
    args = parser.parse_args(argv)
    cases, problems = ported_cases(collect())
    if args.json:
        summary: dict[str, Any] = {
            model: sum(1 for c in cases if c["model"] == model) for model in MODELS.values()
        }
        print(json.dumps({"totals": summary, "cases": cases}, indent=1))
    else:
        print(render(cases))
    for problem in problems:
        print(f"bad upstream mark: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
