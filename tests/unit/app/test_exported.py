"""``gpuscale.app``'s public API is what its ``__all__`` lists (sorted, every name real)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "gpuscale.app",
    "gpuscale.app._config",
    "gpuscale.app._gocompat",
    "gpuscale.app._handler",
    "gpuscale.app._launch",
    "gpuscale.app._main",
    "gpuscale.app._server",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda member: (not member.isupper(), member))
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} is in __all__ but missing"


def test_the_command_and_the_server_agree_on_the_token_variable() -> None:
    from gpuscale.app import TOKEN_ENV
    from gpuscale.cli import app_cmd

    assert app_cmd.TOKEN_ENV == TOKEN_ENV == "GPUSCALE_SETTER_TOKEN"
