"""``gpuscale.app`` and its command agree on their shared names (every module's ``__all__``
is checked by tests/unit/test_exported_members.py)."""

from __future__ import annotations


def test_the_command_and_the_server_agree_on_the_token_variable() -> None:
    from gpuscale.app import TOKEN_ENV
    from gpuscale.cli._options import SETTER_TOKEN_ENV

    assert SETTER_TOKEN_ENV == TOKEN_ENV == "GPUSCALE_SETTER_TOKEN"
