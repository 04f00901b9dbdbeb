"""``gpuscale._http_errors``: one status → error class table for the Kubernetes API,
DigitalOcean's API and Prometheus, the message inside an error body, and a 429's wait.
Bodies are shaped as each API answers: Kubernetes' ``Status`` (``message``, ``reason``),
DigitalOcean's ``{"id", "message"}``, Prometheus' ``{"error"}``."""

from __future__ import annotations

import pytest

from gpuscale._http_errors import answer_message, error_for_status, retry_after
from gpuscale.errors import GpuscaleError, InputError, RetryableError, UnavailableError


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, UnavailableError),
        (403, UnavailableError),
        (404, InputError),
        (422, InputError),
        (429, RetryableError),
        (500, RetryableError),
        (503, RetryableError),
        (409, GpuscaleError),
        (418, GpuscaleError),
    ],
)
def test_each_status_has_one_class(status: int, kind: type[GpuscaleError]) -> None:
    error = error_for_status(status, "said", where="GET /x", fix="do y", retry_after=3.0)
    assert type(error) is kind
    assert error.one_line() == "GET /x: said (fix: do y)"


@pytest.mark.parametrize(
    ("body", "keys", "expected"),
    [
        ('{"kind":"Status","message":"pods \\"x\\" is forbidden","reason":"Forbidden"}',
         ("message", "reason"), 'pods "x" is forbidden'),
        ({"kind": "Status", "reason": "NotFound"}, ("message", "reason"), "NotFound"),
        (b'{"id":"unauthorized","message":"Unable to authenticate you"}', ("message", "id"),
         "Unable to authenticate you"),
        ('{"id":"not_found"}', ("message", "id"), "not_found"),
        ('{"status":"error","error":"parse error"}', ("error",), "parse error"),
        ("<html>\n  bad   gateway\n</html>", ("message",), "<html> bad gateway </html>"),
        ("[1, 2]", ("message",), ""),
        (None, ("message",), ""),
        ("x" * 500, ("message",), "x" * 200),
    ],
)  # fmt: skip
def test_the_message_inside_an_error_body(
    body: object, keys: tuple[str, ...], expected: str
) -> None:
    assert answer_message(body, keys) == expected


@pytest.mark.parametrize(
    ("headers", "now", "expected"),
    [
        ({"Retry-After": "30"}, None, 30.0),
        ({"retry-after": "-5"}, None, 0.0),
        ({"RateLimit-Reset": "1700000060"}, 1700000000.0, 60.0),
        ({"ratelimit-reset": "1700000060"}, None, None),
        ({"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}, None, None),
        ({}, 1.0, None),
    ],
)
def test_the_wait_a_429_asks_for(
    headers: dict[str, str], now: float | None, expected: float | None
) -> None:
    assert retry_after(headers, now) == expected
