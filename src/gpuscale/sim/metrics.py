"""The seam between the simulated world and a PromQL engine: where scraped samples go and
where queries are answered.

The simulator writes every scraped sample into a :class:`MetricsBackend` and asks it the
queries KEDA and the HPA run. The real backend is ``gpuscale.promql``: an adapter over
``SeriesStore`` and ``Engine(store, lookback_ms=300000, version="3")`` whose ``query``
returns ``engine.instant(q, t_ms).to_api_json()``. Until it lands, tests and benchmarks
use :class:`gpuscale.sim.testing.FakeMetricsBackend`, a test double that answers a few
fixed query shapes.

Labels are a mapping that includes ``__name__``. Times are integer milliseconds, as
Prometheus stores them. ``mark_stale`` writes Prometheus' staleness marker (a special
NaN) for a series that disappeared from its target or whose target went away.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["Labels", "MetricsBackend", "query_scalar"]

Labels = Mapping[str, str]


@runtime_checkable
class MetricsBackend(Protocol):
    """A series store with a PromQL instant-query front (Prometheus ``/api/v1/query`` shape)."""

    def append(self, labels: Labels, t_ms: int, value: float) -> None:
        """Add one sample to the series ``labels`` (created on first use)."""

    def series_ref(self, labels: Labels) -> Hashable:
        """A handle for ``labels`` that makes later appends cheap."""

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        """Add one sample to the series behind ``ref`` (from :meth:`series_ref`)."""

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        """Write a staleness marker for ``labels`` at ``t_ms``."""

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        """Evaluate an instant query at ``t_ms``.

        Returns the body of Prometheus' ``/api/v1/query``: ``{"status": "success", "data":
        {"resultType": "vector", "result": [{"metric": {...}, "value": [t_s, "v"]}]}}``,
        or ``{"status": "error", "errorType": ..., "error": ...}``.
        """


def query_scalar(body: Mapping[str, Any]) -> float | None:
    """The single value of an instant-query answer, or None when it is empty or an error.

    A convenience for stand-in policies; KEDA's own handling of the answer (one element
    required, empty/NaN/Inf as 0 with ``ignoreNullValues``) belongs to
    ``gpuscale.controllers.keda.parse_prometheus_response``.
    """
    if body.get("status") != "success":
        return None
    data = body.get("data", {})
    result = data.get("result")
    if data.get("resultType") == "scalar" and isinstance(result, list):
        return float(result[1])
    if not result:
        return None
    return float(result[0]["value"][1])
