"""The load sender on a virtual clock and httpx's MockTransport, and the pure helpers.

The sender's behaviour is checked request by request: when each was sent (virtual
time), where it went (round-robin), and how answers, failures, latencies and the
in-flight limit are counted.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gpuscale.errors import InputError, UnavailableError
from gpuscale.live.kube import label_selector
from gpuscale.live.load import (
    Arrival,
    Backend,
    LoadReport,
    RequestSpec,
    constant_rate,
    from_trace,
    percentile,
    pick_pod,
    run_load,
    service_backends,
)
from tests.unit.live.virtual_clock import VirtualClock


def test_constant_rate_spaces_arrivals_evenly() -> None:
    arrivals = list(constant_rate(4, 2.0))
    assert [a.offset for a in arrivals] == [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    assert len(list(constant_rate(3, 10))) == 30
    with pytest.raises(ValueError, match="positive"):
        list(constant_rate(0, 10))


def test_trace_rows_become_relative_scaled_and_cut_arrivals() -> None:
    rows = [(100.0, 4808, 10), (100.5, 3180, 8), (102.0, 10, 1), (110.0, 1, 1)]
    assert list(from_trace(rows)) == [
        Arrival(0.0, 4808, 10),
        Arrival(0.5, 3180, 8),
        Arrival(2.0, 10, 1),
        Arrival(10.0, 1, 1),
    ]
    assert [a.offset for a in from_trace(rows, speed=2.0, duration=4.0)] == [0.0, 0.25, 1.0]
    with pytest.raises(ValueError, match="back in time"):
        list(from_trace([(5.0, 1, 1), (4.0, 1, 1)]))


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [  # nearest-rank definition
        ([15, 20, 35, 40, 50], 5, 15),
        ([15, 20, 35, 40, 50], 30, 20),
        ([15, 20, 35, 40, 50], 40, 20),
        ([15, 20, 35, 40, 50], 50, 35),
        ([15, 20, 35, 40, 50], 100, 50),
        ([], 50, None),
    ],
)
def test_percentile_is_nearest_rank(values: list[float], p: float, expected: float | None) -> None:
    assert percentile(values, p) == expected


def test_request_spec_fills_tokens_and_builds_openai_bodies() -> None:
    arrival = Arrival(0.0, 3, 7)
    assert RequestSpec(path="/work?in={prompt_tokens}&out={output_tokens}").build(arrival) == (
        "GET",
        "/work?in=3&out=7",
        None,
    )
    method, path, body = RequestSpec(openai_model="m").build(arrival)
    assert (method, path) == ("POST", "/v1/completions")
    assert body is not None
    assert body["prompt"] == [1000, 1000, 1000]  # token ids: exactly the trace's length
    assert (body["max_tokens"], body["min_tokens"], body["ignore_eos"]) == (7, 7, True)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}


def _run(
    arrivals: list[Arrival],
    handler: Any,
    clock: VirtualClock,
    targets: list[str],
    **kwargs: Any,
) -> LoadReport:
    async def go() -> LoadReport:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await run_load(
                arrivals,
                client=client,
                targets=lambda: targets,
                request=kwargs.pop("request", RequestSpec(path="/?value=1")),
                clock=clock,
                **kwargs,
            )

    return clock.drive(go())


def test_requests_leave_at_their_offsets_round_robin_with_measured_latency() -> None:
    clock = VirtualClock(start=1000.0)
    seen: list[tuple[float, str]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            (
                clock.now() - 1000.0,
                f"{request.url.host}:{request.url.port}{request.url.raw_path.decode()}",
            )
        )
        await clock.sleep(0.050 if request.url.port == 1 else 0.150)
        return httpx.Response(200, text="Hello, from the handler!")

    report = _run(list(constant_rate(10, 0.5)), handler, clock,
                  ["http://127.0.0.1:1", "http://127.0.0.1:2"])  # fmt: skip
    assert [round(t, 9) for t, _ in seen] == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert [u for _, u in seen] == ["127.0.0.1:1/?value=1", "127.0.0.1:2/?value=1"] * 2 + [
        "127.0.0.1:1/?value=1"
    ]
    assert (report.planned, report.sent, report.ok) == (5, 5, 5)
    assert report.latencies == pytest.approx((0.05, 0.05, 0.05, 0.15, 0.15))
    assert percentile(report.latencies, 50) == pytest.approx(0.05)
    assert percentile(report.latencies, 99) == pytest.approx(0.15)
    assert report.max_lag == pytest.approx(0.0)
    assert report.duration == pytest.approx(0.45)  # the last answers: 0.3 + 0.15, 0.4 + 0.05


def test_requests_do_not_wait_for_slow_answers() -> None:
    clock = VirtualClock()
    sent_at: list[float] = []

    async def slow(request: httpx.Request) -> httpx.Response:
        sent_at.append(clock.now())
        await clock.sleep(10.0)
        return httpx.Response(200)

    report = _run(list(constant_rate(2, 3)), slow, clock, ["http://a"])
    assert [t - sent_at[0] for t in sent_at] == pytest.approx([0, 0.5, 1, 1.5, 2, 2.5])
    assert report.ok == 6
    assert report.duration == pytest.approx(12.5)


def test_errors_failures_and_the_in_flight_limit_are_counted_apart() -> None:
    clock = VirtualClock()
    calls = {"n": 0}

    async def mixed(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(401, text="Unauthorized")
        if calls["n"] == 2:
            raise httpx.ConnectError("refused", request=request)
        if calls["n"] == 3:
            raise httpx.ReadTimeout("slow", request=request)
        await clock.sleep(5.0)
        return httpx.Response(200)

    report = _run(list(constant_rate(10, 1)), mixed, clock, ["http://a"], max_in_flight=4)
    assert report.http_errors == {401: 1}
    assert report.failures == {"ConnectError": 1, "timeout": 1}
    assert report.sent + report.dropped == report.planned == 10
    assert report.dropped == 3  # requests 4-7 hold the 4 slots for 5 s
    assert report.ok == 4
    text = report.lines()
    assert text[0].startswith("sent 7/10 requests")
    assert "1 HTTP errors (1x401)" in text[0]
    assert "2 failed (1x ConnectError, 1x timeout)" in text[0]
    assert "3 dropped at the in-flight limit" in text[0]


def test_no_ready_backend_is_a_failure_per_arrival() -> None:
    clock = VirtualClock()

    async def never(request: httpx.Request) -> httpx.Response:  # pragma: no cover
        raise AssertionError

    report = _run(list(constant_rate(1, 3)), never, clock, [])
    assert report.failures == {"no ready pod": 3}
    assert report.sent == 0


# EndpointSlice and Service shapes from the discovery.k8s.io/v1 and core/v1 API reference.
SERVICE = {
    "metadata": {"name": "go-from-configmap", "namespace": "demo"},
    "spec": {"ports": [{"name": "metrics", "port": 8080, "targetPort": "http"},
                       {"name": "admin", "port": 9000, "targetPort": 9000}]},
}  # fmt: skip
SLICES = [
    {
        "metadata": {"name": "go-from-configmap-abc12",
                     "labels": {"kubernetes.io/service-name": "go-from-configmap"}},
        "addressType": "IPv4",
        "ports": [{"name": "metrics", "port": 8081, "protocol": "TCP"},
                  {"name": "admin", "port": 9000, "protocol": "TCP"}],
        "endpoints": [
            {"addresses": ["10.244.0.7"], "conditions": {"ready": True},
             "targetRef": {"kind": "Pod", "name": "pod-b", "namespace": "demo"}},
            {"addresses": ["10.244.0.8"], "conditions": {"ready": False},
             "targetRef": {"kind": "Pod", "name": "pod-c", "namespace": "demo"}},
            {"addresses": ["10.244.0.9"], "conditions": {},
             "targetRef": {"kind": "Pod", "name": "pod-a", "namespace": "demo"}},
        ],
    }
]  # fmt: skip


def test_service_backends_resolve_named_target_ports_and_skip_unready() -> None:
    assert service_backends(SERVICE, SLICES) == [Backend("pod-a", 8081), Backend("pod-b", 8081)]
    assert service_backends(SERVICE, SLICES, "admin") == [
        Backend("pod-a", 9000),
        Backend("pod-b", 9000),
    ]
    assert service_backends(SERVICE, SLICES, "9000")[0].port == 9000
    with pytest.raises(InputError, match="no port 'web'"):
        service_backends(SERVICE, SLICES, "web")


def _pod(
    name: str,
    *,
    ready: bool = True,
    phase: str = "Running",
    created: str = "2026-01-01T00:00:00Z",
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T01:00:00Z"
    return {
        "metadata": meta,
        "status": {"phase": phase,
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }  # fmt: skip


def test_pick_pod_prefers_the_oldest_ready_one() -> None:
    pods = [
        _pod("b", created="2026-01-01T00:00:05Z"),
        _pod("a", created="2026-01-01T00:00:09Z"),
        _pod("c", created="2026-01-01T00:00:01Z", ready=False),
        _pod("d", created="2026-01-01T00:00:00Z", deleting=True),
        _pod("e", phase="Pending", ready=False),
    ]
    assert pick_pod(pods, None, where="x") == "b"
    assert pick_pod(pods, "a", where="x") == "a"
    with pytest.raises(InputError, match="'c' is not Ready"):
        pick_pod(pods, "c", where="x")
    with pytest.raises(InputError, match="not one of the Deployment's pods"):
        pick_pod(pods, "zz", where="x")
    with pytest.raises(UnavailableError, match="no Ready pod"):
        pick_pod([_pod("e", phase="Pending", ready=False)], None, where="x")


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"app": "go", "tier": "gpu"}}, "app=go,tier=gpu"),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}]},
         "env in (a,b)"),
        ({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["1"]},
                               {"key": "y", "operator": "Exists"},
                               {"key": "z", "operator": "DoesNotExist"}]}, "x notin (1),y,!z"),
    ],
)  # fmt: skip
def test_label_selector_prints_like_apimachinery(selector: dict[str, Any], text: str) -> None:
    assert label_selector(selector) == text


def test_requests_beyond_the_concurrency_wait_for_a_slot_and_count_as_lag() -> None:
    clock = VirtualClock()
    sent_at: list[float] = []

    async def slow(request: httpx.Request) -> httpx.Response:
        sent_at.append(clock.now())
        await clock.sleep(1.0)
        return httpx.Response(200)

    arrivals = [Arrival(0.0), Arrival(0.0), Arrival(0.0), Arrival(0.5)]
    report = _run(arrivals, slow, clock, ["http://a"], concurrency=2)
    start = sent_at[0]
    assert [t - start for t in sent_at] == pytest.approx([0.0, 0.0, 1.0, 1.0])
    assert report.latencies == pytest.approx((1.0, 1.0, 1.0, 1.0))
    assert report.max_lag == pytest.approx(1.0)
    assert report.dropped == 0
