"""The I/O half of ``gpuscale watch``: read a snapshot every interval, write the timeline.

:class:`Watcher` reads through :class:`~gpuscale.live.kube.Kube` and asks Prometheus for
the ScaledObject's trigger query: at ``--prometheus URL`` when given, else at the
trigger's own ``serverAddress`` when it is an in-cluster Service
(``http://<service>.<namespace>.svc[.cluster.local]:<port>``), reached through a
port-forward to one of the Service's ready pods, through the project's
:class:`~gpuscale.prometheus.PrometheusClient`. :func:`run_watch` is the loop, with
the clock and sleep injected; the pure work is in :mod:`gpuscale.live.watch`.

A read that fails for a passing reason (timeouts, 5xx, a missing permission on nodes
for a namespace-scoped user) is shown in the view and the tick goes on; a Deployment
that does not exist ends the watch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import IO, Any

import httpx

from gpuscale._redact import redact
from gpuscale.errors import GpuscaleError, InputError
from gpuscale.live.kube import Kube
from gpuscale.live.load import ForwardPool, deployment_selector
from gpuscale.live.watch import (
    QueryAnswer,
    Snapshot,
    WatchState,
    advance,
    build_snapshot,
    find_scaled_object,
    prometheus_trigger,
)
from gpuscale.prometheus import PrometheusClient
from gpuscale.promql import ScalarResult, VectorResult
from gpuscale.timeline import Header, Record, encode_header, encode_record

__all__ = [
    "TimelineWriter",
    "Watcher",
    "in_cluster_service",
    "open_prometheus",
    "query_answer",
    "run_watch",
]

_IN_CLUSTER = re.compile(
    r"^https?://(?P<service>[a-z0-9-]+)\.(?P<namespace>[a-z0-9-]+)\.svc(?:\.cluster\.local)?"
    r"(?::(?P<port>\d+))?/?$"
)


def in_cluster_service(address: str) -> tuple[str, str, str] | None:
    """``(namespace, service, port)`` of an in-cluster Service URL, else None."""
    match = _IN_CLUSTER.match(address.strip())
    if not match:
        return None
    port = match.group("port") or ("443" if address.startswith("https") else "80")
    return match.group("namespace"), match.group("service"), port


def open_prometheus(base_url: str, *, timeout_s: float = 10.0) -> PrometheusClient:
    """A :class:`PrometheusClient` for ``base_url`` that sends straight to it: a
    transport of its own, so no ``HTTP_PROXY`` of the environment reroutes a request
    meant for a loopback port-forward."""
    return PrometheusClient(base_url, timeout_s=timeout_s, transport=httpx.HTTPTransport())


def query_answer(client: PrometheusClient, query: str, *, source: str = "") -> QueryAnswer:
    """The instant value of ``query`` as KEDA's Prometheus scaler sees it: how many series
    came back and the value of the single one; errors come back in the answer."""
    label = source or client.base_url
    try:
        result = client.query(query)
    except GpuscaleError as error:
        return QueryAnswer(None, 0, error.one_line(), label)
    if isinstance(result, ScalarResult):
        return QueryAnswer(_finite(result.value), 1, None, label)
    if not isinstance(result, VectorResult):
        return QueryAnswer(None, 0, f"result type {result.result_type}, expected a vector", label)
    if len(result.samples) != 1:
        return QueryAnswer(None, len(result.samples), None, label)
    return QueryAnswer(_finite(result.samples[0].value), 1, None, label)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class Watcher:
    """Reads one :class:`Snapshot` per call."""

    def __init__(
        self,
        kube: Kube,
        namespace: str,
        deployment: str,
        *,
        prometheus: str | None = None,
        open_client: Callable[[str], PrometheusClient] = open_prometheus,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.deployment = deployment
        self.prometheus = prometheus
        self._open_client = open_client
        self._clients: dict[str, PrometheusClient] = {}
        self._forwards: dict[str, ForwardPool] = {}

    def _client(self, base_url: str) -> PrometheusClient:
        client = self._clients.get(base_url)
        if client is None:
            client = self._clients[base_url] = self._open_client(base_url)
        return client

    def read(self, t: float) -> Snapshot:
        """Everything about the workload at ``t`` (seconds since the watch started)."""
        deployment = self.kube.deployment(self.namespace, self.deployment)
        errors: list[str] = []

        def attempt(read: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
            try:
                return read()
            except GpuscaleError as error:
                if isinstance(error, InputError):
                    raise
                errors.append(error.one_line())
                return []

        pods = attempt(lambda: self.kube.pods(self.namespace, deployment_selector(deployment)))
        nodes = attempt(self.kube.nodes)
        scaled_objects = attempt(lambda: self.kube.scaled_objects(self.namespace))
        hpas = attempt(lambda: self.kube.hpas(self.namespace))
        events = attempt(lambda: self.kube.events(self.namespace))
        trigger = prometheus_trigger(find_scaled_object(scaled_objects, self.deployment))
        answer = self._ask(*trigger) if trigger else None
        return build_snapshot(
            t=t,
            namespace=self.namespace,
            deployment=deployment,
            pods=pods,
            nodes=nodes,
            scaled_objects=scaled_objects,
            hpas=hpas,
            events=events,
            answer=answer,
            errors=errors,
        )

    def _ask(self, server: str, query: str) -> QueryAnswer | None:
        if self.prometheus:
            return query_answer(self._client(self.prometheus), query)
        found = in_cluster_service(server)
        if found is None:
            return None
        namespace, service, port = found
        pool = self._forwards.get(server)
        if pool is None:
            pool = ForwardPool(self.kube, namespace, service, port)
            self._forwards[server] = pool
        label = f"service/{namespace}/{service}:{port} via port-forward"
        if not pool.urls():
            try:
                pool.refresh()
            except GpuscaleError as error:
                return QueryAnswer(None, 0, error.one_line(), label)
            if not pool.urls():
                return QueryAnswer(None, 0, "no ready Prometheus pod behind the Service", label)
        return query_answer(self._client(pool.urls()[0]), query, source=label)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        for pool in self._forwards.values():
            pool.close()
        self._forwards.clear()


class TimelineWriter:
    """Writes the header, then one line per record, flushed as it goes.

    The stream is opened at the first record: a watch that fails before it has anything
    to record (no such Deployment, an API error) leaves no file behind, rather than a
    header-only timeline that ``gpuscale report`` could only call empty. A live record
    carries the cluster's words (event messages, conditions): each line is masked
    (:func:`gpuscale._redact.redact`) before it reaches the file.
    """

    def __init__(self, open_stream: Callable[[], IO[str]], header: Header) -> None:
        self._open = open_stream
        self._header = header
        self.stream: IO[str] | None = None

    def write(self, record: Record) -> None:
        """Append ``record`` (the header first, when this is the first one)."""
        if self.stream is None:
            self.stream = self._open()
            self.stream.write(redact(encode_header(self._header)) + "\n")
        self.stream.write(redact(encode_record(record)) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Close the stream, if a record opened it."""
        if self.stream is not None:
            self.stream.close()


def run_watch(
    watcher: Watcher,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    interval: float,
    prices: Mapping[str, float],
    on_tick: Callable[[Snapshot, Record | None, WatchState], None],
    duration: float | None = None,
    ticks: int | None = None,
) -> WatchState:
    """Read, fold and report every ``interval`` seconds until ``duration`` or ``ticks``.

    Each tick starts ``interval`` after the previous one started (reads included), so
    the timeline's spacing does not drift with the API server's latency.
    """
    start = clock()
    state = WatchState(prices=dict(prices))
    count = 0
    while True:
        began = clock()
        snapshot = watcher.read(began - start)
        state, record = advance(state, snapshot)
        on_tick(snapshot, record, state)
        count += 1
        if ticks is not None and count >= ticks:
            return state
        if duration is not None and clock() - start >= duration:
            return state
        sleep(max(0.0, interval - (clock() - began)))
