"""The LLM emulator on loopback, in a thread with its own event loop, for real HTTP tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from gpuscale.app._llm import LlmConfig
from gpuscale.app._llm_server import LlmServer


@dataclass
class Running:
    server: LlmServer
    url: str


def start_emulator(
    config: LlmConfig,
) -> tuple[Running, asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    server = LlmServer(config)
    ready = threading.Event()
    bound: list[tuple[str, int]] = []

    def main() -> None:
        asyncio.set_event_loop(loop)
        bound.extend(loop.run_until_complete(server.start()))
        ready.set()
        loop.run_forever()
        loop.run_until_complete(server.stop(0.5))
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(10)
    host, port = bound[0]
    return Running(server, f"http://{host}:{port}"), loop, thread


@pytest.fixture
def emulator(request: pytest.FixtureRequest) -> Iterator[Running]:
    overrides = getattr(request, "param", {})
    config = LlmConfig(host="127.0.0.1", port=0, **overrides)
    running, loop, thread = start_emulator(config)
    try:
        yield running
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
