"""The one error the PromQL engine raises at its users.

A query that does not parse, uses a construct outside gpuscale's supported subset, or fails
while evaluating (many-to-many matching, duplicate label sets, an invalid label name) is a
mistake in the user's query, so ``PromQLError`` is an ``InputError``: the CLI prints it on
one line, naming the query and the construct, and exits with the input-error code.
"""

from __future__ import annotations

from gpuscale.errors import InputError

__all__ = ["PromQLError"]


class PromQLError(InputError):
    """A PromQL query cannot be parsed, is outside the supported subset, or fails to evaluate.

    ``construct`` names the offending part (a function, an operator, a modifier) when there
    is one, so callers such as the lint rules can report it without parsing the message.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        fix: str | None = None,
        construct: str | None = None,
    ) -> None:
        self.construct = construct
        super().__init__(message, where=where, fix=fix)
