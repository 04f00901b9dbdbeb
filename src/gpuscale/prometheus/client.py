"""A small client for a real Prometheus' HTTP API, on httpx.

It covers what the live commands need: instant and range queries
(``/api/v1/query``, ``/api/v1/query_range``), scrape targets (``/api/v1/targets``) and
readiness (``/-/ready``). Answers come back as the same ``gpuscale.promql`` result types the
embedded engine returns, so callers compare simulated and real answers directly.

The transport is injectable (``httpx.MockTransport`` in tests). Failures become one-line
gpuscale errors that name the server and the endpoint, never the request headers (which may
carry a token): a query the server rejects (HTTP 400/422) is a ``PromQLError``; a timeout,
a 429 or a 5xx is ``RetryableError``; a refused connection or an answer that is not the
Prometheus API's is ``UnavailableError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx

from gpuscale.errors import RetryableError, UnavailableError
from gpuscale.promql import MatrixResult, PromQLError, Result, result_from_api_json
from gpuscale.promql.labels import Labels, labels_from_mapping

__all__ = ["PrometheusClient", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    """One scrape target as ``/api/v1/targets`` reports it."""

    scrape_pool: str
    scrape_url: str
    labels: Labels
    health: str
    last_error: str
    last_scrape: datetime | None
    last_scrape_duration_s: float
    scrape_interval: str


def _seconds(t_ms: int) -> str:
    return f"{t_ms / 1000:.3f}"


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text or text.startswith("0001-01-01"):
        return None
    # Go writes RFC 3339 with up to nanoseconds; Python's parser takes microseconds.
    head, dot, rest = text.partition(".")
    if dot:
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits) :]
        text = f"{head}.{digits[:6]}{zone}"
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


class PrometheusClient:
    """Queries one Prometheus server at ``base_url`` (e.g. ``http://127.0.0.1:9090``).

    ``headers`` are sent with every request (for example an ``Authorization`` header for a
    proxied Prometheus) and never appear in errors or logs.
    """

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=timeout_s,
            headers=dict(headers or {}),
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ endpoints

    def ready(self) -> bool:
        """Whether ``/-/ready`` answers 200 (False while starting or unreachable)."""
        try:
            response = self._http.get("/-/ready")
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def query(self, query: str, *, t_ms: int | None = None) -> Result:
        """An instant query at ``t_ms`` (server time when None), as a promql ``Result``."""
        params = {"query": query}
        if t_ms is not None:
            params["time"] = _seconds(t_ms)
        return self._result("/api/v1/query", self._api("/api/v1/query", params, query), t_ms)

    def query_range(self, query: str, start_ms: int, end_ms: int, step_ms: int) -> MatrixResult:
        """A range query; Prometheus returns series sorted by labels."""
        params = {
            "query": query,
            "start": _seconds(start_ms),
            "end": _seconds(end_ms),
            "step": f"{step_ms / 1000:g}",
        }
        path = "/api/v1/query_range"
        result = self._result(path, self._api(path, params, query), None)
        if not isinstance(result, MatrixResult):
            raise UnavailableError(
                f"{self.base_url}/api/v1/query_range answered a {result.result_type}, not a matrix"
            )
        return result

    def query_json(self, query: str, *, t_ms: int | None = None) -> dict[str, Any]:
        """The raw JSON body of an instant query (what KEDA's scaler parses)."""
        params = {"query": query}
        if t_ms is not None:
            params["time"] = _seconds(t_ms)
        return self._api("/api/v1/query", params, query)

    def query_range_json(
        self, query: str, start_ms: int, end_ms: int, step_ms: int
    ) -> dict[str, Any]:
        """The raw JSON body of a range query."""
        params = {
            "query": query,
            "start": _seconds(start_ms),
            "end": _seconds(end_ms),
            "step": f"{step_ms / 1000:g}",
        }
        return self._api("/api/v1/query_range", params, query)

    def get(self, path: str, params: Mapping[str, str] | None = None) -> tuple[int, str]:
        """``GET path``: the HTTP status and body as they came, whatever the status, for a
        caller that reads the answer as another program would (``gpuscale verify`` hands
        query answers to KEDA's parser). No answer at all raises as the other endpoints do."""
        response = self._send(path, params or {})
        return response.status_code, response.text

    def targets(self, *, state: str = "active") -> list[Target]:
        """Scrape targets (``state``: ``active``, ``dropped`` or ``any``; dropped ones have
        no health and are reported with health ``"dropped"``)."""
        body = self._api("/api/v1/targets", {"state": state}, None)
        data = body.get("data")
        if not isinstance(data, Mapping):
            raise UnavailableError(f"{self.base_url}/api/v1/targets answered without 'data'")
        out = []
        for item in data.get("activeTargets") or []:
            out.append(
                Target(
                    scrape_pool=str(item.get("scrapePool", "")),
                    scrape_url=str(item.get("scrapeUrl", "")),
                    labels=labels_from_mapping(item.get("labels") or {}),
                    health=str(item.get("health", "unknown")),
                    last_error=str(item.get("lastError", "")),
                    last_scrape=_parse_time(item.get("lastScrape")),
                    last_scrape_duration_s=float(item.get("lastScrapeDuration") or 0.0),
                    scrape_interval=str(item.get("scrapeInterval", "")),
                )
            )
        for item in data.get("droppedTargets") or []:
            labels = item.get("discoveredLabels") or {}
            out.append(
                Target(
                    scrape_pool=str(labels.get("job", "")),
                    scrape_url=str(labels.get("__address__", "")),
                    labels=labels_from_mapping(labels),
                    health="dropped",
                    last_error="",
                    last_scrape=None,
                    last_scrape_duration_s=math.nan,
                    scrape_interval="",
                )
            )
        return out

    # ------------------------------------------------------------------ plumbing

    def _send(self, path: str, params: Mapping[str, str]) -> httpx.Response:
        where = f"{self.base_url}{path}"
        try:
            return self._http.get(path, params=params)
        except httpx.TimeoutException:
            raise RetryableError(f"{where}: timed out", fix="retry, or raise the timeout") from None
        except httpx.ConnectError as exc:
            raise UnavailableError(
                f"{where}: cannot connect ({_reason(exc)})",
                fix="check that Prometheus is running and the URL is right",
            ) from None
        except httpx.HTTPError as exc:
            raise UnavailableError(f"{where}: request failed ({_reason(exc)})") from None

    def _api(self, path: str, params: Mapping[str, str], query: str | None) -> dict[str, Any]:
        where = f"{self.base_url}{path}"
        response = self._send(path, params)
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        message = body.get("error") if isinstance(body, dict) else None
        if status in (400, 422) and message:
            raise PromQLError(
                f"Prometheus rejected the query: {message}",
                where=f"query {query!r}" if query is not None else where,
            )
        if status == 429 or status >= 500:
            retry_after = _retry_after(response.headers.get("Retry-After"))
            raise RetryableError(
                f"{where}: HTTP {status}" + (f": {message}" if message else ""),
                retry_after=retry_after,
            )
        if status != 200 or not isinstance(body, dict) or body.get("status") != "success":
            detail = message or response.text[:200]
            raise UnavailableError(
                f"{where}: unexpected answer (HTTP {status}): {' '.join(str(detail).split())}",
                fix="check that the URL points at a Prometheus server's HTTP API",
            )
        return body

    def _result(self, path: str, body: dict[str, Any], t_ms: int | None) -> Result:
        try:
            return result_from_api_json(body, t_ms=t_ms)
        except (ValueError, KeyError, TypeError) as exc:
            raise UnavailableError(
                f"{self.base_url}{path}: malformed query answer ({exc})",
                fix="check that the URL points at a Prometheus server's HTTP API",
            ) from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
