"""The live commands' checks against a real cluster (``KUBECONFIG`` set), read-only.

Skipped without ``KUBECONFIG`` (``tests/conftest.py``). Optional environment:

- ``GPUSCALE_TEST_NAMESPACE`` (default ``default``)
- ``GPUSCALE_TEST_DEPLOYMENT``: a Deployment to snapshot and ``watch --once``
- ``GPUSCALE_TEST_PORTFORWARD=1``: also open a port-forward to one of its pods and read
  ``/metrics`` (read-only; the gauge is never set by this suite)

Nothing here creates, changes or deletes anything.
"""

from __future__ import annotations

import os

import httpx
import pytest
from rich.console import Console

from gpuscale.cli.main import main
from gpuscale.live.kube import Kube, connect
from gpuscale.live.load import container_port, deployment_selector, pick_pod
from gpuscale.live.portforward import PortForwarder
from gpuscale.live.watch import WatchState, advance, build_snapshot, node_state, render
from gpuscale.timeline import NODE_STATES, encode_record

pytestmark = pytest.mark.cluster

NAMESPACE = os.environ.get("GPUSCALE_TEST_NAMESPACE", "default")
DEPLOYMENT = os.environ.get("GPUSCALE_TEST_DEPLOYMENT")


@pytest.fixture(scope="module")
def kube() -> Kube:
    api, target = connect()
    return Kube(api, target)


def test_the_kubeconfig_connects_and_lists_nodes(kube: Kube) -> None:
    nodes = kube.nodes()
    assert nodes, "a cluster has at least one node"
    for node in nodes:
        assert node_state(node) in NODE_STATES


def test_namespaced_reads_answer(kube: Kube) -> None:
    assert isinstance(kube.deployments(NAMESPACE), list)
    assert isinstance(kube.hpas(NAMESPACE), list)
    assert isinstance(kube.events(NAMESPACE), list)
    assert isinstance(kube.scaled_objects(NAMESPACE), list)  # empty without KEDA


@pytest.mark.skipif(DEPLOYMENT is None, reason="set GPUSCALE_TEST_DEPLOYMENT")
def test_a_snapshot_of_the_deployment_becomes_a_record(kube: Kube) -> None:
    assert DEPLOYMENT is not None
    deployment = kube.deployment(NAMESPACE, DEPLOYMENT)
    snap = build_snapshot(
        t=0.0,
        namespace=NAMESPACE,
        deployment=deployment,
        pods=kube.pods(NAMESPACE, deployment_selector(deployment)),
        nodes=kube.nodes(),
        scaled_objects=kube.scaled_objects(NAMESPACE),
        hpas=kube.hpas(NAMESPACE),
        events=kube.events(NAMESPACE),
    )
    _, record = advance(WatchState(), snap)
    assert record is not None
    assert record.workloads[0].name == f"{NAMESPACE}/{DEPLOYMENT}"
    assert encode_record(record)
    console = Console(record=True, width=160, color_system=None)
    console.print(render(snap))
    assert f"deployment/{NAMESPACE}/{DEPLOYMENT}" in console.export_text()


@pytest.mark.skipif(DEPLOYMENT is None, reason="set GPUSCALE_TEST_DEPLOYMENT")
def test_watch_once_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert DEPLOYMENT is not None
    assert main(["watch", "--once", "-n", NAMESPACE, "-d", DEPLOYMENT]) == 0
    assert f"deployment/{NAMESPACE}/{DEPLOYMENT}" in capsys.readouterr().out


@pytest.mark.skipif(
    DEPLOYMENT is None or os.environ.get("GPUSCALE_TEST_PORTFORWARD") != "1",
    reason="set GPUSCALE_TEST_DEPLOYMENT and GPUSCALE_TEST_PORTFORWARD=1",
)
def test_port_forward_reads_metrics_from_a_pod(kube: Kube) -> None:
    assert DEPLOYMENT is not None
    deployment = kube.deployment(NAMESPACE, DEPLOYMENT)
    pod = pick_pod(kube.pods(NAMESPACE, deployment_selector(deployment)), None, where="test")
    port = container_port(deployment) or 8080
    with PortForwarder(kube, NAMESPACE, pod, port) as forward:
        response = httpx.get(f"{forward.url}/metrics", timeout=30)
    assert response.status_code == 200
    assert "# TYPE" in response.text
