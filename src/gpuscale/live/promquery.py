"""One instant query against a real Prometheus' HTTP API (``GET /api/v1/query``).

The minimal reader ``gpuscale watch`` needs for the trigger query's value; it reports
what KEDA's Prometheus scaler cares about: how many series came back and the value of
the single one (KEDA fails on more than one and, with ``ignoreNullValues`` on, reads an
empty result as 0). Response shape: Prometheus ``docs/querying/api.md``.
"""

from __future__ import annotations

import math

import httpx

from gpuscale.live.watch import QueryAnswer

__all__ = ["query_prometheus"]


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
