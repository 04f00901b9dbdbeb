"""One streamed OpenAI ``/v1/completions`` request of exact lengths, timed chunk by chunk.

``gpuscale load --openai-model`` and ``gpuscale calibrate`` both send these. The body
makes the lengths exact on vLLM (and on the emulator): the prompt is a list of token ids
of the planned length (no tokenizer guesses), ``max_tokens`` and vLLM's ``min_tokens``
are the planned output with ``ignore_eos`` (so the model cannot stop early), and
``stream_options`` asks for ``include_usage`` plus vLLM's ``continuous_usage_stats``, so
every chunk says how many completion tokens have been produced. A server that ignores
the last is still timed: each chunk then counts one token.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["Streamed", "completion_body", "stream_completion"]


def completion_body(
    model: str, prompt_tokens: int, output_tokens: int, *, token_id: int = 1000
) -> dict[str, Any]:
    """A streaming completion of exactly ``prompt_tokens`` in and ``output_tokens`` out."""
    out = max(1, output_tokens)
    return {
        "model": model,
        "prompt": [token_id] * max(1, prompt_tokens),
        "max_tokens": out,
        "min_tokens": out,
        "ignore_eos": True,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }


@dataclass
class Streamed:
    """How one streamed request went: its status and every chunk's arrival."""

    status: int
    sent: float
    """The clock when the request was sent."""
    chunks: list[tuple[float, int]] = field(default_factory=list)
    """``(arrival, completion tokens so far)`` of each chunk that carries a choice."""
    finished: float | None = None
    """The clock when the stream ended (``None`` if it broke off)."""
    body: str = ""
    """The start of the answer's body when the status is not 200."""

    @property
    def ttft(self) -> float | None:
        return self.chunks[0][0] - self.sent if self.chunks else None

    @property
    def e2e(self) -> float | None:
        return None if self.finished is None else self.finished - self.sent

    def intervals(self) -> list[float]:
        """Seconds between consecutive tokens (a chunk of k tokens: k equal parts)."""
        out: list[float] = []
        for (t0, n0), (t1, n1) in zip(self.chunks, self.chunks[1:], strict=False):
            tokens = n1 - n0
            if tokens > 0:
                out.extend([(t1 - t0) / tokens] * tokens)
        return out


def _text(choice: Any) -> str:
    if not isinstance(choice, dict):
        return ""
    delta = choice.get("delta")
    text = choice.get("text") if delta is None else delta.get("content")
    return text if isinstance(text, str) else ""


async def stream_completion(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    clock: Callable[[], float],
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Streamed:
    """POST ``body`` to ``url`` and read the server-sent events; httpx errors propagate."""
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    record = Streamed(0, clock())
    seen = 0
    async with client.stream(
        "POST", url, json=body, headers=dict(headers or {}), **extra
    ) as response:
        record.status = response.status_code
        if response.status_code != 200:
            record.body = (await response.aread())[:500].decode("utf-8", "replace")
            record.finished = clock()
            return record
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            now = clock()
            try:
                chunk = json.loads(line[6:])
            except ValueError:
                continue
            if not isinstance(chunk, dict) or not chunk.get("choices"):
                continue
            usage = chunk.get("usage")
            count = usage.get("completion_tokens") if isinstance(usage, dict) else None
            if isinstance(count, int):
                produced = max(seen, count)
            else:
                produced = seen + 1 if _text(chunk["choices"][0]) else seen
            if produced > seen:
                seen = produced
                record.chunks.append((now, seen))
        record.finished = clock()
    return record
