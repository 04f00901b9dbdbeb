"""A real Prometheus (Debian's) scrapes the emulator and answers the ScaledObject's query.

The query is the demand signal an LLM ScaledObject scales on (issue 15):
``sum(vllm:num_requests_waiting) + sum(vllm:num_requests_running)``. With
``max_num_seqs`` 4 and 10 long requests in flight the engine runs 4 and queues 6, so the
answer is 10 while the split is 4 / 6. The query ``gpuscale init --preset vllm`` writes
(scoped by the ``namespace`` and ``service`` labels a ServiceMonitor's scrape adds, given
here as the target's labels) gets the same answer unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from gpuscale.manifests.scaffold import ScaffoldOptions, scaffold_objects
from gpuscale.prometheus.server import PrometheusServer
from tests.integration.serving.conftest import Running

pytestmark = pytest.mark.integration

DEMAND = "sum(vllm:num_requests_waiting) + sum(vllm:num_requests_running)"


def poll(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def _scaffold_query() -> str:
    options = ScaffoldOptions(name="chat", namespace="ml", preset="vllm")
    scaled = next(body for name, body, _ in scaffold_objects(options) if "scaledobject" in name)
    return str(scaled["spec"]["triggers"][0]["metadata"]["query"])


@pytest.mark.parametrize("emulator", [{"max_num_seqs": 4}], indirect=True)
@pytest.mark.parametrize("query", [DEMAND, _scaffold_query()], ids=["demand", "init-scaffold"])
def test_prometheus_answers_the_demand_query(tmp_path: Path, emulator: Running, query: str) -> None:
    address = emulator.url.removeprefix("http://")
    config = f"""
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: vllm
    static_configs:
      - targets: ["{address}"]
        labels: {{namespace: ml, service: chat}}
"""
    stop = threading.Event()

    def client_request() -> None:
        with httpx.Client(base_url=emulator.url, timeout=120) as client:
            try:
                with client.stream(
                    "POST",
                    "/v1/completions",
                    json={"prompt": "x", "max_tokens": 4000, "stream": True},
                ) as reply:
                    for _ in reply.iter_bytes():
                        if stop.is_set():
                            return
            except httpx.HTTPError:
                return

    clients = [threading.Thread(target=client_request, daemon=True) for _ in range(10)]
    for thread in clients:
        thread.start()
    engine = emulator.server.loop.engine
    poll(lambda: engine.num_running + engine.num_waiting == 10, 10)
    try:
        with PrometheusServer(tmp_path / "data", config=config) as server, server.client() as prom:

            def value(query: str) -> float | None:
                result = prom.query_json(query)["data"]["result"]
                return float(result[0]["value"][1]) if result else None

            poll(lambda: value(query) == 10.0)
            assert value("sum(vllm:num_requests_running)") == 4.0
            assert value("sum(vllm:num_requests_waiting)") == 6.0
            poll(lambda: (value("vllm:kv_cache_usage_perc") or 0.0) > 0.0)
            (target,) = prom.targets()
            assert target.health == "up"
    finally:
        stop.set()
        for thread in clients:
            thread.join(10)
