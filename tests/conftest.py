"""Shared test configuration: tiers and the markers that gate them.

- ``tests/unit``: pure, fast, no processes, no network.
- ``tests/integration``: real processes on loopback (Prometheus, the workload server,
  promtool) and faked cloud/Kubernetes HTTP. Marked ``integration``.
- ``tests/cluster``: a real cluster (``KUBECONFIG``) or DigitalOcean account
  (``DIGITALOCEAN_ACCESS_TOKEN``); skipped when those are not set.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _forget_secrets() -> None:
    """Each test starts with no registered secret (gpuscale._redact is process-wide)."""
    from gpuscale._redact import forget_all

    forget_all()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    no_cluster = pytest.mark.skip(reason="needs a real cluster: set KUBECONFIG")
    no_token = pytest.mark.skip(reason="needs a DigitalOcean token: set DIGITALOCEAN_ACCESS_TOKEN")
    for item in items:
        # get_closest_marker, not ``in item.keywords``: keywords also hold package names,
        # and every test under tests/cluster/ would count as marked ``cluster``.
        if item.get_closest_marker("cluster") and not os.environ.get("KUBECONFIG"):
            item.add_marker(no_cluster)
        if item.get_closest_marker("digitalocean") and not os.environ.get(
            "DIGITALOCEAN_ACCESS_TOKEN"
        ):
            item.add_marker(no_token)
