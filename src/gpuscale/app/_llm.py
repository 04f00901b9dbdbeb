"""``gpuscale app --serve llm``: the serving model in real time behind vLLM's HTTP surface.

The engine (:class:`gpuscale.serving.Engine`) runs in **one asyncio task**
(:class:`EngineLoop`): it schedules a step at the loop's time, sleeps for the step's
modelled duration, then hands each sampled token to the request it belongs to. HTTP
handlers only queue requests and wait on their own :class:`_Stream`; no thread per
request, so a 2-core machine sustains it (``docs/benchmarks/serving.md``).

The OpenAI-compatible answers follow vLLM's server (``vllm/entrypoints/openai/
protocol.py`` and ``serving_completion.py`` / ``serving_chat.py`` of the v0.11 line) in
shape: ``text_completion`` and ``chat.completion`` objects, ``*.chunk`` objects over
server-sent events ending with ``data: [DONE]``, ``usage`` counts, and errors as
``{"error": {"message", "type", "param", "code"}}``. What is emulated, not real: there
is no tokenizer (a text prompt counts one token per 4 UTF-8 bytes, at least 1; a chat
message adds 4 for its template) and the generated text is filler words, one per token;
every request generates exactly ``max_tokens`` (``finish_reason`` ``length``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from gpuscale.app._config import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_HEADER_BYTES,
    check_connection_limits,
    connection_limits_from_flags,
)
from gpuscale.errors import InputError
from gpuscale.serving import (
    METRICS,
    Engine,
    EngineConfig,
    RequestSpec,
    ServingMetrics,
    Step,
    StepCost,
)
from gpuscale.serving.presets import preset, presets

__all__ = [
    "DEFAULT_LLM_PORT",
    "VLLM_VERSION",
    "EngineLoop",
    "LlmConfig",
    "LlmResponder",
    "OpenAIError",
    "llm_config_from_flags",
    "new_llm_registry",
    "parse_step_cost",
]

DEFAULT_LLM_PORT = 8000
"""vLLM's ``--port`` default."""
VLLM_VERSION = "0.11.0"
"""The vLLM line the serving model follows; ``GET /version`` answers it."""
COMPLETION_MAX_TOKENS = 16
"""vLLM's (and OpenAI's) default ``max_tokens`` for ``/v1/completions``."""
CHAT_MAX_TOKENS = 256
"""Chat requests without ``max_tokens``: vLLM generates up to ``max_model_len``, stopped
by the model's end-of-sequence token, which an emulator does not have."""
_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")


@dataclass(frozen=True, slots=True)
class LlmConfig:
    """Settings of the emulator; every field has vLLM's flag of the same meaning."""

    host: str = "0.0.0.0"
    port: int = DEFAULT_LLM_PORT
    gpu: str = "l40s"
    """Catalogue GPU model whose preset sets the step cost and KV cache."""
    model: str = "llama-3.1-8b"
    """Open model whose preset to use."""
    served_model_name: str | None = None
    """The ``model`` the API answers to (``--served-model-name``); the preset's by default."""
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    max_model_len: int = 8192
    step_cost: tuple[tuple[str, float], ...] = ()
    """Step-cost terms that replace the preset's (``--step-cost base=0.02,...``): an
    emulator with known parameters, for ``gpuscale calibrate`` to recover."""
    log_level: str = "info"
    grace_period: float = 10.0
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    """As the gauge server's: a request's line, headers and body must arrive within this."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """As the gauge server's: a kept-alive connection idle (or not reading) this long closes."""
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    """As the gauge server's: more request line and headers than this gets 431."""

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise InputError(
                f"port {self.port} is out of range",
                where="--port",
                fix="pass a whole number from 0 to 65535, e.g. --port 8000",
            )
        if (self.gpu, self.model) not in presets():
            known = ", ".join(f"--gpu {g} --model {m}" for g, m in sorted(presets()))
            raise InputError(
                f"no serving preset for GPU {self.gpu!r} and model {self.model!r}",
                where="--gpu/--model",
                fix=f"use one of: {known}",
            )
        for name in ("max_num_seqs", "max_num_batched_tokens", "num_gpu_blocks", "block_size"):
            value = getattr(self, name)
            if value is not None and value < (2 if name == "num_gpu_blocks" else 1):
                flag = "--" + name.replace("_", "-")
                raise InputError(f"{value} is too small", where=flag, fix=f"pass {flag} >= 2")
        if self.log_level not in ("debug", "info", "warning", "error"):
            raise InputError(
                f"unknown log level {self.log_level!r}",
                where="--log-level",
                fix="use one of debug, info, warning, error",
            )
        check_connection_limits(self.header_timeout, self.idle_timeout, self.max_header_bytes)
        if self.step_cost:
            try:
                self.engine()
            except ValueError as error:
                raise InputError(
                    str(error), where="--step-cost", fix="give at least one term a time > 0"
                ) from None
        if self.max_model_len < 2:
            raise InputError(
                "too small", where="--max-model-len", fix="pass --max-model-len >= 2, e.g. 8192"
            )

    @property
    def name(self) -> str:
        return self.served_model_name or self.model

    def engine(self) -> Engine:
        """A fresh engine with the preset's values and the overrides given."""
        chosen = preset(self.gpu, self.model)
        base = chosen.engine_config()
        config = EngineConfig(
            num_gpu_blocks=self.num_gpu_blocks or base.num_gpu_blocks,
            max_num_seqs=self.max_num_seqs or base.max_num_seqs,
            max_num_batched_tokens=self.max_num_batched_tokens or base.max_num_batched_tokens,
            block_size=self.block_size or base.block_size,
        )
        cost = chosen.step_cost()
        terms = {
            "base": cost.base,
            "prefill_token": cost.prefill_token,
            "decode_seq": cost.decode_seq,
            "context_token": cost.context_token,
        }
        terms.update(dict(self.step_cost))
        return Engine(config, StepCost(**terms))


class _Stream:
    """One request's side of the engine: tokens as they are sampled, then the end."""

    __slots__ = ("done", "event", "finish_reason", "tokens")

    def __init__(self) -> None:
        self.tokens = 0
        self.done = False
        self.finish_reason = "length"
        self.event = asyncio.Event()


class EngineLoop:
    """The engine's one task: step, sleep the step's duration, deliver its tokens.

    ``clock`` is the event loop's monotonic time by default; the engine sees seconds on
    it. Metrics are recorded as each step completes.
    """

    def __init__(
        self,
        engine: Engine,
        metrics: ServingMetrics,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.engine = engine
        self.metrics = metrics
        self._clock = clock
        self._streams: dict[str, _Stream] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ids = itertools.count()

    def now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="gpuscale-engine")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def submit(self, prompt_tokens: int, max_tokens: int) -> tuple[str, _Stream]:
        """Queue a request now; ``ValueError`` when it can never fit the KV cache."""
        request_id = f"cmpl-{next(self._ids)}"
        spec = RequestSpec(request_id, self.now(), prompt_tokens, max_tokens, max_tokens=max_tokens)
        self.engine.add(spec)
        stream = _Stream()
        self._streams[request_id] = stream
        self._wake.set()
        return request_id, stream

    def cancel(self, request_id: str) -> None:
        """The client went away: drop the request and free its blocks."""
        stream = self._streams.pop(request_id, None)
        if stream is not None and not stream.done:
            self.engine.abort(request_id, self.now())

    async def _run(self) -> None:
        engine = self.engine
        while True:
            if engine.idle:
                self._wake.clear()
                await self._wake.wait()
            now = max(self.now(), engine.free_at)
            step = engine.step(now)
            if step is None:
                continue
            delay = step.end - self.now()
            if delay > 0:
                await asyncio.sleep(delay)
            self._deliver(step)

    def _deliver(self, step: Step) -> None:
        self.metrics.record(step)
        streams = self._streams
        for request_id, count in step.tokens:
            stream = streams.get(request_id)
            if stream is not None:
                stream.tokens = count
                stream.event.set()
        for result in step.finished:
            stream = streams.pop(result.id, None)
            if stream is not None:
                stream.done = True
                stream.finish_reason = result.finish_reason
                stream.event.set()


class _Collector(Collector):
    """Exposes :class:`ServingMetrics` under vLLM's names at scrape time."""

    def __init__(self, loop: EngineLoop, model_name: str) -> None:
        self._loop = loop
        self._labels = [model_name, "0"]

    def collect(self) -> Any:
        yield self._cache_config()
        metrics = self._loop.metrics
        gauges = metrics.gauges(self._loop.engine)
        counters = metrics.counters()
        histograms = metrics.histograms()
        for spec in METRICS:
            if spec.kind == "gauge":
                gauge = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
                gauge.add_metric(self._labels, gauges[spec.name])
                yield gauge
            elif spec.kind == "counter":
                counter = CounterMetricFamily(spec.name, spec.help, labels=spec.labels)
                if spec.name == "vllm:request_success":
                    for reason, count in metrics.success.items():
                        counter.add_metric([*self._labels, reason], float(count))
                else:
                    counter.add_metric(self._labels, counters[spec.name])
                yield counter
            else:
                data = histograms[spec.name]
                histogram = HistogramMetricFamily(spec.name, spec.help, labels=spec.labels)
                histogram.add_metric(
                    self._labels,
                    [(_bound(b), float(c)) for b, c in data.cumulative()],
                    data.sum,
                )
                yield histogram

    def _cache_config(self) -> GaugeMetricFamily:
        """vLLM's ``vllm:cache_config_info``: 1, the KV cache's settings as labels
        (``CacheConfig.metrics_info``; those the engine model has)."""
        config = self._loop.engine.config
        labels = {
            "block_size": str(config.block_size),
            "cache_dtype": "auto",
            "enable_prefix_caching": "False",
            "num_cpu_blocks": "0",
            "num_gpu_blocks": str(config.num_gpu_blocks),
        }
        family = GaugeMetricFamily(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            labels=list(labels),
        )
        family.add_metric(list(labels.values()), 1.0)
        return family


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(float(value))


def new_llm_registry(loop: EngineLoop, model_name: str) -> CollectorRegistry:
    """A fresh registry exporting the engine's vLLM metrics (one per server or test)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(loop, model_name))
    return registry


class OpenAIError(Exception):
    """An error answer in vLLM's OpenAI shape."""

    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind

    def body(self) -> bytes:
        return json.dumps(
            {"error": {"message": str(self), "type": self.kind, "param": None, "code": self.status}}
        ).encode()


@dataclass(frozen=True, slots=True)
class _Parsed:
    chat: bool
    prompt_tokens: int
    max_tokens: int
    stream: bool
    include_usage: bool
    continuous_usage: bool = False
    """vLLM's ``stream_options.continuous_usage_stats``: usage in every chunk."""


class LlmResponder:
    """Parses OpenAI request bodies and renders answers; the server does the I/O."""

    def __init__(self, config: LlmConfig, loop: EngineLoop) -> None:
        self.config = config
        self.loop = loop
        self.ready = True

    def models(self) -> bytes:
        return json.dumps(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.config.name,
                        "object": "model",
                        "created": int(time.time()),
                        "owned_by": "vllm",
                        "root": self.config.model,
                        "parent": None,
                        "max_model_len": self.config.max_model_len,
                        "permission": [],
                    }
                ],
            }
        ).encode()

    def parse(self, body: bytes, *, chat: bool) -> _Parsed:
        """Check a request body; :class:`OpenAIError` (400/404) names what is wrong."""
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise OpenAIError(400, "the request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise OpenAIError(400, "the request body must be a JSON object")
        model = data.get("model", self.config.name)
        if model != self.config.name:
            raise OpenAIError(404, f"The model `{model}` does not exist.", "NotFoundError")
        if chat:
            prompt_tokens = _chat_tokens(data.get("messages"))
            limit = data.get("max_completion_tokens", data.get("max_tokens"))
            default = CHAT_MAX_TOKENS
        else:
            prompt_tokens = _prompt_tokens(data.get("prompt"))
            limit = data.get("max_tokens")
            default = COMPLETION_MAX_TOKENS
        if limit is None:
            max_tokens = default
        elif isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise OpenAIError(400, "max_tokens must be a whole number >= 1")
        else:
            max_tokens = limit
        if prompt_tokens + max_tokens > self.config.max_model_len:
            raise OpenAIError(
                400,
                f"This model's maximum context length is {self.config.max_model_len} tokens. "
                f"However, you requested {prompt_tokens + max_tokens} tokens "
                f"({prompt_tokens} in the messages, {max_tokens} in the completion).",
            )
        stream = data.get("stream", False)
        if not isinstance(stream, bool):
            raise OpenAIError(400, "stream must be true or false")
        options = data.get("stream_options")
        if options is not None and not stream:
            raise OpenAIError(400, "Stream options can only be defined when `stream=True`.")
        options = options or {}
        if not isinstance(options, dict):
            raise OpenAIError(400, "stream_options must be an object")
        choices = data.get("n", 1)
        if choices is not None and choices != 1:
            raise OpenAIError(
                400, "n must be 1: the emulator generates one choice per request (vLLM allows more)"
            )
        return _Parsed(
            chat,
            prompt_tokens,
            max_tokens,
            stream,
            bool(options.get("include_usage")),
            bool(options.get("continuous_usage_stats")),
        )

    def submit(self, parsed: _Parsed) -> tuple[str, _Stream]:
        try:
            return self.loop.submit(parsed.prompt_tokens, parsed.max_tokens)
        except ValueError as error:
            raise OpenAIError(400, str(error)) from None

    def whole(self, parsed: _Parsed, request_id: str, tokens: int, reason: str) -> bytes:
        text = _text(0, tokens)
        usage = _usage(parsed.prompt_tokens, tokens)
        created = int(time.time())
        if parsed.chat:
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text, "tool_calls": []},
                "logprobs": None,
                "finish_reason": reason,
                "stop_reason": None,
            }
            kind = "chat.completion"
            request_id = "chatcmpl-" + request_id.removeprefix("cmpl-")
        else:
            choice = {
                "index": 0,
                "text": text,
                "logprobs": None,
                "finish_reason": reason,
                "stop_reason": None,
            }
            kind = "text_completion"
        return json.dumps(
            {
                "id": request_id,
                "object": kind,
                "created": created,
                "model": self.config.name,
                "choices": [choice],
                "usage": usage,
            }
        ).encode()

    def chunk(
        self,
        parsed: _Parsed,
        request_id: str,
        start: int,
        end: int,
        reason: str | None,
        *,
        first: bool = False,
    ) -> bytes:
        """One SSE event carrying tokens ``start..end`` (and the finish reason if ended)."""
        text = _text(start, end)
        if parsed.chat:
            delta: dict[str, Any] = {"content": text}
            if first:
                delta = {"role": "assistant", "content": ""}
            choice: dict[str, Any] = {
                "index": 0,
                "delta": delta,
                "logprobs": None,
                "finish_reason": reason,
            }
            kind = "chat.completion.chunk"
            request_id = "chatcmpl-" + request_id.removeprefix("cmpl-")
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": reason}
            kind = "text_completion"
        payload: dict[str, Any] = {
            "id": request_id,
            "object": kind,
            "created": int(time.time()),
            "model": self.config.name,
            "choices": [choice],
        }
        if parsed.continuous_usage:
            payload["usage"] = _usage(parsed.prompt_tokens, end)
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    def usage_chunk(self, parsed: _Parsed, request_id: str, tokens: int) -> bytes:
        kind = "chat.completion.chunk" if parsed.chat else "text_completion"
        if parsed.chat:
            request_id = "chatcmpl-" + request_id.removeprefix("cmpl-")
        payload = {
            "id": request_id,
            "object": kind,
            "created": int(time.time()),
            "model": self.config.name,
            "choices": [],
            "usage": _usage(parsed.prompt_tokens, tokens),
        }
        return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
    }


def _text(start: int, end: int) -> str:
    return "".join(" " + _WORDS[i % len(_WORDS)] for i in range(start, end))


def _text_tokens(text: str) -> int:
    return max(1, -(-len(text.encode("utf-8")) // 4))


def _prompt_tokens(prompt: object) -> int:
    """Tokens of ``prompt``: a string, a list of token ids, or a one-element list of either."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]
    if isinstance(prompt, str):
        if not prompt:
            raise OpenAIError(400, "prompt must not be empty")
        return _text_tokens(prompt)
    if isinstance(prompt, list) and prompt:
        if all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in prompt):
            return len(prompt)
        raise OpenAIError(400, "a token-id prompt must be a list of whole numbers >= 0")
    if prompt is None:
        raise OpenAIError(400, "prompt is required")
    raise OpenAIError(400, "prompt must be a string or a non-empty list of token ids")


def _chat_tokens(messages: object) -> int:
    if not isinstance(messages, list) or not messages:
        raise OpenAIError(400, "messages must be a non-empty list")
    total = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise OpenAIError(400, f"messages[{index}] must be an object with a role")
        content = message.get("content", "")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if not isinstance(content, str):
            raise OpenAIError(400, f"messages[{index}].content must be a string")
        total += 4 + (_text_tokens(content) if content else 0)
    return total


def llm_config_from_flags(
    *,
    host: str,
    port: str | None,
    log_level: str,
    grace_period: float,
    flags: dict[str, str | None],
    header_timeout: str = "10s",
    idle_timeout: str = "60s",
    max_header_bytes: str = str(DEFAULT_MAX_HEADER_BYTES),
) -> LlmConfig:
    """An :class:`LlmConfig` from the command line's strings; ``InputError`` names the flag."""
    numbers: dict[str, int | None] = {}
    for name in ("max_num_seqs", "max_num_batched_tokens", "num_gpu_blocks", "block_size"):
        numbers[name] = _whole(flags.get(name), "--" + name.replace("_", "-"))
    max_model_len = _whole(flags.get("max_model_len"), "--max-model-len")
    step_cost = parse_step_cost(flags.get("step_cost"))
    header, idle, size = connection_limits_from_flags(
        header_timeout, idle_timeout, max_header_bytes
    )
    return LlmConfig(
        host=host,
        port=DEFAULT_LLM_PORT if port is None else _port(port),
        gpu=(flags.get("gpu") or "l40s").strip().lower(),
        model=(flags.get("model") or "llama-3.1-8b").strip().lower(),
        served_model_name=flags.get("served_model_name"),
        max_model_len=8192 if max_model_len is None else max_model_len,
        step_cost=step_cost,
        header_timeout=header,
        idle_timeout=idle,
        max_header_bytes=size,
        log_level=log_level.strip().lower(),
        grace_period=grace_period,
        **numbers,
    )


_TERMS = ("base", "prefill_token", "decode_seq", "context_token")


def parse_step_cost(text: str | None) -> tuple[tuple[str, float], ...]:
    """``base=0.02,decode_seq=5e-4`` as ``(("base", 0.02), ("decode_seq", 0.0005))``.

    Each term at most once, each value a finite number >= 0 (Python float syntax);
    :class:`InputError` names ``--step-cost`` and the offending part."""
    if text is None:
        return ()
    fix = "write TERM=SECONDS,... with TERM one of base, prefill_token, decode_seq, context_token"
    found: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        name = name.strip()
        if not sep or name not in _TERMS:
            raise InputError(f"{part.strip()!r} is not TERM=SECONDS", where="--step-cost", fix=fix)
        if name in found:
            raise InputError(f"{name} given twice", where="--step-cost", fix=fix)
        try:
            number = float(value.strip())
        except ValueError:
            number = -1.0
        if not 0 <= number < float("inf"):
            raise InputError(
                f"{name}={value.strip()!r} is not a finite number >= 0",
                where="--step-cost",
                fix="e.g. --step-cost base=0.02,decode_seq=0.0005",
            )
        found[name] = number
    return tuple(found.items())


def _whole(text: str | None, flag: str) -> int | None:
    if text is None:
        return None
    stripped = text.strip()
    if not stripped.isascii() or not stripped.isdigit():
        raise InputError(f"{text!r} is not a whole number", where=flag, fix=f"e.g. {flag} 256")
    return int(stripped)


def _port(text: str) -> int:
    value = _whole(text, "--port")
    assert value is not None
    return value
