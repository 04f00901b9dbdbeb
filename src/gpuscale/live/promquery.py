"""Reads from a real Prometheus' HTTP API (Prometheus ``docs/querying/api.md``).

- :func:`query_prometheus`: one instant query (``GET /api/v1/query``), the minimal reader
  ``gpuscale watch`` needs for the trigger query's value; it reports what KEDA's
  Prometheus scaler cares about: how many series came back and the value of the single
  one (KEDA fails on more than one and, with ``ignoreNullValues`` on, reads an empty
  result as 0).
- :func:`prometheus_get`: any ``GET`` kept raw (status and body), for ``gpuscale verify``,
  which hands query answers to KEDA's own parser and reads ``/api/v1/targets`` and
  ``/api/v1/status/buildinfo``.
"""

from __future__ import annotations

import math

import httpx

from gpuscale.live.verify import HttpAnswer
from gpuscale.live.watch import QueryAnswer

__all__ = ["prometheus_get", "query_prometheus"]


def prometheus_get(
    client: httpx.Client, base_url: str, path: str, params: dict[str, str] | None = None
) -> HttpAnswer:
    """``GET base_url + path`` as an :class:`HttpAnswer`; a failure to connect is the
    answer's ``error``, not raised."""
    try:
        response = client.get(f"{base_url.rstrip('/')}{path}", params=params)
    except httpx.HTTPError as exc:
        return HttpAnswer(None, "", f"cannot reach Prometheus ({type(exc).__name__}: {exc})")
    return HttpAnswer(response.status_code, response.text)


def query_prometheus(
    client: httpx.Client, base_url: str, query: str, *, source: str = ""
) -> QueryAnswer:
    """The instant value of ``query``; errors come back in the answer, not raised."""
    label = source or base_url
    try:
        response = client.get(f"{base_url.rstrip('/')}/api/v1/query", params={"query": query})
    except httpx.HTTPError as exc:
        return QueryAnswer(None, 0, f"cannot reach Prometheus ({type(exc).__name__})", label)
    try:
        doc = response.json()
    except ValueError:
        return QueryAnswer(None, 0, f"HTTP {response.status_code}, not JSON", label)
    if doc.get("status") != "success":
        return QueryAnswer(None, 0, str(doc.get("error") or f"HTTP {response.status_code}"), label)
    data = doc.get("data") or {}
    kind, result = data.get("resultType"), data.get("result") or []
    if kind == "scalar":
        return QueryAnswer(_number(result[1]), 1, None, label)
    if kind != "vector":
        return QueryAnswer(None, 0, f"result type {kind}, expected a vector", label)
    if len(result) != 1:
        return QueryAnswer(None, len(result), None, label)
    return QueryAnswer(_number(result[0]["value"][1]), 1, None, label)


def _number(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None
