"""The report package's public API is what ``__all__`` lists (as in test_exported_members)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "gpuscale.report",
    "gpuscale.report.compare",
    "gpuscale.report.output",
    "gpuscale.report.page",
    "gpuscale.report.plots",
    "gpuscale.report.run",
    "gpuscale.report.series",
    "gpuscale.report.tables",
    "gpuscale.cli.report_cmd",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_resolves_without_duplicates(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    for member in exported:
        assert hasattr(module, member), f"{name}.{member}"
