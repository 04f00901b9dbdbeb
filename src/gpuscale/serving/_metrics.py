"""vLLM's Prometheus metrics as data: names, types, labels, buckets, and their values.

Transcribed from ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger.__init__`` and
``record``) of the v0.11 line (vllm-project/vllm@005a810b for the deprecated
``vllm:gpu_cache_usage_perc`` and ``vllm:time_per_output_token_seconds``, which that line
still exports beside their replacements). Every series carries the labels
``model_name`` (the served model name) and ``engine`` (the engine-core index, ``"0"``
for one engine per server); ``vllm:request_success`` adds ``finished_reason``.

What each value counts follows ``vllm/v1/metrics/stats.py``: ``vllm:prompt_tokens`` adds
a request's prompt length once, in the step that produces its first token (a preempted
request's recompute is not counted again); ``vllm:generation_tokens`` one per token
sampled; ``vllm:time_to_first_token_seconds`` arrival to first token;
``vllm:inter_token_latency_seconds`` every interval between a request's consecutive
tokens; ``vllm:request_queue_time_seconds`` arrival to first scheduled; the e2e
histogram arrival to finish. Requests aborted on a deadline are left out of
``vllm:request_success`` and the per-request histograms (vLLM records finished requests
only through the engine's outputs) and counted in :attr:`ServingMetrics.timed_out`.

:class:`ServingMetrics` is plain data a simulator reads as series and an exporter turns
into a ``/metrics`` page (``gpuscale.app._llm`` does, with prometheus_client).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Literal

from gpuscale.serving._engine import Engine, Step

__all__ = [
    "E2E_BUCKETS",
    "ITL_BUCKETS",
    "METRICS",
    "TTFT_BUCKETS",
    "Histogram",
    "MetricSpec",
    "ServingMetrics",
]

TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
    7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
ITL_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
    10.0, 20.0, 40.0, 80.0,
)  # fmt: skip
E2E_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
"""vLLM's ``request_latency_buckets``, shared by the e2e and queue-time histograms."""

LABELS = ("model_name", "engine")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One vLLM metric family as ``/metrics`` shows it."""

    name: str
    """The name without the ``_total`` suffix prometheus_client adds to counters."""
    kind: Literal["gauge", "counter", "histogram"]
    help: str
    labels: tuple[str, ...] = LABELS
    buckets: tuple[float, ...] = ()


METRICS = (
    MetricSpec(
        "vllm:num_requests_running", "gauge", "Number of requests in model execution batches."
    ),
    MetricSpec("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
    MetricSpec("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."),
    MetricSpec(
        "vllm:gpu_cache_usage_perc",
        "gauge",
        "GPU KV-cache usage. 1 means 100 percent usage."
        "DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
    ),
    MetricSpec(
        "vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine."
    ),
    MetricSpec("vllm:prompt_tokens", "counter", "Number of prefill tokens processed."),
    MetricSpec("vllm:generation_tokens", "counter", "Number of generation tokens processed."),
    MetricSpec(
        "vllm:request_success",
        "counter",
        "Count of successfully processed requests.",
        (*LABELS, "finished_reason"),
    ),
    MetricSpec(
        "vllm:time_to_first_token_seconds",
        "histogram",
        "Histogram of time to first token in seconds.",
        buckets=TTFT_BUCKETS,
    ),
    MetricSpec(
        "vllm:inter_token_latency_seconds",
        "histogram",
        "Histogram of inter-token latency in seconds.",
        buckets=ITL_BUCKETS,
    ),
    MetricSpec(
        "vllm:time_per_output_token_seconds",
        "histogram",
        "Histogram of time per output token in seconds."
        "DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
        buckets=ITL_BUCKETS,
    ),
    MetricSpec(
        "vllm:e2e_request_latency_seconds",
        "histogram",
        "Histogram of e2e request latency in seconds.",
        buckets=E2E_BUCKETS,
    ),
    MetricSpec(
        "vllm:request_queue_time_seconds",
        "histogram",
        "Histogram of time spent in WAITING phase for request.",
        buckets=E2E_BUCKETS,
    ),
)
"""The families gpuscale models, in ``/metrics`` order."""

FINISH_REASONS = ("stop", "length", "abort")
"""vLLM's ``FinishReason`` strings; ``request_success`` has a series for each from start."""


@dataclass(slots=True)
class Histogram:
    """Prometheus histogram state: non-cumulative counts per bucket plus ``+Inf``."""

    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    sum: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.buckets) + 1)

    def observe_each(self, values: list[float] | tuple[float, ...]) -> None:
        """Add each value once, in order (a bucket's bound is inclusive, ``le``; the sum
        grows value by value, as one observation after another would)."""
        counts, buckets = self.counts, self.buckets
        total = self.sum
        for value in values:
            counts[bisect_left(buckets, value)] += 1
            total += value
        self.sum = total
        self.count += len(values)

    def observe_all(self, pairs: tuple[tuple[float, int], ...]) -> None:
        """Add each ``value`` ``times`` times, pair by pair in order (the sum grows by
        ``value * times`` a pair)."""
        counts, buckets = self.counts, self.buckets
        total, count = self.sum, self.count
        for value, times in pairs:
            counts[bisect_left(buckets, value)] += times
            total += value * times
            count += times
        self.sum, self.count = total, count

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, cumulative count) pairs ending with ``(inf, count)``."""
        total = 0
        out = []
        for bound, count in zip((*self.buckets, float("inf")), self.counts, strict=True):
            total += count
            out.append((bound, total))
        return out

    def quantile(self, q: float) -> float | None:
        """``histogram_quantile(q, ...)`` as Prometheus computes it (linear in a bucket)."""
        if self.count == 0:
            return None
        rank = q * self.count
        total = 0
        lower = 0.0
        for bound, count in zip(self.buckets, self.counts, strict=False):
            if total + count >= rank and count > 0:
                return lower + (bound - lower) * (rank - total) / count
            total += count
            lower = bound
        return self.buckets[-1]


@dataclass(slots=True)
class ServingMetrics:
    """The values of :data:`METRICS` for one engine, fed step by step.

    Gauges are read from the engine when asked (:meth:`gauges`); counters and histograms
    accumulate from :meth:`record` calls. One object per replica.
    """

    model_name: str
    engine: str = "0"
    preemptions: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    success: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FINISH_REASONS, 0))
    timed_out: int = 0
    ttft: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(ITL_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(E2E_BUCKETS))
    queue_time: Histogram = field(default_factory=lambda: Histogram(E2E_BUCKETS))

    def record(self, step: Step) -> None:
        """Account one :class:`Step` (single or aggregated) as vLLM's ``record`` does."""
        self.preemptions += len(step.preempted)
        self.prompt_tokens += step.prompt_tokens_counted
        self.generation_tokens += step.generated
        if step.first_tokens:
            self.ttft.observe_each(step.first_tokens)
        if step.itl:
            self.itl.observe_all(step.itl)
        if not step.finished:
            return
        e2e: list[float] = []
        queued: list[float] = []
        success = self.success
        for result in step.finished:
            if result.timed_out:
                self.timed_out += 1
                continue
            success[result.finish_reason] += 1
            e2e.append(result.e2e)
            queue_time = result.queue_time
            if queue_time is not None:
                queued.append(queue_time)
        self.e2e.observe_each(e2e)
        self.queue_time.observe_each(queued)

    @staticmethod
    def gauges(engine: Engine) -> dict[str, float]:
        """The gauge values now, by metric name."""
        usage = engine.kv_cache_usage
        return {
            "vllm:num_requests_running": float(engine.num_running),
            "vllm:num_requests_waiting": float(engine.num_waiting),
            "vllm:kv_cache_usage_perc": usage,
            "vllm:gpu_cache_usage_perc": usage,
        }

    def histograms(self) -> dict[str, Histogram]:
        """Histogram values by metric name (the deprecated TPOT shares the ITL data)."""
        return {
            "vllm:time_to_first_token_seconds": self.ttft,
            "vllm:inter_token_latency_seconds": self.itl,
            "vllm:time_per_output_token_seconds": self.itl,
            "vllm:e2e_request_latency_seconds": self.e2e,
            "vllm:request_queue_time_seconds": self.queue_time,
        }

    def counters(self) -> dict[str, float]:
        """Counter values by name (without ``_total``); ``request_success`` is separate."""
        return {
            "vllm:num_preemptions": float(self.preemptions),
            "vllm:prompt_tokens": float(self.prompt_tokens),
            "vllm:generation_tokens": float(self.generation_tokens),
        }
