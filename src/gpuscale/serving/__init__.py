"""The serving models: how an LLM server turns requests into tokens, time and metrics.

Pure (no clock, no I/O): the simulator runs them in virtual time, ``gpuscale app --serve
llm`` in real time. The pieces:

- :mod:`._engine`: :class:`Engine`, one vLLM replica step by step (continuous batching,
  chunked prefill, a paged KV cache with recompute preemption), after vLLM's v1
  scheduler and KV cache manager;
- :mod:`._metrics`: :data:`METRICS` and :class:`ServingMetrics`, vLLM's Prometheus
  families as data (names, types, labels, buckets) and their values;
- :mod:`.presets`: engine settings and step costs per catalogue GPU and open model, each
  value with its source, all approximate.

The model, its citations and what is approximate are described in ``docs/serving.md``.
"""

from gpuscale.serving._engine import (
    Engine,
    EngineConfig,
    RequestResult,
    RequestSpec,
    Step,
    StepCost,
    replay,
)
from gpuscale.serving._metrics import (
    E2E_BUCKETS,
    ITL_BUCKETS,
    METRICS,
    TTFT_BUCKETS,
    Histogram,
    MetricSpec,
    ServingMetrics,
)

__all__ = [
    "E2E_BUCKETS",
    "ITL_BUCKETS",
    "METRICS",
    "TTFT_BUCKETS",
    "Engine",
    "EngineConfig",
    "Histogram",
    "MetricSpec",
    "RequestResult",
    "RequestSpec",
    "ServingMetrics",
    "Step",
    "StepCost",
    "replay",
]
