"""``gpuscale app --serve llm`` through the installed entry point: listen, answer, stop."""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.integration.app.conftest import AppProcess, gpuscale_command

pytestmark = pytest.mark.integration


def test_serve_llm_answers_and_stops_on_sigterm() -> None:
    proc = AppProcess(
        [
            *gpuscale_command(),
            "app",
            "--serve",
            "llm",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--max-num-seqs",
            "8",
        ]
    ).wait_listening()
    try:
        assert "OpenAI API for llama-3.1-8b" in proc.log
        assert "max_num_seqs 8" in proc.log
        conn = proc.connection()
        body = json.dumps({"prompt": [1, 2, 3], "max_tokens": 3})
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        reply = conn.getresponse()
        assert reply.status == 200
        assert json.loads(reply.read())["usage"]["completion_tokens"] == 3
        conn.request("GET", "/health")
        health = conn.getresponse()
        assert health.status == 200
        health.read()
        conn.close()
        proc.signal(signal.SIGTERM)
        assert proc.wait_exit() == 0
    finally:
        proc.stop()


def test_sigterm_closes_idle_keep_alive_connections_at_once() -> None:
    proc = AppProcess(
        [
            *gpuscale_command(),
            "app",
            "--serve",
            "llm",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--grace-period",
            "20s",
        ]
    ).wait_listening()
    try:
        conn = proc.connection()
        conn.request("GET", "/health")
        conn.getresponse().read()
        started = time.monotonic()
        proc.signal(signal.SIGTERM)
        assert proc.wait_exit() == 0
        assert time.monotonic() - started < 5
        conn.close()
    finally:
        proc.stop()
