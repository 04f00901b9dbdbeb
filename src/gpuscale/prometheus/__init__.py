"""Talking to and running a real Prometheus: an HTTP API client (httpx) and a launcher for
the Debian ``prometheus`` binary on loopback, plus ``promtool`` backfills.

This is the I/O edge of the PromQL work: ``gpuscale.promql`` evaluates queries in process;
this package asks a real server the same questions (the live commands and the differential
tests that prove the engine).
"""

from gpuscale.prometheus.client import PrometheusClient, Target
from gpuscale.prometheus.server import (
    MINIMAL_CONFIG,
    PrometheusServer,
    create_blocks_from_openmetrics,
    find_binary,
    prometheus_version,
)

__all__ = [
    "MINIMAL_CONFIG",
    "PrometheusClient",
    "PrometheusServer",
    "Target",
    "create_blocks_from_openmetrics",
    "find_binary",
    "prometheus_version",
]
