"""Sending :class:`~gpuscale.cloud.api.ApiCall` values through pydo, and what its errors mean.

This is the I/O edge of :mod:`gpuscale.cloud`. :func:`make_client` builds pydo's client
with an injectable azure-core transport: production uses azure-core's default
(``requests``); the tests pass a transport that answers like the real API, so every
request goes through pydo's real pipeline (bearer-token policy, headers, retry policy,
JSON decoding) and the tests see it exactly as it would leave the machine. Retries
sleep through ``transport.sleep``, so a fake transport makes them instant.

The token is read once (:func:`read_token`) from ``DIGITALOCEAN_ACCESS_TOKEN`` (doctl's
variable) or a file, handed to pydo, and never formatted into a message or a log
record: error messages carry the operation, path and DigitalOcean's own message only.

Error mapping (the fix is part of each message)::

    401            UnavailableError  the token is wrong, expired or revoked
    403            UnavailableError  the token lacks a scope
    404            InputError        the cluster (or id) does not exist
    422            InputError        DigitalOcean rejected a value; its message names it
    429            RetryableError    rate limited; retry_after from Retry-After
    5xx            RetryableError    DigitalOcean failed; retry later
    no connection  RetryableError    network or proxy
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pydo
from azure.core.exceptions import HttpResponseError, ServiceRequestError

from gpuscale._http_errors import answer_message, error_for_status, retry_after
from gpuscale._redact import register
from gpuscale.cloud.api import ENDPOINT, ApiCall
from gpuscale.errors import GpuscaleError, InputError, RetryableError

__all__ = [
    "TOKEN_ENV",
    "TOKEN_SCOPES",
    "ApiAnswer",
    "DigitalOcean",
    "api_error",
    "make_client",
    "read_token",
]

TOKEN_ENV = "DIGITALOCEAN_ACCESS_TOKEN"
TOKEN_SCOPES = (
    "kubernetes:create",
    "kubernetes:read",
    "kubernetes:update",
    "kubernetes:delete",
    "kubernetes:access_cluster",
    "sizes:read",
)
_TOKEN_FIX = (
    f"create a token at https://cloud.digitalocean.com/account/api/tokens (scopes: "
    f"{', '.join(TOKEN_SCOPES)}) and put it in {TOKEN_ENV} or a file passed with --token-file"
)
_log = logging.getLogger(__name__)


def read_token(token_file: Path | None, environ: Mapping[str, str] | None = None) -> str:
    """The API token from ``token_file`` (first line) or ``$DIGITALOCEAN_ACCESS_TOKEN``.

    Raises :class:`InputError` when neither gives a token; the message never contains
    the file's content. The token is registered with :mod:`gpuscale._redact`, so an
    answer that echoes it is masked wherever it is shown.
    """
    env = os.environ if environ is None else environ
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"cannot read the token file ({exc.strerror})",
                where=str(token_file),
                fix="pass a readable file holding only the token",
            ) from None
        lines = text.strip().splitlines()
        token = lines[0].strip() if lines else ""
        if not token:
            raise InputError(
                "the token file is empty", where=str(token_file), fix="write the token into it"
            )
        register(token)
        return token
    token = env.get(TOKEN_ENV, "").strip()
    if not token:
        raise InputError(
            f"no DigitalOcean token: {TOKEN_ENV} is not set and no --token-file was given",
            where=TOKEN_ENV,
            fix=_TOKEN_FIX,
        )
    register(token)
    return token


def make_client(
    token: str,
    *,
    transport: Any = None,
    endpoint: str = ENDPOINT,
    retry_total: int = 3,
    timeout: int = 120,
) -> Any:
    """pydo's client for ``token``; ``transport`` is an azure-core ``HttpTransport``.

    ``retry_total`` caps azure-core's retries: GET/PUT/DELETE on 408, 429 and 5xx, and
    any answer with ``Retry-After``, sleeping as it asks. (azure-core would also retry a
    POST on 500/503/504 or with ``Retry-After``; :meth:`DigitalOcean.send` turns that
    off, because a retried ``POST /v2/kubernetes/clusters`` could make a second
    cluster.) ``timeout`` is azure-core's total time budget across retries, in seconds.
    """
    kwargs: dict[str, Any] = {"endpoint": endpoint, "retry_total": retry_total}
    if transport is not None:
        kwargs["transport"] = transport
    return pydo.Client(token=token, timeout=timeout, **kwargs)


class ApiAnswer:
    """A successful answer: the HTTP status, the decoded JSON (or None) and the headers."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: Any, headers: Mapping[str, str]) -> None:
        self.status = status
        self.body = body
        self.headers = headers


class DigitalOcean:
    """Sends :class:`ApiCall` values through a pydo client and maps its errors.

    ``clock`` (seconds since the epoch) is only used to turn a ``ratelimit-reset``
    header into a wait when a 429 has no ``Retry-After``.
    """

    def __init__(self, client: Any, *, clock: Callable[[], float] | None = None) -> None:
        self._client = client
        self._clock = clock

    def send(self, call: ApiCall) -> ApiAnswer:
        """Send ``call``; a non-2xx answer raises the mapped :class:`GpuscaleError`."""
        group, _, name = call.operation.partition(".")
        operation = getattr(getattr(self._client, group), name)

        def keep(pipeline_response: Any, deserialized: Any, _headers: Any) -> ApiAnswer:
            response = pipeline_response.http_response
            return ApiAnswer(response.status_code, deserialized, dict(response.headers))

        _log.debug("DigitalOcean API: %s %s", call.method, call.path)
        extra: dict[str, Any] = {"retry_total": 0} if call.method == "POST" else {}
        try:
            answer: ApiAnswer = operation(**call.arguments, cls=keep, **extra)
        except HttpResponseError as exc:
            response: Any = exc.response
            if response is None or response.status_code is None:
                raise RetryableError(
                    f"{call.method} {call.path}: no answer from DigitalOcean",
                    fix="check the network and retry",
                ) from None
            raise api_error(
                call,
                status=response.status_code,
                body=_safe_text(response),
                headers=dict(response.headers),
                now=self._clock() if self._clock else None,
            ) from None
        except ServiceRequestError as exc:
            raise RetryableError(
                f"cannot reach {ENDPOINT} ({type(exc).__name__})",
                fix="check the network, proxy and DNS, then retry",
            ) from None
        if answer.status >= 400:
            raise api_error(
                call,
                status=answer.status,
                body=json.dumps(answer.body) if answer.body is not None else "",
                headers=answer.headers,
                now=self._clock() if self._clock else None,
            )
        return answer

    def pages(self, build: Callable[[int], ApiCall], key: str) -> Iterator[dict[str, Any]]:
        """Every item under ``key`` across pages, following ``links.pages.next``."""
        page = 1
        while True:
            body = self.send(build(page)).body or {}
            yield from body.get(key) or []
            if not ((body.get("links") or {}).get("pages") or {}).get("next"):
                return
            page += 1


def _safe_text(response: Any) -> str:
    try:
        return str(response.text())
    except Exception:  # the body is only used for the message
        return ""


def api_error(
    call: ApiCall,
    *,
    status: int,
    body: str,
    headers: Mapping[str, str],
    now: float | None = None,
) -> GpuscaleError:
    """The one-line error for a failed ``call`` (see the module docstring's table); the
    error class is the one :func:`gpuscale._http_errors.error_for_status` gives every
    HTTP client of gpuscale."""
    message = answer_message(body, ("message", "id"))
    said = f" (DigitalOcean: {message})" if message else ""
    wait = retry_after(headers, now) if status == 429 else None
    text, fix = _API_ERRORS.get(status) or _other_error(status, call.method)
    if status == 429:
        when = f"after {wait:g}s" if wait is not None else "in a minute"
        fix = fix.format(when=when)
    return error_for_status(
        status,
        text + said,
        where=f"{call.method} {call.path}",
        fix=fix,
        retry_after=wait,
    )


_API_ERRORS = {
    401: ("DigitalOcean rejected the token as invalid, expired or revoked", _TOKEN_FIX),
    403: (
        "the token is not allowed to do this",
        f"use a token with the scopes {', '.join(TOKEN_SCOPES)} (or full access)",
    ),
    404: (
        "DigitalOcean has no such resource",
        "check cluster.name in the profile; gpuscale cluster status lists what exists",
    ),
    422: (
        "DigitalOcean rejected a value in the request",
        "correct the value the message names in the profile; --dry-run shows the body",
    ),
    429: (
        "rate limited by DigitalOcean (429)",
        "run the command again {when}; the API allows 250 requests/minute per token",
    ),
}


def _other_error(status: int, method: str) -> tuple[str, str]:
    if status < 500:
        return f"DigitalOcean answered {status}", "check the request with --dry-run"
    if method == "POST":
        return f"DigitalOcean failed with {status}", (
            "run the command again in a few minutes; it finds a cluster this request may "
            "have made instead of creating a second one"
        )
    return f"DigitalOcean failed with {status}", (
        "retry in a few minutes; see https://status.digitalocean.com"
    )
