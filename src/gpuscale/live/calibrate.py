"""``gpuscale calibrate URL``: measure an OpenAI-compatible server, fit its step cost.

The I/O half of calibration (the fit is :mod:`gpuscale.serving.calibration`):

- :func:`check_target`: loopback only unless the caller allows remote targets; a URL
  with credentials in it is refused (they would end up in the profile's ``source``).
- :func:`measure`: runs the planned sweep with httpx, one point at a time, each point's
  requests sent together and streamed (``/v1/completions`` with a token-id prompt of
  exactly the planned length, ``max_tokens`` and vLLM's ``min_tokens``/``ignore_eos`` so
  the output is exactly the planned length too, and vLLM's ``continuous_usage_stats`` so
  each chunk says how many tokens it completes). Every chunk's arrival is timed with
  the monotonic clock. Bounded by a request budget (checked before anything is sent)
  and a deadline (the measurements made so far are kept).
- :func:`write_calibration`: the fitted terms and the fit's quality into the profile's
  ``workloads.<name>.serving`` with ruamel.yaml's round trip, so comments and order stay.

No token (the API key) is ever printed: it is registered with the redactor, and every
error text from the server passes through it.
"""

from __future__ import annotations

import asyncio
import io
import ipaddress
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from gpuscale._redact import redact, register
from gpuscale.errors import InputError, UnavailableError
from gpuscale.live._openai import Streamed, completion_body, stream_completion
from gpuscale.serving.calibration import TERMS, CalibrationFit, Observation, SweepPoint

__all__ = [
    "Measured",
    "cache_config",
    "check_target",
    "measure",
    "served_model",
    "write_calibration",
]

_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


def check_target(url: str, *, allow_remote: bool) -> str:
    """The base URL (no trailing ``/``, no ``/v1``); :class:`InputError` names the problem."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"{url!r} is not an http(s) URL", where="URL", fix="e.g. http://127.0.0.1:8000"
        )
    if parts.username or parts.password:
        raise InputError(
            "the URL carries credentials",
            where="URL",
            fix="drop user:password@ from it and pass --api-key (or GPUSCALE_LLM_API_KEY)",
        )
    host = parts.hostname
    if not allow_remote and not _loopback(host):
        raise InputError(
            f"{host} is not a loopback address: calibrate sends hundreds of requests",
            where="URL",
            fix="pass --allow-remote to measure a server you run, or use 127.0.0.1",
        )
    path = parts.path.rstrip("/").removesuffix("/v1")
    return f"{parts.scheme}://{parts.netloc}{path}"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _headers(api_key: str | None) -> dict[str, str]:
    if api_key is None:
        return {}
    register(api_key)
    return {"Authorization": f"Bearer {api_key}"}


_CACHE_INFO = re.compile(r"^vllm:cache_config_info\{([^}]*)\}", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


async def cache_config(base: str, api_key: str | None) -> dict[str, int]:
    """``num_gpu_blocks`` and ``block_size`` from vLLM's ``vllm:cache_config_info``
    on ``/metrics`` (empty when the server does not export it)."""
    async with httpx.AsyncClient(timeout=_TIMEOUT, headers=_headers(api_key)) as client:
        try:
            response = await client.get(f"{base}/metrics")
        except httpx.HTTPError:
            return {}
    found = _CACHE_INFO.search(response.text) if response.status_code == 200 else None
    if found is None:
        return {}
    labels = dict(_LABEL.findall(found.group(1)))
    out = {}
    for name in ("num_gpu_blocks", "block_size"):
        value = labels.get(name, "")
        if value.isdigit() and int(value) >= 1:
            out[name] = int(value)
    return out


async def served_model(base: str, api_key: str | None) -> str:
    """The first model ``GET /v1/models`` lists."""
    async with httpx.AsyncClient(timeout=_TIMEOUT, headers=_headers(api_key)) as client:
        answer = await _get(client, f"{base}/v1/models")
    models = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(models, list) or not models or not isinstance(models[0], dict):
        raise UnavailableError(f"{base}/v1/models lists no model", fix="pass --model NAME")
    return str(models[0].get("id"))


async def _get(client: httpx.AsyncClient, url: str) -> Any:
    try:
        response = await client.get(url)
    except httpx.HTTPError as error:
        raise UnavailableError(
            f"cannot reach {url}: {redact(str(error)) or type(error).__name__}",
            fix="check that the server runs and the URL's host and port",
        ) from None
    if response.status_code != 200:
        raise UnavailableError(
            f"{url} answered {response.status_code}: {redact(response.text[:200])}",
            fix="check the URL and --api-key",
        )
    try:
        return response.json()
    except ValueError:
        raise UnavailableError(f"{url} did not answer JSON", fix="check the URL") from None


@dataclass(frozen=True)
class Measured:
    """What a sweep measured: the fit's inputs and a throughput figure per ITL point."""

    observations: tuple[Observation, ...]
    requests: int
    throughput: tuple[tuple[int, int, float], ...]
    """``(concurrency, prompt tokens, output tokens per second)`` of each ITL point."""
    complete: bool
    """False when the deadline stopped the sweep early."""


async def _one(
    client: httpx.AsyncClient, base: str, model: str, point: SweepPoint, token_id: int
) -> Streamed:
    body = completion_body(model, point.prompt_tokens, point.output_tokens, token_id=token_id)
    try:
        record = await stream_completion(
            client, f"{base}/v1/completions", body, clock=time.perf_counter
        )
    except httpx.HTTPError as error:
        raise UnavailableError(
            f"the request to {base} failed: {redact(str(error)) or type(error).__name__}",
            fix="check that the server still runs",
        ) from None
    if record.status != 200:
        raise UnavailableError(
            f"POST /v1/completions answered {record.status}: {redact(record.body[:300])}",
            fix="check --model, the server's max_model_len and --max-prompt-tokens",
        )
    return record


async def _point(
    client: httpx.AsyncClient, base: str, model: str, point: SweepPoint, seed: int
) -> tuple[Observation | None, float | None]:
    streams = await asyncio.gather(
        *(
            _one(client, base, model, point, 1000 + (seed + i) % 20000)
            for i in range(point.concurrency)
        )
    )
    if point.kind == "ttft":
        stream = streams[0]
        if not stream.chunks:
            return None, None
        return Observation("ttft", stream.chunks[0][0] - stream.sent, 1, point.prompt_tokens), None
    if any(len(s.chunks) < 2 for s in streams):
        return None, None
    start = max(s.chunks[0][0] for s in streams)
    end = min(s.chunks[-1][0] for s in streams)
    spans, tokens, contexts = [], [], []
    for stream in streams:
        inside = [(t, n) for t, n in stream.chunks if start <= t <= end]
        if len(inside) < 2 or inside[-1][1] <= inside[0][1]:
            continue
        spans.append(inside[-1][0] - inside[0][0])
        generated = inside[-1][1] - inside[0][1]
        tokens.append(generated)
        # Steps in the window attend prompt + tokens so far: k from the first count on.
        contexts.append(point.prompt_tokens + (inside[0][1] + inside[-1][1] - 1) / 2)
    if not spans:
        return None, None
    itl = sum(spans) / sum(tokens)
    context = len(streams) * sum(contexts) / len(contexts)
    first = min(s.sent for s in streams)
    last = max(s.chunks[-1][0] for s in streams)
    rate = sum(s.chunks[-1][1] for s in streams) / (last - first)
    return Observation("itl", itl, point.concurrency, point.prompt_tokens, context), rate


async def measure(
    base: str,
    model: str,
    plan: Sequence[SweepPoint],
    *,
    api_key: str | None,
    max_time: float,
    progress: Callable[[str], None],
) -> Measured:
    """Run ``plan`` against ``base`` within ``max_time`` seconds."""
    observations: list[Observation] = []
    throughput: list[tuple[int, int, float]] = []
    sent = 0
    limits = httpx.Limits(max_connections=max(p.concurrency for p in plan) + 4)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_time
    complete = True
    async with httpx.AsyncClient(
        timeout=_TIMEOUT, headers=_headers(api_key), limits=limits
    ) as client:
        for index, point in enumerate(plan, 1):
            left = deadline - loop.time()
            if left <= 0:
                complete = False
                break
            try:
                obs, rate = await asyncio.wait_for(
                    _point(client, base, model, point, sent), timeout=left
                )
            except TimeoutError:
                complete = False
                break
            sent += point.requests
            if obs is None:
                progress(f"calibrate: [{index}/{len(plan)}] {_label(point)}: no usable tokens")
                continue
            observations.append(obs)
            extra = ""
            if rate is not None:
                throughput.append((point.concurrency, point.prompt_tokens, rate))
                extra = f", {rate:.0f} tokens/s"
            progress(
                f"calibrate: [{index}/{len(plan)}] {_label(point)}: "
                f"{obs.kind} {obs.seconds * 1000:.2f} ms{extra}"
            )
    return Measured(tuple(observations), sent, tuple(throughput), complete)


def _label(point: SweepPoint) -> str:
    return (
        f"{point.kind} concurrency {point.concurrency}, prompt {point.prompt_tokens}, "
        f"output {point.output_tokens}"
    )


def _number(value: float) -> float | int:
    """Four significant digits; a whole number (a token count) without ``.0``."""
    rounded = float(f"{value:.4g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) >= 1 else rounded


def write_calibration(
    text: str | None,
    workload: str,
    fit: CalibrationFit,
    *,
    source: str,
    date: str,
    preset: str | None = None,
    cache: dict[str, int] | None = None,
) -> str:
    """``text`` (a profile, or ``None`` for a new one) with ``workloads.<workload>.serving``
    holding ``kind: vllm``, the fitted ``step_cost`` and its ``calibration`` (and ``preset``
    when given and none is written, else the server's ``cache`` settings when neither a
    preset nor ``num_gpu_blocks`` is); every other
    key, comment and the order kept (ruamel.yaml round trip)."""
    from ruamel.yaml import YAML  # noqa: PLC0415 - only when writing
    from ruamel.yaml.comments import CommentedMap, CommentedSeq  # noqa: PLC0415

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    document = yaml.load(text) if text and text.strip() else None
    if document is None:
        document = CommentedMap()
    workloads = document.setdefault("workloads", CommentedMap())
    entry = workloads.get(workload)
    if entry is None:
        entry = workloads[workload] = CommentedMap()
    serving = entry.get("serving")
    if serving is None:
        serving = entry["serving"] = CommentedMap()
    serving["kind"] = "vllm"
    if preset is not None and serving.get("preset") is None:
        serving["preset"] = preset
    if serving.get("preset") is None and serving.get("num_gpu_blocks") is None:
        for name, value in (cache or {}).items():
            serving[name] = value
    cost = CommentedMap()
    for name in TERMS:
        cost[name] = _number(getattr(fit.cost, name))
    serving["step_cost"] = cost
    calibration = CommentedMap()
    calibration["date"] = date
    calibration["source"] = source
    calibration["residuals"] = CommentedMap(
        (kind, _number(value)) for kind, value in fit.residuals.items()
    )
    ranges = CommentedMap()
    for name, (low, high) in fit.ranges.items():
        pair = CommentedSeq([_number(low), _number(high)])
        pair.fa.set_flow_style()
        ranges[name] = pair
    calibration["range"] = ranges
    serving["calibration"] = calibration
    serving.yaml_set_comment_before_after_key(
        "step_cost", before=f"measured by gpuscale calibrate on {date}", indent=6
    )
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()
