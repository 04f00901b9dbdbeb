"""HTTP answers as one-line errors: what the Kubernetes API, DigitalOcean's API and
Prometheus' HTTP API have in common.

Each client keeps its own words (``the API server rejected the credentials``,
``DigitalOcean rejected the token``) and its own fixes; what they share lives here, so
a status is classified the same way everywhere:

```
401, 403        UnavailableError   credentials or permissions: give up here, fix them
404, 422        InputError         the name or a value the user gave is wrong
429, 5xx        RetryableError     the same request may succeed later (retry_after)
anything else   GpuscaleError
```

plus the message inside an error body (``{"message": ...}`` for Kubernetes' ``Status``
and DigitalOcean, ``{"error": ...}`` for Prometheus, or the text itself), and the wait a
429 asks for (``Retry-After`` in seconds, else a ``ratelimit-reset`` epoch time).
Used by :mod:`gpuscale.live.kube`, :mod:`gpuscale.live.apply`,
:mod:`gpuscale.cloud.client` and :mod:`gpuscale.prometheus.client`; it imports nothing
but the error hierarchy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gpuscale._redact import redact
from gpuscale.errors import GpuscaleError, InputError, RetryableError, UnavailableError

__all__ = [
    "answer_doc",
    "answer_message",
    "error_for_status",
    "is_retryable",
    "retry_after",
]

_LONGEST = 200


def is_retryable(status: int) -> bool:
    """Whether the same request may succeed later: 429 (rate limited) and every 5xx."""
    return status == 429 or status >= 500


def error_for_status(
    status: int,
    message: str,
    *,
    where: str | None,
    fix: str | None,
    retry_after: float | None = None,
) -> GpuscaleError:
    """``message`` as the error class ``status`` calls for (see the module docstring)."""
    if status in (401, 403):
        return UnavailableError(message, where=where, fix=fix)
    if status in (404, 422):
        return InputError(message, where=where, fix=fix)
    if is_retryable(status):
        return RetryableError(message, where=where, fix=fix, retry_after=retry_after)
    return GpuscaleError(message, where=where, fix=fix)


def answer_doc(body: Any) -> dict[str, Any]:
    """An error body as a dict: a JSON object as it is, text that is not JSON as
    ``{"message": <the text>}``, anything else empty."""
    if isinstance(body, Mapping):
        return dict(body)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        return {}
    try:
        parsed = json.loads(body)
    except ValueError:
        return {"message": body}
    return dict(parsed) if isinstance(parsed, Mapping) else {}


def answer_message(body: Any, keys: Sequence[str] = ("message", "reason")) -> str:
    """The first of ``keys`` the error body sets, on one line and at most 200 characters;
    the body's text when it is not JSON; empty when there is nothing to say. Secrets are
    masked before the text is shortened, so a cut cannot leave part of one."""
    doc = answer_doc(body)
    text = next((str(doc[k]) for k in (*keys, "message") if doc.get(k)), "")
    return redact(" ".join(text.split()))[:_LONGEST]


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a 429 asks to wait: ``Retry-After`` (seconds), else ``ratelimit-reset``
    (an epoch time, with ``now`` the clock's epoch seconds); None when neither says."""
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
    reset = lowered.get("ratelimit-reset")
    if reset is not None and now is not None:
        try:
            return max(0.0, float(reset) - now)
        except ValueError:
            return None
    return None
