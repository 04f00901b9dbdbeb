"""``deploy --dry-run=server`` and ``verify`` against a real cluster (``KUBECONFIG`` set).

Skipped without ``KUBECONFIG`` (``tests/conftest.py``). Nothing is stored: the deploy is a
server dry run (``dryRun=All``), and verify only reads. Optional environment:

- ``GPUSCALE_TEST_NAMESPACE`` (default ``default``): where the example's objects are
  dry-run applied when its own namespace (``gpu-demo``) does not exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.live.discovery import Discovery
from gpuscale.live.kube import Kube, connect

pytestmark = pytest.mark.cluster

FIXED = Path("examples/tutorial-fixed")
NAMESPACE = os.environ.get("GPUSCALE_TEST_NAMESPACE", "default")
STATUSES = {"pass", "fail", "warn", "skip"}


@pytest.fixture(scope="module")
def kube() -> Kube:
    api, target = connect()
    return Kube(api, target)


def _manifests(kube: Kube, tmp_path: Path) -> Path:
    """The fixed example, moved to ``NAMESPACE`` when ``gpu-demo`` does not exist."""
    if kube.get_json("/api/v1/namespaces/gpu-demo", what="namespace", missing_ok=True):
        return FIXED
    moved = tmp_path / "resources.yaml"
    moved.write_text(
        (FIXED / "resources.yaml").read_text().replace("gpu-demo", NAMESPACE), encoding="utf-8"
    )
    return moved


def test_discovery_serves_the_core_kinds(kube: Kube) -> None:
    discovery = Discovery(kube)
    deployments = discovery.resource("apps/v1", "Deployment")
    assert deployments is not None
    assert (deployments.plural, deployments.namespaced) == ("deployments", True)
    namespaces = discovery.resource("v1", "Namespace")
    assert namespaces is not None
    assert not namespaces.namespaced


def test_server_dry_run_of_the_fixed_example_stores_nothing(
    kube: Kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keda = Discovery(kube).resource("keda.sh/v1alpha1", "ScaledObject")
    code = main(["deploy", str(_manifests(kube, tmp_path)), "--dry-run=server", "-o", "json"])
    out = capsys.readouterr()
    if keda is None:
        assert code == 1
        assert "gpuscale install" in out.err
        return
    assert code == 0, out.err
    results = json.loads(out.out)
    assert [r["name"].split("/")[0] for r in results] == [
        "service",
        "deployment.apps",
        "servicemonitor.monitoring.coreos.com",
        "scaledobject.keda.sh",
    ]
    assert {r["dry_run"] for r in results} == {"server"}
    assert {r["action"] for r in results} <= {"created", "configured", "unchanged"}


def test_verify_reads_every_link_and_answers_with_a_table(
    kube: Kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del kube
    code = main(["verify", str(FIXED), "-o", "json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    doc = json.loads(out.out)
    assert doc["ok"] is (code == 0)
    names = [check["check"] for check in doc["checks"]]
    assert names[:4] == [
        "KEDA CRDs",
        "KEDA operator",
        "KEDA metrics server",
        "external metrics API",
    ]
    assert {check["status"] for check in doc["checks"]} <= STATUSES
    for check in doc["checks"]:
        if check["status"] == "fail":
            assert check["fix"], f"{check['check']} fails without a fix"
    del tmp_path
