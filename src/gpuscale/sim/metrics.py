"""The seam between the simulated world and Prometheus: where scraped samples go and where
queries are answered — and the one implementation of it, over ``gpuscale.promql``.

The simulator writes every scraped sample into a :class:`MetricsBackend` and asks it the
queries KEDA and the HPA run. :class:`PromQLBackend` is that backend: a
``gpuscale.promql.SeriesStore`` for the samples (Prometheus' head block) and an
``Engine`` with Prometheus' semantics (lookback, staleness, version 2 or 3) for the
queries. ``instant`` returns the engine's result object; ``query`` the body of
``/api/v1/query``, as a real server answers it.

Labels are a mapping that includes ``__name__``. Times are integer milliseconds, as
Prometheus stores them. ``mark_stale`` writes Prometheus' staleness marker for a series
that disappeared from its target or whose target went away.

**Repeated queries.** KEDA's poll and the HPA's metric read often ask the same query at
the same instant (both loops start at 0 and the HPA's period divides KEDA's), and the
HPA asks again every sync while the samples behind the answer have not moved. The
backend answers a repeated ``(query, t_ms)`` from memory when nothing was appended
since — an exact shortcut: evaluation is a pure function of the store and the time.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from gpuscale.promql import Engine, PromQLError, Result, SeriesStore

__all__ = ["Labels", "MetricsBackend", "PromQLBackend", "query_scalar"]

Labels = Mapping[str, str]


@runtime_checkable
class MetricsBackend(Protocol):
    """A series store with a PromQL instant-query front (Prometheus ``/api/v1/query`` shape)."""

    def series_ref(self, labels: Labels) -> Hashable:
        """A handle for ``labels`` that makes later appends cheap."""

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        """Add one sample to the series behind ``ref`` (from :meth:`series_ref`)."""

    def append_scrape(self, refs: Sequence[Any], t_ms: int, values: Sequence[float]) -> None:
        """Add one sample to each series in ``refs`` at the same time (one scrape)."""

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        """Write a staleness marker for ``labels`` at ``t_ms``."""

    def mark_stale_ref(self, ref: Any, t_ms: int) -> None:
        """Write a staleness marker for the series behind ``ref``."""

    def instant(self, query: str, t_ms: int) -> Result:
        """Evaluate an instant query at ``t_ms``; raises ``PromQLError`` where Prometheus
        answers with an error."""

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        """Evaluate an instant query at ``t_ms``.

        Returns the body of Prometheus' ``/api/v1/query``: ``{"status": "success", "data":
        {"resultType": "vector", "result": [{"metric": {...}, "value": [t_s, "v"]}]}}``,
        or ``{"status": "error", "errorType": ..., "error": ...}``.
        """


class PromQLBackend:
    """:class:`MetricsBackend` over ``gpuscale.promql`` (see the module docstring).

    ``lookback_ms`` is ``--query.lookback-delta``; ``version`` the Prometheus major
    version whose PromQL semantics apply; ``retention_ms`` bounds the samples kept (the
    longest range any query reads plus the lookback is enough), None keeps all.
    """

    def __init__(
        self,
        *,
        lookback_ms: int = 300_000,
        version: Literal["2", "3"] = "3",
        retention_ms: int | None = None,
    ) -> None:
        self.store = SeriesStore(retention_ms=retention_ms)
        self.engine = Engine(self.store, lookback_ms=lookback_ms, version=version)
        self.queries = 0
        """Queries asked (repeats answered from memory included)."""
        self.evaluations = 0
        """Queries the engine evaluated."""
        self._writes = 0
        self._memo: dict[str, tuple[int, int, Result | PromQLError]] = {}
        store = self.store
        self.series_ref = store.series_ref

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        """Add one sample to the series ``ref``."""
        self._writes += 1
        self.store.append_ref(ref, t_ms, value)

    def append_scrape(self, refs: Sequence[Any], t_ms: int, values: Sequence[float]) -> None:
        """Add one scrape's samples, one per series, at ``t_ms``."""
        self._writes += 1
        self.store.append_scrape(refs, t_ms, values)

    def append(self, labels: Labels, t_ms: int, value: float) -> None:
        """Add one sample to the series ``labels`` (created on first use)."""
        self._writes += 1
        self.store.append(labels, t_ms, value)

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        """Write a staleness marker (unknown series are ignored, as Prometheus does)."""
        self._writes += 1
        self.store.mark_stale(labels, t_ms)

    def mark_stale_ref(self, ref: Any, t_ms: int) -> None:
        """Write a staleness marker on the series ``ref``."""
        self._writes += 1
        self.store.mark_stale_ref(ref, t_ms)

    def check(self, query: str) -> None:
        """Raise ``PromQLError`` unless ``query`` parses and lies in the engine's subset."""
        self.engine.check(query)

    def instant(self, query: str, t_ms: int) -> Result:
        """The engine's answer at ``t_ms``; ``PromQLError`` where Prometheus fails the query."""
        self.queries += 1
        hit = self._memo.get(query)
        if hit is not None and hit[0] == t_ms and hit[1] == self._writes:
            answer = hit[2]
        else:
            self.evaluations += 1
            try:
                answer = self.engine.instant(query, t_ms)
            except PromQLError as error:
                answer = error
            if len(self._memo) > 1024:
                self._memo.clear()
            self._memo[query] = (t_ms, self._writes, answer)
        if isinstance(answer, PromQLError):
            raise answer
        return answer

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        """The ``/api/v1/query`` body: the result, or the error Prometheus would send."""
        try:
            return self.instant(query, t_ms).to_api_json()
        except PromQLError as error:
            kind = "bad_data" if error.message.startswith("cannot parse") else "execution"
            return {"status": "error", "errorType": kind, "error": error.message}


def query_scalar(body: Mapping[str, Any]) -> float | None:
    """The single value of an instant-query answer, or None when it is empty or an error.

    A convenience for tests and stand-ins; KEDA's own handling of the answer (one element
    required, empty/NaN/Inf as 0 with ``ignoreNullValues``) is in
    ``gpuscale.sim.keda.trigger_value``.
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
