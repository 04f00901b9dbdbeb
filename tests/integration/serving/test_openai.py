"""The emulator's OpenAI-compatible API over real HTTP on loopback.

Shapes follow vLLM's ``vllm/entrypoints/openai/protocol.py`` (v0.11 line): completion
and chat objects, ``*.chunk`` events over SSE ending in ``data: [DONE]``, usage, and
errors as ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from tests.integration.serving.conftest import Running

pytestmark = pytest.mark.integration


def events(text: str) -> list[str]:
    return [line.removeprefix("data: ") for line in text.split("\n\n") if line.strip()]


def test_completion_whole(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        reply = client.post(
            "/v1/completions", json={"model": "llama-3.1-8b", "prompt": "hello", "max_tokens": 5}
        )
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body["object"] == "text_completion"
    assert body["model"] == "llama-3.1-8b"
    assert body["id"].startswith("cmpl-")
    (choice,) = body["choices"]
    assert choice["index"] == 0
    assert choice["finish_reason"] == "length"
    assert len(choice["text"].split()) == 5
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7}


def test_completion_token_id_prompt_counts_exactly(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        body = client.post(
            "/v1/completions", json={"prompt": list(range(37)), "max_tokens": 2}
        ).json()
    assert body["usage"]["prompt_tokens"] == 37


def test_completion_default_max_tokens_is_16(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        body = client.post("/v1/completions", json={"prompt": "x"}).json()
    assert body["usage"]["completion_tokens"] == 16


def test_completion_stream(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        reply = client.post(
            "/v1/completions",
            json={
                "prompt": "hi",
                "max_tokens": 4,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    data = events(reply.text)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(item) for item in data[:-1]]
    assert all(chunk["object"] == "text_completion" for chunk in chunks)
    text = "".join(chunk["choices"][0]["text"] for chunk in chunks if chunk["choices"])
    assert len(text.split()) == 4
    reasons = [chunk["choices"][0]["finish_reason"] for chunk in chunks if chunk["choices"]]
    assert reasons[-1] == "length"
    assert all(reason is None for reason in reasons[:-1])
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 4


def test_chat_whole_and_stream(emulator: Running) -> None:
    messages = [{"role": "user", "content": "Say hi"}]
    with httpx.Client(base_url=emulator.url) as client:
        whole = client.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 3})
        streamed = client.post(
            "/v1/chat/completions", json={"messages": messages, "max_tokens": 3, "stream": True}
        )
    body = whole.json()
    assert whole.status_code == 200
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert len(body["choices"][0]["message"]["content"].split()) == 3
    assert body["usage"]["completion_tokens"] == 3
    data = events(streamed.text)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(item) for item in data[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
    assert len(content.split()) == 3
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_models_and_health(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        models = client.get("/v1/models")
        health = client.get("/health")
    assert models.status_code == 200
    (model,) = models.json()["data"]
    assert model["id"] == "llama-3.1-8b"
    assert model["object"] == "model"
    assert health.status_code == 200
    assert health.content == b""


@pytest.mark.parametrize(
    ("path", "body", "status", "needle"),
    [
        ("/v1/completions", b"{nope", 400, "not valid JSON"),
        ("/v1/completions", b"[1, 2]", 400, "JSON object"),
        ("/v1/completions", json.dumps({"max_tokens": 3}).encode(), 400, "prompt is required"),
        ("/v1/completions", json.dumps({"prompt": ""}).encode(), 400, "must not be empty"),
        ("/v1/completions", json.dumps({"prompt": [1, "a"]}).encode(), 400, "token-id prompt"),
        (
            "/v1/completions",
            json.dumps({"prompt": "x", "max_tokens": 0}).encode(),
            400,
            "max_tokens",
        ),
        (
            "/v1/completions",
            json.dumps({"prompt": "x", "max_tokens": "9"}).encode(),
            400,
            "max_tokens",
        ),
        ("/v1/completions", json.dumps({"prompt": "x", "stream": "yes"}).encode(), 400, "stream"),
        (
            "/v1/completions",
            json.dumps({"prompt": "x", "max_tokens": 99999}).encode(),
            400,
            "maximum context length",
        ),
        (
            "/v1/completions",
            json.dumps({"prompt": "x", "model": "gpt-9"}).encode(),
            404,
            "does not exist",
        ),
        ("/v1/chat/completions", json.dumps({"messages": []}).encode(), 400, "messages"),
        (
            "/v1/chat/completions",
            json.dumps({"messages": [{"content": "x"}]}).encode(),
            400,
            "role",
        ),
        ("/v1/nothing", b"{}", 404, "Not Found"),
        (
            "/v1/completions",
            json.dumps({"prompt": "x", "stream_options": {"include_usage": True}}).encode(),
            400,
            "only be defined when `stream=True`",
        ),
        ("/v1/completions", json.dumps({"prompt": "x", "n": 2}).encode(), 400, "n must be 1"),
    ],
)
def test_bad_requests_get_openai_errors(
    emulator: Running, path: str, body: bytes, status: int, needle: str
) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        reply = client.post(path, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == status
    error = reply.json()["error"]
    assert needle in error["message"]
    assert error["code"] == status
    assert set(error) == {"message", "type", "param", "code"}


def test_wrong_method_is_405(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        assert client.get("/v1/completions").status_code == 405
        assert client.post("/health").status_code == 405


def test_metrics_use_vllm_names(emulator: Running) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        client.post("/v1/completions", json={"prompt": [1, 2, 3], "max_tokens": 4})
        text = client.get("/metrics").text
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:gpu_cache_usage_perc",
        "vllm:num_preemptions_total",
        "vllm:prompt_tokens_total",
        "vllm:generation_tokens_total",
        "vllm:request_success_total",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:e2e_request_latency_seconds_bucket",
        "vllm:request_queue_time_seconds_bucket",
    ):
        assert name in text
    assert 'vllm:prompt_tokens_total{engine="0",model_name="llama-3.1-8b"} 3.0' in text
    assert 'vllm:generation_tokens_total{engine="0",model_name="llama-3.1-8b"} 4.0' in text
    success = 'vllm:request_success_total{engine="0",finished_reason="length",'
    assert success + 'model_name="llama-3.1-8b"} 1.0' in text
    assert 'vllm:time_to_first_token_seconds_bucket{engine="0",le="2560.0"' in text


def test_client_disconnect_mid_stream_frees_blocks(emulator: Running) -> None:
    host, port = emulator.url.removeprefix("http://").split(":")
    body = json.dumps({"prompt": "x", "max_tokens": 2000, "stream": True}).encode()
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        assert b"200 OK" in sock.recv(4096)
    engine = emulator.server.loop.engine
    deadline = time.monotonic() + 5
    while not engine.idle and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.idle
    assert engine.free_blocks == engine.config.usable_blocks


def test_pipelined_requests_are_answered_in_order(emulator: Running) -> None:
    host, port = emulator.url.removeprefix("http://").split(":")
    first = json.dumps({"prompt": "x", "max_tokens": 3}).encode()
    request = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (
        len(first),
        first,
    )
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.index(b"text_completion") < data.rindex(b"HTTP/1.1 200 OK")


def test_chat_usage_chunk_and_version(emulator: Running) -> None:
    messages = [{"role": "user", "content": "Say hi"}]
    body = {"messages": messages, "max_tokens": 2, "stream": True}
    body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    with httpx.Client(base_url=emulator.url) as client:
        streamed = client.post("/v1/chat/completions", json=body)
        version = client.get("/version")
    chunks = [json.loads(item) for item in events(streamed.text)[:-1]]
    assert {chunk["id"] for chunk in chunks} == {chunks[0]["id"]}
    assert chunks[0]["id"].startswith("chatcmpl-")
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 2
    counts = [c["usage"]["completion_tokens"] for c in chunks[1:-1] if c["choices"][0]["delta"]]
    assert counts == sorted(counts)
    assert counts[-1] == 2
    assert version.json() == {"version": "0.11.0"}
