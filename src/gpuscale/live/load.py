"""``gpuscale load``: set the workload's gauge on one pod, or send requests at a rate.

Two jobs, both through port-forwards so nothing needs exposing:

- :func:`set_gauge`: the tutorial's step 6 without ``kubectl exec``: one
  ``GET /?value=<v>`` to one pod of the Deployment (with ``Authorization: Bearer`` when
  the workload has a setter token).
- :func:`run_load`: an open-loop sender. Arrivals are planned as offsets from the start
  (:func:`constant_rate`, or :func:`from_trace` for a request trace) and each request
  is sent at its offset whether or not earlier ones have answered, the way real users
  arrive; requests go round-robin over the Service's ready endpoints
  (:class:`ForwardPool` keeps one port-forward per ready pod and follows the Service as
  replicas come and go). The clock is injected: production uses the event loop's
  monotonic time, tests a virtual clock.

The seam for traces: :func:`from_trace` takes ``(offset_seconds, prompt_tokens,
output_tokens)`` rows. The file formats (Azure LLM CSV, Mooncake JSONL) are parsed by the
shared trace reader the simulator uses, so a trace means the same thing to ``simulate``
and to ``load``.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from gpuscale.errors import GpuscaleError, InputError, RetryableError, UnavailableError
from gpuscale.live._openai import completion_body, stream_completion
from gpuscale.live.kube import Kube, label_selector
from gpuscale.live.portforward import PortForwarder

__all__ = [
    "Arrival",
    "Backend",
    "ForwardPool",
    "LoadClock",
    "LoadReport",
    "RequestSpec",
    "WallClock",
    "constant_rate",
    "container_port",
    "deployment_selector",
    "from_trace",
    "percentile",
    "pick_pod",
    "ready_pods",
    "run_load",
    "service_backends",
    "set_gauge",
]


@dataclass(frozen=True, slots=True)
class Arrival:
    """One planned request."""

    offset: float
    """Seconds after the start of the run."""
    prompt_tokens: int = 0
    output_tokens: int = 0


def constant_rate(rate: float, duration: float) -> Iterator[Arrival]:
    """Evenly spaced arrivals: ``rate`` per second for ``duration`` seconds."""
    if not math.isfinite(rate) or rate <= 0:
        raise ValueError(f"rate must be a positive number, got {rate!r}")
    if not math.isfinite(duration) or duration <= 0:
        raise ValueError(f"duration must be positive, got {duration!r}")
    count = math.floor(rate * duration + 1e-9)
    for index in range(count):
        yield Arrival(index / rate)


def from_trace(
    rows: Iterable[tuple[float, int, int]],
    *,
    speed: float = 1.0,
    duration: float | None = None,
) -> Iterator[Arrival]:
    """Arrivals from trace rows ``(offset_seconds, prompt_tokens, output_tokens)``.

    Offsets are made relative to the first row and divided by ``speed`` (2.0 replays
    twice as fast); rows after ``duration`` (in replay seconds) are left out. Rows must be
    in time order; an earlier row after a later one is an error.
    """
    if not math.isfinite(speed) or speed <= 0:
        raise ValueError(f"speed must be a positive number, got {speed!r}")
    first: float | None = None
    last = -math.inf
    for offset, prompt, output in rows:
        if offset < last:
            raise ValueError(f"trace rows go back in time at offset {offset}")
        last = offset
        if first is None:
            first = offset
        at = (offset - first) / speed
        if duration is not None and at >= duration:
            return
        yield Arrival(at, int(prompt), int(output))


class LoadClock(Protocol):
    """Time for the sender: ``now`` in seconds (any origin) and an awaitable sleep."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> Awaitable[None]: ...


class WallClock:
    """The real clock: ``time.monotonic`` and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> Awaitable[None]:
        return asyncio.sleep(seconds)


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What each load request is."""

    path: str = "/"
    """Path and query; ``{prompt_tokens}`` and ``{output_tokens}`` are filled per request."""
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    openai_model: str | None = None
    """Send ``POST /v1/completions`` (OpenAI-compatible servers such as vLLM), streamed,
    with exactly ``prompt_tokens`` token ids in and ``output_tokens`` out
    (:func:`gpuscale.live._openai.completion_body`), timing TTFT and every token."""

    def build(self, arrival: Arrival) -> tuple[str, str, dict[str, Any] | None]:
        """``(method, path, json body or None)`` for ``arrival``."""
        if self.openai_model is not None:
            body = completion_body(self.openai_model, arrival.prompt_tokens, arrival.output_tokens)
            return "POST", "/v1/completions", body
        path = self.path.replace("{prompt_tokens}", str(arrival.prompt_tokens)).replace(
            "{output_tokens}", str(arrival.output_tokens)
        )
        return self.method, path, None


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": values[-1] if values else None,
    }


def percentile(sorted_values: Sequence[float], p: float) -> float | None:
    """The nearest-rank ``p``-th percentile of ``sorted_values`` (None when empty)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What a run sent and how it went."""

    planned: int
    sent: int
    ok: int
    http_errors: Mapping[int, int]
    """Non-2xx answers by status code."""
    failures: Mapping[str, int]
    """Requests with no answer, by cause (``timeout``, ``ConnectError``, ``no ready pod``)."""
    dropped: int
    """Arrivals not sent because ``max_in_flight`` requests were still open."""
    latencies: tuple[float, ...]
    """Seconds, of the 2xx answers, sorted."""
    duration: float
    max_lag: float
    """How late the sender was for its most-delayed arrival (seconds); large means the
    machine could not keep up and the rate was lower than asked."""
    ttft: tuple[float, ...] = ()
    """Streamed requests: seconds to the first token, sorted (``--openai-model``)."""
    itl: tuple[float, ...] = ()
    """Streamed requests: seconds between consecutive tokens, every one, sorted."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "planned": self.planned,
            "sent": self.sent,
            "ok": self.ok,
            "http_errors": {str(k): v for k, v in sorted(self.http_errors.items())},
            "failures": dict(sorted(self.failures.items())),
            "dropped": self.dropped,
            "latency_seconds": _percentiles(self.latencies),
            "duration_seconds": self.duration,
            "max_lag_seconds": self.max_lag,
            **{
                f"{name}_seconds": _percentiles(values)
                for name, values in (("ttft", self.ttft), ("itl", self.itl))
                if values
            },
        }

    def lines(self) -> list[str]:
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value * 1000:.1f}ms"

        errors = ", ".join(f"{n}x{code}" for code, n in sorted(self.http_errors.items()))
        failures = ", ".join(f"{n}x {cause}" for cause, n in sorted(self.failures.items()))
        rate = self.sent / self.duration if self.duration > 0 else 0.0
        lines = [
            f"sent {self.sent}/{self.planned} requests in {self.duration:.1f}s ({rate:.2f}/s): "
            f"{self.ok} ok, {sum(self.http_errors.values())} HTTP errors"
            + (f" ({errors})" if errors else "")
            + f", {sum(self.failures.values())} failed"
            + (f" ({failures})" if failures else "")
            + (f", {self.dropped} dropped at the in-flight limit" if self.dropped else ""),
            f"latency p50 {ms(percentile(self.latencies, 50))}, "
            f"p90 {ms(percentile(self.latencies, 90))}, p99 {ms(percentile(self.latencies, 99))}, "
            f"max {ms(self.latencies[-1] if self.latencies else None)}",
        ]
        for name, values in (("TTFT", self.ttft), ("ITL", self.itl)):
            if values:
                lines.append(
                    f"{name} p50 {ms(percentile(values, 50))}, p90 {ms(percentile(values, 90))}, "
                    f"p99 {ms(percentile(values, 99))}, max {ms(values[-1])}"
                )
        if self.max_lag > 1.0:
            lines.append(
                f"warning: the sender fell up to {self.max_lag:.1f}s behind schedule; "
                "the rate achieved was lower than asked"
            )
        return lines


async def run_load(
    arrivals: Iterable[Arrival],
    *,
    client: httpx.AsyncClient,
    targets: Callable[[], Sequence[str]],
    request: RequestSpec,
    clock: LoadClock,
    concurrency: int = 32,
    max_in_flight: int = 256,
    timeout: float = 30.0,
    on_progress: Callable[[LoadReport], None] | None = None,
    progress_every: float = 10.0,
) -> LoadReport:
    """Send one request per arrival at its offset, round-robin over ``targets()``.

    ``targets`` returns base URLs (``http://127.0.0.1:<port>``) of the ready backends at
    the moment of asking. Each request is due at ``start + offset`` whatever earlier
    ones are doing (open loop). At most ``concurrency`` requests are on the wire at once
    (size the client's connection pool to match); a request due while all are busy
    waits for one and goes late, and the lateness is reported as lag. Arrivals that find
    ``max_in_flight`` requests sent or waiting are dropped and counted.

    Why the cap: with hundreds of requests queued inside httpx's connection pool, each
    request costs more CPU the longer the queue (measured in
    ``benchmarks/live_load.py``), and the sender collapses at rates it could otherwise
    sustain; queueing here is cheap and the lag says when the machine fell behind.
    """
    if concurrency < 1 or max_in_flight < 1:
        raise ValueError("concurrency and max_in_flight must be at least 1")
    slots = asyncio.Semaphore(concurrency)
    start = clock.now()
    counters: dict[str, Any] = {
        "planned": 0, "sent": 0, "ok": 0, "dropped": 0, "max_lag": 0.0,
        "http": Counter(), "fail": Counter(), "lat": [], "ttft": [], "itl": [],
    }  # fmt: skip
    open_tasks: set[asyncio.Task[None]] = set()
    turn = 0
    next_progress = start + progress_every

    def report() -> LoadReport:
        return LoadReport(
            planned=counters["planned"],
            sent=counters["sent"],
            ok=counters["ok"],
            http_errors=dict(counters["http"]),
            failures=dict(counters["fail"]),
            dropped=counters["dropped"],
            latencies=tuple(sorted(counters["lat"])),
            duration=clock.now() - start,
            max_lag=counters["max_lag"],
            ttft=tuple(sorted(counters["ttft"])),
            itl=tuple(sorted(counters["itl"])),
        )

    async def one(
        due: float, url: str, method: str, path: str, body: dict[str, Any] | None
    ) -> None:
        async with slots:
            began = clock.now()
            counters["max_lag"] = max(counters["max_lag"], began - due)
            await send(url, method, path, body, began)

    async def send(
        url: str, method: str, path: str, body: dict[str, Any] | None, began: float
    ) -> None:
        try:
            if body is not None and body.get("stream"):
                await streamed(url + path, body)
                return
            response = await client.request(
                method, url + path, json=body, headers=dict(request.headers), timeout=timeout
            )
        except httpx.TimeoutException:
            counters["fail"]["timeout"] += 1
            return
        except httpx.TransportError as exc:
            counters["fail"][type(exc).__name__] += 1
            return
        if 200 <= response.status_code < 300:
            counters["ok"] += 1
            counters["lat"].append(clock.now() - began)
        else:
            counters["http"][response.status_code] += 1

    async def streamed(url: str, body: dict[str, Any]) -> None:
        record = await stream_completion(
            client, url, body, clock=clock.now, headers=request.headers, timeout=timeout
        )
        if record.status != 200:
            counters["http"][record.status] += 1
            return
        counters["ok"] += 1
        counters["lat"].append((record.finished or clock.now()) - record.sent)
        if record.ttft is not None:
            counters["ttft"].append(record.ttft)
        counters["itl"].extend(record.intervals())

    for arrival in arrivals:
        counters["planned"] += 1
        due = start + arrival.offset
        delay = due - clock.now()
        if delay > 0:
            await clock.sleep(delay)
        counters["max_lag"] = max(counters["max_lag"], clock.now() - due)
        if on_progress is not None and clock.now() >= next_progress:
            on_progress(report())
            next_progress += progress_every
        urls = targets()
        if not urls:
            counters["fail"]["no ready pod"] += 1
            continue
        if len(open_tasks) >= max_in_flight:
            counters["dropped"] += 1
            continue
        method, path, body = request.build(arrival)
        url = urls[turn % len(urls)]
        turn += 1
        counters["sent"] += 1
        task = asyncio.create_task(one(due, url, method, path, body))
        open_tasks.add(task)
        task.add_done_callback(open_tasks.discard)
    if open_tasks:
        await asyncio.gather(*open_tasks)
    return report()


def set_gauge(
    client: httpx.Client, base_url: str, value: str, *, token: str | None, where: str
) -> str:
    """``GET /?value=<value>`` on the workload; returns its answer's text.

    A 400 (the value was refused) or 401 (the setter token is missing or wrong) is an
    :class:`InputError` naming the flag to fix.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = client.get(f"{base_url}/", params={"value": value}, headers=headers)
    except httpx.HTTPError as exc:
        raise RetryableError(
            f"the request to the pod failed ({type(exc).__name__})",
            where=where,
            fix="check that the pod is Ready and listening on --port",
        ) from None
    text = " ".join(response.text.split())[:200]
    if response.status_code == 200:
        return text
    if response.status_code == 400:
        raise InputError(
            f"the workload refused value {value!r} ({text})",
            where="--value",
            fix="pass a finite number such as 160",
        )
    if response.status_code == 401:
        raise InputError(
            f"the workload wants its setter token ({text})",
            where="--setter-token",
            fix="pass --setter-token or set GPUSCALE_SETTER_TOKEN to the workload's token",
        )
    raise UnavailableError(
        f"the workload answered {response.status_code} ({text})",
        where=where,
        fix="is this the tutorial's workload (GET /?value=)? check --port",
    )


def _is_ready(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def ready_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Running, Ready, not terminating; oldest first (then by name)."""
    ready = [p for p in pods if _is_ready(p)]
    return sorted(
        ready,
        key=lambda p: (
            str((p.get("metadata") or {}).get("creationTimestamp") or ""),
            str((p.get("metadata") or {}).get("name") or ""),
        ),
    )


def pick_pod(pods: Iterable[Mapping[str, Any]], name: str | None, *, where: str) -> str:
    """The pod to talk to: ``name`` if given and ready, else the oldest ready pod."""
    all_pods = list(pods)
    ready = ready_pods(all_pods)
    names = [str(p["metadata"]["name"]) for p in ready]
    if name is not None:
        if name in names:
            return name
        known = [str((p.get("metadata") or {}).get("name")) for p in all_pods]
        state = "not Ready" if name in known else "not one of the Deployment's pods"
        raise InputError(
            f"pod {name!r} is {state}",
            where="--pod",
            fix=f"use a Ready pod ({', '.join(names) or 'none yet'}) or leave --pod out",
        )
    if not names:
        raise UnavailableError(
            f"no Ready pod ({len(all_pods)} pods, none Running and Ready)",
            where=where,
            fix="wait for a pod to become Ready (gpuscale watch shows them)",
        )
    return names[0]


def container_port(deployment: Mapping[str, Any]) -> int | None:
    """The first ``containerPort`` of the Deployment's pod template."""
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []
    for container in containers:
        for port in container.get("ports") or []:
            if port.get("containerPort"):
                return int(port["containerPort"])
    return None


@dataclass(frozen=True, slots=True)
class Backend:
    """A ready endpoint of a Service: the pod and the port the Service sends to."""

    pod: str
    port: int


def service_backends(
    service: Mapping[str, Any], slices: Iterable[Mapping[str, Any]], port: str | None = None
) -> list[Backend]:
    """The Service's ready endpoints from its EndpointSlices, for one of its ports.

    ``port`` is the Service port's name or number (default: its first port). The
    EndpointSlice port with the same name carries the resolved target port, named
    target ports included (``discovery.k8s.io/v1``); an endpoint whose ``ready``
    condition is unset counts as ready, as the API documents.
    """
    ports = (service.get("spec") or {}).get("ports") or []
    if not ports:
        raise InputError(
            "the Service has no ports",
            where=f"service/{(service.get('metadata') or {}).get('name')}",
            fix="add a port to the Service",
        )
    chosen = ports[0]
    if port is not None:
        chosen = next(
            (p for p in ports if str(p.get("name")) == port or str(p.get("port")) == port), None
        )
        if chosen is None:
            listed = ", ".join(str(p.get("name") or p.get("port")) for p in ports)
            raise InputError(
                f"the Service has no port {port!r}", where="--service-port", fix=f"use {listed}"
            )
    name = chosen.get("name") or ""
    backends: dict[str, Backend] = {}
    for slice_ in slices:
        number = next(
            (int(p["port"]) for p in slice_.get("ports") or [] if (p.get("name") or "") == name),
            None,
        )
        if number is None:
            continue
        for endpoint in slice_.get("endpoints") or []:
            ready = (endpoint.get("conditions") or {}).get("ready")
            ref = endpoint.get("targetRef") or {}
            if ready is False or ref.get("kind") != "Pod":
                continue
            backends[str(ref["name"])] = Backend(str(ref["name"]), number)
    return [backends[k] for k in sorted(backends)]


class ForwardPool:
    """One port-forward per ready backend of a Service, refreshed from its EndpointSlices.

    :meth:`urls` is what :func:`run_load` round-robins over. :meth:`refresh` starts
    forwards to new ready pods and closes those whose pod left; :meth:`follow` calls it
    every ``interval`` seconds on a thread until :meth:`close`.
    """

    def __init__(self, kube: Kube, namespace: str, service: str, port: str | None = None) -> None:
        self.kube = kube
        self.namespace = namespace
        self.service = service
        self.port = port
        self.errors: list[str] = []
        self._forwards: dict[Backend, PortForwarder] = {}
        self._urls: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def urls(self) -> Sequence[str]:
        return self._urls

    def backends(self) -> list[Backend]:
        with self._lock:
            return sorted(self._forwards, key=lambda b: b.pod)

    def refresh(self) -> None:
        service = self.kube.service(self.namespace, self.service)
        wanted = service_backends(
            service, self.kube.endpoint_slices(self.namespace, self.service), self.port
        )
        with self._lock:
            current = dict(self._forwards)
        for backend in wanted:
            if backend not in current:
                forward = PortForwarder(self.kube, self.namespace, backend.pod, backend.port)
                try:
                    forward.start()
                except GpuscaleError as error:
                    self.errors.append(error.one_line())
                    continue
                current[backend] = forward
        for backend in [b for b in current if b not in wanted]:
            current.pop(backend).close()
        with self._lock:
            self._forwards = current
            self._urls = tuple(current[b].url for b in sorted(current, key=lambda b: b.pod))

    def follow(self, interval: float) -> None:
        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.refresh()
                except GpuscaleError as error:
                    self.errors.append(error.one_line())

        self._thread = threading.Thread(target=loop, name="gpuscale load refresh", daemon=True)
        self._thread.start()

    def forward_errors(self) -> list[str]:
        with self._lock:
            forwards = list(self._forwards.values())
        return self.errors + [e for f in forwards for e in f.errors]

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            forwards, self._forwards, self._urls = list(self._forwards.values()), {}, ()
        for forward in forwards:
            forward.close()


def deployment_selector(deployment: Mapping[str, Any]) -> str:
    """The Deployment's pod selector as a query string."""
    return label_selector((deployment.get("spec") or {}).get("selector") or {})
