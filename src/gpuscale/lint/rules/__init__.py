"""Every lint rule. Importing this package registers them all in the catalogue.

One module per subject: ``queries`` (what the trigger's PromQL computes),
``scaledobject`` (its settings, KEDA's verdict on them and its relation to other
autoscalers), ``capacity`` (the target workload, GPU capacity, timing), ``servicemonitor``
(does the metric get scraped), ``workload`` (pod specs: GPUs, node selection,
tolerations, start-up), ``objects`` (any object: its schema, defined twice) and
``simulated`` (what a short simulation proves: the replica count flaps) and ``llm``
(the signals an LLM server is scaled by).
:data:`ORDER` fixes the catalogue's order: the rules of issue 6 first, then the ones
added since.
"""

from __future__ import annotations

from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint.rules import (
    capacity,
    llm,
    objects,
    queries,
    scaledobject,
    servicemonitor,
    simulated,
    workload,
)
from gpuscale.lint.rules.objects import SCHEMA_RULE

__all__ = ["ORDER", "SCHEMA_RULE", "catalogue"]

_MODULES = (capacity, llm, objects, queries, scaledobject, servicemonitor, simulated, workload)

ORDER = (
    "query-divides-by-replicas",
    "replica-count-includes-pending",
    "cooldown-has-no-effect",
    "servicemonitor-namespace-mismatch",
    "servicemonitor-selects-nothing",
    "servicemonitor-not-selected",
    "scaledobject-target-missing",
    "hpa-and-scaledobject",
    "query-unaggregated",
    "query-unscoped",
    "null-values-ignored",
    "activation-above-threshold",
    "polling-faster-than-scrape",
    "scale-to-zero-slow-start",
    "max-exceeds-gpu-capacity",
    "gpu-node-selector",
    "gpu-toleration-missing",
    "unneeded-toleration",
    "gpu-requests-limits",
    "compile-at-start",
    "flaps-under-steady-load",
    "query-invalid",
    "rate-window-too-short",
    "trigger-metadata-not-string",
    "metricname-ignored",
    "prometheus-address-namespace",
    "prometheus-in-kube-system",
    "replica-bounds-invalid",
    "polling-interval-has-no-effect",
    "scaledobjects-share-target",
    "servicemonitor-honor-labels",
    "no-readiness-probe",
    "kv-cache-only-trigger",
    "gpu-utilization-trigger-llm",
    "llm-scale-to-zero-no-wait",
    "vllm-metric-not-exported",
    "scaledobject-invalid",
    SCHEMA_RULE,
    "duplicate-object",
)
"""The catalogue's order (a test checks it names every registered rule once)."""


def catalogue() -> list[Rule]:
    """Every rule, in catalogue order."""
    return [REGISTRY[slug] for slug in ORDER if slug in REGISTRY]
