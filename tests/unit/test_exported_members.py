"""The public API is exactly what ``__all__`` lists, and every name exists.

The order of ``__all__`` is checked by ruff (RUF022).
"""

from __future__ import annotations

import importlib

import pytest

PUBLIC_MODULES = ["gpuscale", "gpuscale.errors", "gpuscale.units", "gpuscale.timeline"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} is in __all__ but missing"


def test_package_exports_match_errors() -> None:
    import gpuscale
    import gpuscale.errors

    assert set(gpuscale.errors.__all__) <= set(gpuscale.__all__)
