"""The engine's records: its settings, the step cost, a request as it arrives and as it
ended, one step's events, and a request's mutable state inside the engine
(:mod:`gpuscale.serving._engine` runs them; ``docs/serving.md``). Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "EngineConfig",
    "RequestResult",
    "RequestSpec",
    "Step",
    "StepCost",
    "check_tokens",
    "step_work",
]


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """The engine settings of one replica (vLLM's flags of the same names)."""

    num_gpu_blocks: int
    """KV-cache blocks in the pool, vLLM's null block included (``--num-gpu-blocks-override``
    or what the memory profile left after weights)."""
    max_num_seqs: int = 256
    """Most requests running at once (``--max-num-seqs``; vLLM's default 256 on GPUs)."""
    max_num_batched_tokens: int = 2048
    """Token budget of one step (``--max-num-batched-tokens``; vLLM sizes the default by
    GPU and usage context, 2048 for the OpenAI server on most GPUs)."""
    block_size: int = 16
    """Tokens per KV block (``--block-size``, 16 by default on CUDA and ROCm)."""

    def __post_init__(self) -> None:
        for name in ("num_gpu_blocks", "max_num_seqs", "max_num_batched_tokens", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, not {value!r}")
        if self.num_gpu_blocks < 2:
            raise ValueError("num_gpu_blocks must be >= 2 (one is vLLM's null block)")

    @property
    def usable_blocks(self) -> int:
        """Blocks requests can hold: the pool minus the null block."""
        return self.num_gpu_blocks - 1


@dataclass(frozen=True, slots=True)
class StepCost:
    """Seconds one engine step takes, as a linear function of its work.

    ``base + prefill_token * prefill tokens + decode_seq * decoding sequences +
    context_token * context tokens``, where context tokens are every scheduled request's
    tokens in the KV cache after the step (what attention reads). The decode-bound part
    (``base``) is reading the weights once; ``context_token`` reading the KV cache.
    """

    base: float
    """Seconds of a step whatever its size (weights read once, launch overhead)."""
    prefill_token: float
    """Seconds per prompt token computed (compute-bound matmuls)."""
    decode_seq: float
    """Seconds per decoding sequence (sampling, per-sequence kernels)."""
    context_token: float
    """Seconds per token of context attended (KV-cache reads)."""

    def __post_init__(self) -> None:
        for name in ("base", "prefill_token", "decode_seq", "context_token"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.base <= 0 and self.prefill_token <= 0 and self.decode_seq <= 0:
            raise ValueError("a step must take time: set base, prefill_token or decode_seq > 0")

    def seconds(self, prefill_tokens: int, decode_seqs: int, context_tokens: int) -> float:
        """Duration of a step with this work (one expression, so every path agrees)."""
        return (
            self.base
            + self.prefill_token * prefill_tokens
            + self.decode_seq * decode_seqs
            + self.context_token * context_tokens
        )


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request as it reaches the engine."""

    id: str
    arrival: float
    """Seconds (the caller's clock) at which it entered the waiting queue."""
    prompt_tokens: int
    output_tokens: int
    """Tokens it generates before it stops (``max_tokens`` when it runs to the limit)."""
    max_tokens: int | None = None
    """The request's ``max_tokens``; when equal to ``output_tokens`` it ends in ``length``."""
    deadline: float | None = None
    """Absolute time after which it is aborted if unfinished (a client timeout)."""

    def __post_init__(self) -> None:
        check_tokens(self.id, self.prompt_tokens, self.output_tokens)


def check_tokens(request_id: str, prompt_tokens: int, output_tokens: int) -> None:
    """A request's lengths, refused unless at least one token each."""
    if prompt_tokens < 1:
        raise ValueError(f"request {request_id}: prompt_tokens must be >= 1")
    if output_tokens < 1:
        raise ValueError(f"request {request_id}: output_tokens must be >= 1")


class RequestResult(NamedTuple):
    """How one request ended: vLLM's per-request timings (``vllm/v1/metrics/stats.py``).

    Immutable like the frozen dataclasses of the other records, but a named tuple: the
    engine makes one a request, and a frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` call a field) costs about 1.3 µs against 0.3 µs, several
    percent of a ``vllm`` trace replay (``docs/benchmarks/serving.md``)."""

    id: str
    arrival: float
    finished: float
    finish_reason: str
    """``stop``, ``length`` or ``abort`` (vLLM's ``FinishReason`` strings)."""
    prompt_tokens: int
    output_tokens: int
    """Tokens generated (fewer than asked when aborted)."""
    first_scheduled: float | None
    first_token: float | None
    preemptions: int

    @property
    def timed_out(self) -> bool:
        return self.finish_reason == "abort"

    @property
    def queue_time(self) -> float | None:
        """Arrival to first scheduled (``vllm:request_queue_time_seconds``)."""
        return None if self.first_scheduled is None else self.first_scheduled - self.arrival

    @property
    def ttft(self) -> float | None:
        """Arrival to first token (``vllm:time_to_first_token_seconds``)."""
        return None if self.first_token is None else self.first_token - self.arrival

    @property
    def e2e(self) -> float:
        """Arrival to finish (``vllm:e2e_request_latency_seconds``)."""
        return self.finished - self.arrival

    @property
    def mean_itl(self) -> float | None:
        """Mean time between tokens after the first (vLLM's per-request TPOT)."""
        if self.first_token is None or self.output_tokens < 2:
            return None
        return (self.finished - self.first_token) / (self.output_tokens - 1)


class _Request:
    """A request's mutable state inside the engine (vLLM's ``Request``), with its
    :class:`RequestSpec`'s fields copied in (one attribute away on the hot paths, and the
    simulator need not build the spec: :meth:`Engine.arrive`)."""

    __slots__ = (
        "arrival",
        "blocks",
        "computed",
        "deadline",
        "ended",
        "first_scheduled",
        "first_token",
        "id",
        "last_token",
        "max_tokens",
        "output",
        "output_tokens",
        "preemptions",
        "prompt_tokens",
    )

    def __init__(
        self,
        request_id: str,
        arrival: float,
        prompt_tokens: int,
        output_tokens: int,
        *,
        max_tokens: int | None,
        deadline: float | None,
    ) -> None:
        self.id = request_id
        self.arrival = arrival
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.max_tokens = max_tokens
        self.deadline = deadline
        self.computed = 0
        self.output = 0
        self.blocks = 0
        self.ended = False
        self.preemptions = 0
        self.first_scheduled: float | None = None
        self.first_token: float | None = None
        self.last_token: float | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.output


def step_work(scheduled: list[tuple[_Request, int]]) -> tuple[int, int, int]:
    """What a step's scheduled requests cost it, as :meth:`StepCost.seconds` takes it:
    (prompt tokens computed, decoding sequences, context tokens after the step). A
    request scheduled one token that is its next output token decodes; any other
    scheduled tokens are prefill (a chunk, or a resumed request's recompute)."""
    prefill = decode = context = 0
    for request, new in scheduled:
        reached = request.computed + new
        if new == 1 and request.output > 0 and reached == request.prompt_tokens + request.output:
            decode += 1
        else:
            prefill += new
        context += reached
    return prefill, decode, context


@dataclass(frozen=True, slots=True)
class Step:
    """What one engine step (or a run of identical decode steps) did."""

    start: float
    end: float
    steps: int
    """Engine steps covered: 1, or more for an aggregated run of decode-only steps."""
    prefill_tokens: int
    decode_seqs: int
    """Decoding sequences, summed over the steps covered (per step for a single one)."""
    context_tokens: int
    """Context tokens attended, summed over the steps covered."""
    tokens: tuple[tuple[str, int], ...] = ()
    """(request id, tokens generated so far) for every token sampled at ``end`` (single
    steps only: an aggregated run reports ``generated`` and ``itl`` instead)."""
    generated: int = 0
    """Tokens sampled in total."""
    first_tokens: tuple[float, ...] = ()
    """TTFT of each request that got its first token."""
    itl: tuple[tuple[float, int], ...] = ()
    """(inter-token interval, how many tokens had it) for tokens after a request's first."""
    prompt_tokens_counted: int = 0
    """Prompt tokens of requests that got their first token (``vllm:prompt_tokens``)."""
    finished: tuple[RequestResult, ...] = ()
    preempted: tuple[str, ...] = ()
    admitted: tuple[str, ...] = ()
    """Requests scheduled for the first time (their queue time ends at ``start``)."""


@dataclass(slots=True)
class _Counts:
    """Totals since the engine started, for tests and the metrics."""

    steps: int = 0
    preemptions: int = 0
    generated: int = 0
    results: list[RequestResult] = field(default_factory=list)
    busy_closed: float = 0.0
    """Seconds of the busy periods before the current one."""
    busy_start: float = 0.0
    busy_end: float = 0.0
    """The current busy period (steps back to back, each starting as the last ended)."""

    def busy(self, start: float, end: float) -> None:
        """Account busy time from ``start`` (a step's start) to ``end``: the current period
        goes on when ``start`` is its end, else a new one begins."""
        if start != self.busy_end:
            self.busy_closed += self.busy_end - self.busy_start
            self.busy_start = start
        self.busy_end = end

    @property
    def busy_seconds(self) -> float:
        """Seconds the engine spent in steps: the busy periods' lengths summed (one float
        subtraction per period, so the aggregate batch need not add every step's)."""
        return self.busy_closed + (self.busy_end - self.busy_start)
