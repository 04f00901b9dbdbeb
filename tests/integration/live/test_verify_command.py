"""``gpuscale verify`` end to end: the fake API server, a real Prometheus behind a port-forward.

Two real Prometheus processes (Debian's, on loopback) scrape what the cluster would let
them scrape: for the tutorial's broken chain, only kube-state-metrics (its
ServiceMonitor's job exists but its namespace selector finds no Service, so it has no
targets); for the fixed chain, the workload's pod too, with the labels
prometheus-operator's relabelling puts on it. The fake API server holds the same
objects as ``tests/integration/live/chain.py`` and forwards ``prometheus-operated`` to
the real Prometheus; verify must fail exactly the links the tutorial breaks.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from gpuscale.cli import verify_cmd
from gpuscale.cli.main import main
from gpuscale.errors import RetryableError
from gpuscale.live.verify import KEDA_CRDS, METRICS_APISERVICE
from tests.integration.cloud.fake_do import TOKEN as DO_TOKEN
from tests.integration.cloud.fake_do import FakeDigitalOcean, FakeTransport
from tests.integration.live import chain as c
from tests.integration.live import objects as o
from tests.integration.live.conftest import Stack
from tests.integration.live.fake_kube import FakeKube

pytestmark = pytest.mark.integration


def _cluster(kube: FakeKube, stack: Stack, *, drop: tuple[str, ...] = ()) -> None:
    stack.install(kube, drop=drop)


def _verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["verify", *argv, "-o", "json"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def _statuses(doc: dict) -> list[tuple[str, str]]:
    return [(check["check"], check["status"]) for check in doc["checks"]]


def test_the_tutorials_chain_fails_the_servicemonitor_and_the_query(
    fake_kube: FakeKube, stacks: dict[bool, Stack], capsys: pytest.CaptureFixture[str]
) -> None:
    stack = stacks[False]
    _cluster(fake_kube, stack)
    code, doc, err = _verify(capsys, stack.state.path, "-n", c.APP_NS)
    assert code == 1, err
    assert [name for name, status in _statuses(doc) if status == "fail"] == [
        "trigger query",
        "ServiceMonitor target",
    ]
    assert ("ScaledObject Active", "warn") in _statuses(doc)
    assert {s for _, s in _statuses(doc)} <= {"pass", "fail", "warn"}
    by_name = {check["check"]: check for check in doc["checks"]}
    assert (
        by_name["trigger query"]["evidence"] == "no series (ignoreNullValues: true): KEDA reads 0"
    )
    assert "is in gpu-demo, so nothing is scraped" in by_name["ServiceMonitor target"]["evidence"]
    assert by_name["Prometheus"]["evidence"].startswith(
        "service/kube-system/prometheus-operated:9090 via port-forward: Prometheus 2."
    )
    assert doc["ok"] is False
    # Read-only: only GETs reached the API server; Prometheus through a port-forward.
    assert {s.method for s in fake_kube.seen} == {"GET"}
    assert ("kube-system", c.PROM_POD, 9090) in fake_kube.forwards


def test_the_fixed_chain_passes(
    fake_kube: FakeKube, stacks: dict[bool, Stack], capsys: pytest.CaptureFixture[str]
) -> None:
    stack = stacks[True]
    _cluster(fake_kube, stack)
    code, doc, err = _verify(capsys, stack.state.path)
    assert code == 0, err
    assert {status for _, status in _statuses(doc)} == {"pass"}, doc
    by_name = {check["check"]: check for check in doc["checks"]}
    assert by_name["trigger query"]["evidence"] == (
        "1 series, value 40; KEDA reads 40 (threshold 80)"
    )
    assert by_name["ServiceMonitor target"]["evidence"] == (
        f"1/1 up: http://{c.APP_POD_ADDRESS}/metrics"
    )
    assert doc["summary"] == "14 checks: 14 pass, 0 fail, 0 warn, 0 skip"


def test_the_text_table_and_an_explicit_prometheus_url(
    fake_kube: FakeKube,
    stacks: dict[bool, Stack],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(verify_cmd, "runtime", verify_cmd.VerifyRuntime(tty=False))
    stack = stacks[False]
    _cluster(fake_kube, stack)
    code = main(["verify", stack.state.path, "-n", c.APP_NS, "--prometheus", stack.url])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert [cell.strip() for cell in lines[1].split("┃")[1:5]] == [
        "CHECK",
        "STATUS",
        "EVIDENCE",
        "FIX",
    ]
    assert f"{stack.url}: Prometheus 2." in out
    assert lines[-1] == "14 checks: 11 pass, 2 fail, 1 warn, 0 skip"
    assert not [f for f in fake_kube.forwards if f[0] == "kube-system"]


def test_gpu_capacity_from_the_doks_node_pools(
    fake_kube: FakeKube,
    stacks: dict[bool, Stack],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    stack = stacks[True]
    _cluster(fake_kube, stack, drop=("gpu-node-1",))
    do = FakeDigitalOcean()
    do.add_cluster(
        "gpu-cluster",
        pools=[
            {"name": "gpu", "size": "gpu-mi300x1-192gb", "count": 0, "auto_scale": True,
             "min_nodes": 0, "max_nodes": 2},
            {"name": "general", "size": "s-4vcpu-8gb", "count": 1},
        ],
    )  # fmt: skip
    monkeypatch.setattr(
        verify_cmd,
        "runtime",
        verify_cmd.VerifyRuntime(
            do_transport=FakeTransport(do), environ={"DIGITALOCEAN_ACCESS_TOKEN": DO_TOKEN}
        ),
    )
    profile = "examples/tutorial-fixed/gpuscale.yaml"
    code, doc, err = _verify(capsys, stack.state.path, "--profile", profile)
    assert code == 0, err
    gpu = next(check for check in doc["checks"] if check["check"] == "GPU capacity")
    assert gpu["status"] == "pass"
    assert gpu["evidence"] == (
        "no Ready node has 1 amd.com/gpu allocatable; pool gpu can grow 0 -> 2 nodes of 1 "
        "amd.com/gpu (DigitalOcean)"
    )
    assert do.calls() == [("GET", "/v2/kubernetes/clusters?per_page=200&page=1")]
    assert DO_TOKEN not in json.dumps(doc) + err
    # Without a token the profile's pools are used, and the check says it is unverified.
    monkeypatch.setattr(verify_cmd, "runtime", verify_cmd.VerifyRuntime(environ={}))
    code, doc, _ = _verify(capsys, stack.state.path, "--profile", profile)
    gpu = next(check for check in doc["checks"] if check["check"] == "GPU capacity")
    assert gpu["status"] == "warn"
    assert "pool gpu can grow 0 -> 8 nodes" in gpu["evidence"]
    assert "no DigitalOcean token" in gpu["evidence"]
    del tmp_path


def test_missing_keda_and_a_forbidden_read_are_reported_not_raised(
    fake_kube: FakeKube, stacks: dict[bool, Stack], capsys: pytest.CaptureFixture[str]
) -> None:
    stack = stacks[True]
    _cluster(fake_kube, stack)
    for doc in o.KEDA_CRDS:
        fake_kube.delete(doc)
    fake_kube.denied["/api/v1/nodes"] = 403
    code, doc, _ = _verify(capsys, stack.state.path)
    assert code == 1
    by_name = {check["check"]: check for check in doc["checks"]}
    assert by_name["KEDA CRDs"]["status"] == "fail"
    assert by_name["KEDA CRDs"]["fix"].startswith("run gpuscale install")
    assert by_name["GPU capacity"]["status"] == "error"
    assert "nodes is forbidden" in by_name["GPU capacity"]["evidence"]


def test_an_unreachable_api_server_is_one_line_not_a_table(
    stacks: dict[bool, Stack],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # A real refused port on loopback: bound, never listening.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        server = f"https://127.0.0.1:{closed.getsockname()[1]}"
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
            "users: [{name: u, user: {token: not-printed-token}}]\n"
            "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
            "current-context: x\n",
            encoding="utf-8",
        )
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        code = main(["verify", stacks[True].state.path, "-o", "json"])
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("gpuscale: error: ")
    assert f"cannot reach the Kubernetes API server {server}" in lines[0]
    assert "(fix: check the network and the kubeconfig's server address" in lines[0]
    assert code == RetryableError("").exit_code
    assert "not-printed-token" not in out.err


@pytest.mark.parametrize("code", [403, 500])
def test_reads_that_failed_are_errors_with_the_reason_never_verdicts(
    code: int, fake_kube: FakeKube, stacks: dict[bool, Stack], capsys: pytest.CaptureFixture[str]
) -> None:
    stack = stacks[True]
    _cluster(fake_kube, stack)
    ns = c.APP_NS
    for path in (
        *(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{n}" for n in KEDA_CRDS),
        f"/apis/apiregistration.k8s.io/v1/apiservices/{METRICS_APISERVICE}",
        f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects/{c.APP}",
        f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/keda-hpa-{c.APP}",
        f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors/{c.APP}",
        f"/apis/apps/v1/namespaces/{ns}/deployments/{c.APP}",
        f"/api/v1/namespaces/{stack.state.prom_ns}/services/prometheus-operated",
    ):
        fake_kube.denied[path] = code
    code_, doc, _ = _verify(capsys, stack.state.path)
    assert code_ == 1, "checks that could not be made must not pass verify"
    assert doc["ok"] is False
    said = "not allowed" if code == 403 else "the API server answered 500"
    by_name = {check["check"]: check for check in doc["checks"]}
    for name in (
        "KEDA CRDs",
        "external metrics API",
        "ScaledObject Ready",
        "ScaledObject Active",
        "HPA",
        "Prometheus",
        "ServiceMonitor selected",
        "ServiceMonitor target",
        "Pending pods",
    ):
        check = by_name[name]
        assert check["status"] == "error", check
        assert check["evidence"].startswith("could not read: "), check
        assert said in check["evidence"], check
    assert not [check for check in doc["checks"] if check["status"] == "fail"]
