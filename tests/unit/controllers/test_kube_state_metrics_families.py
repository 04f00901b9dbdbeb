"""``kube_state_metrics.FAMILIES`` names exactly what the series functions return, so a
scraper that stores only the queried names keeps every series it needs."""

from __future__ import annotations

from gpuscale.controllers import kube_state_metrics as ksm


def test_families_are_the_names_the_series_functions_return() -> None:
    series = [
        *ksm.deployment_series(ksm.DeploymentStatus("n", "d", 1, 1, 1, 1, 1)),
        *ksm.pod_series(
            ksm.PodInfo(
                "n", "p", "u", "Running", True, True, "node", "1.1.1.1", "2.2.2.2", "R", "r"
            )
        ),
        *ksm.node_series(ksm.NodeInfo("node", {"a": "b"}, "1.1.1.1", "id"), ("a",)),
    ]
    assert {name for name, _, _ in series} == ksm.FAMILIES
