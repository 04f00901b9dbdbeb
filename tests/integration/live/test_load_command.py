"""``gpuscale load`` end to end: the official Kubernetes client, a fake API server on
loopback (real port-forward WebSocket streams) and real HTTP pods on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from tests.integration.live import objects as o
from tests.integration.live.conftest import PodServer
from tests.integration.live.fake_kube import TOKEN, FakeKube

pytestmark = pytest.mark.integration


def _tutorial(kube: FakeKube, pods: dict[str, PodServer], *, ready: set[str] | None = None) -> None:
    kube.put(o.deployment(spec=len(pods), status=len(pods), ready=len(ready or pods)))
    for i, (name, server) in enumerate(sorted(pods.items())):
        kube.put(o.pod(name, ready=ready is None or name in ready,
                       created=f"2026-11-30T10:00:0{i}Z"))  # fmt: skip
        kube.pod_backend(o.NS, name, 8080, server.address)


def test_value_sets_the_gauge_on_the_oldest_ready_pod(
    fake_kube: FakeKube, pod_server: Callable[..., PodServer], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = pod_server(), pod_server()
    _tutorial(fake_kube, {"app-a": first, "app-b": second})
    assert main(["load", "--value", "160"]) == 0
    out = capsys.readouterr().out
    assert out == "set value 160 on pod/demo/app-a:8080 (Hello, from the handler!)\n"
    assert first.gauge == 160.0
    assert first.requests == [("/?value=160", None)]
    assert second.requests == []
    assert [(s.path, s.query) for s in fake_kube.seen] == [
        ("/apis/apps/v1/namespaces/demo/deployments", {}),
        ("/apis/apps/v1/namespaces/demo/deployments/go-from-configmap", {}),
        ("/api/v1/namespaces/demo/pods", {"labelSelector": "app=go-from-configmap"}),
        ("/api/v1/namespaces/demo/pods/app-a/portforward", {"ports": "8080"}),
        ("/api/v1/namespaces/demo/pods/app-a/portforward", {"ports": "8080"}),
    ]
    assert all(s.headers["authorization"] == f"Bearer {TOKEN}" for s in fake_kube.seen)


def test_value_sends_the_setter_token_and_never_prints_it(
    fake_kube: FakeKube,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "s3cr3t-setter-token"
    pod = pod_server(token=secret)
    _tutorial(fake_kube, {"app-a": pod})
    assert main(["load", "--value", "90", "-d", "go-from-configmap"]) == 2
    refused = capsys.readouterr()
    assert "--setter-token: the workload wants its setter token" in refused.err
    monkeypatch.setenv("GPUSCALE_SETTER_TOKEN", secret)
    assert main(["load", "--value", "90", "-d", "go-from-configmap", "-o", "json"]) == 0
    done = capsys.readouterr()
    assert json.loads(done.out)["answer"] == "Hello, from the handler!"
    assert pod.requests[-1] == ("/?value=90", f"Bearer {secret}")
    assert pod.gauge == 90.0
    assert secret not in refused.out + refused.err + done.out + done.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--value", "nan"], "--value: 'nan' is not finite; KEDA reads NaN/Inf as 0"),
        (["--value", "lots"], "--value: 'lots' is not a number"),
        (["--value", "1", "--rate", "2"], "choose one of --value, --rate or --trace"),
        (["--rate", "2"], "--rate needs --for"),
        (["--value", "1", "--pod", "app-z"], "--pod: pod 'app-z' is not one of"),
        (["--value", "1", "-d", "nope"], "deployment/demo/nope: not found"),
    ],
)
def test_bad_requests_are_one_line_input_errors(
    fake_kube: FakeKube,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    pod = pod_server()
    _tutorial(fake_kube, {"app-a": pod})
    assert main(["load", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert pod.requests == []


def test_no_ready_pod_says_to_wait(
    fake_kube: FakeKube, pod_server: Callable[..., PodServer], capsys: pytest.CaptureFixture[str]
) -> None:
    _tutorial(fake_kube, {"app-a": pod_server()}, ready=set())
    assert main(["load", "--value", "160"]) == 1
    assert "no Ready pod (1 pods, none Running and Ready)" in capsys.readouterr().err


def test_without_deployment_flag_several_deployments_are_listed(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_kube.put(o.deployment("alpha"))
    fake_kube.put(o.deployment("beta"))
    assert main(["load", "--value", "1"]) == 2
    assert "namespace demo has 2 Deployments (alpha, beta)" in capsys.readouterr().err


def test_expired_cluster_credentials_say_how_to_refresh(
    fake_kube: FakeKube, tmp_path: object, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from pathlib import Path

    stale = fake_kube.write_kubeconfig(Path(str(tmp_path)) / "stale", token="expired")
    monkeypatch.setenv("KUBECONFIG", str(stale))
    assert main(["load", "--value", "1", "-n", "demo", "-d", "x"]) == 1
    err = capsys.readouterr().err
    assert "the API server rejected the credentials (Unauthorized)" in err
    assert "gpuscale cluster kubeconfig --merge" in err


def test_a_pod_port_with_nothing_listening_is_reported(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_kube.put(o.deployment())
    fake_kube.put(o.pod("app-a"))  # no backend: kubelet reports connection refused
    assert main(["load", "--value", "160"]) == 1
    err = capsys.readouterr().err
    assert "pod/demo/app-a:8080: the request to the pod failed" in err


def test_rate_spreads_requests_over_the_services_ready_pods(
    fake_kube: FakeKube, pod_server: Callable[..., PodServer], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = pod_server(), pod_server(), pod_server()
    _tutorial(fake_kube, {"app-a": a, "app-b": b, "app-c": c})
    fake_kube.put(o.service())
    fake_kube.put(o.endpoint_slice([("app-a", True), ("app-b", True), ("app-c", False)]))
    code = main(["load", "--rate", "40", "--for", "0.5s", "--path", "/?value=7", "-o", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["planned"], report["sent"], report["ok"]) == (20, 20, 20)
    assert report["http_errors"] == {}
    assert report["failures"] == {}
    assert report["latency_seconds"]["p50"] > 0
    assert (len(a.requests), len(b.requests), len(c.requests)) == (10, 10, 0)
    assert {r[0] for r in a.requests + b.requests} == {"/?value=7"}
    assert (
        "/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices",
        {"labelSelector": "kubernetes.io/service-name=go-from-configmap"},
    ) in [(s.path, s.query) for s in fake_kube.seen]


def test_rate_with_no_ready_endpoint_fails_fast(
    fake_kube: FakeKube, pod_server: Callable[..., PodServer], capsys: pytest.CaptureFixture[str]
) -> None:
    _tutorial(fake_kube, {"app-a": pod_server()})
    fake_kube.put(o.service())
    fake_kube.put(o.endpoint_slice([("app-a", False)]))
    assert main(["load", "--rate", "5", "--for", "10s"]) == 1
    assert "service/demo/go-from-configmap has no ready endpoints" in capsys.readouterr().err


def test_trace_replay_uses_the_shared_trace_reader(
    fake_kube: FakeKube,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
    tmp_path: object,
) -> None:
    pytest.importorskip("gpuscale.sim.traces", reason="the shared trace reader is not merged yet")
    from pathlib import Path

    trace = Path(str(tmp_path)) / "t.csv"
    trace.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:17:03.9799600,4808,10\n"
        "2023-11-16 18:17:04.0319600,3180,8\n"
        "2023-11-16 18:17:04.2319600,100,3\n",
        encoding="utf-8",
    )
    pod = pod_server()
    _tutorial(fake_kube, {"app-a": pod})
    fake_kube.put(o.service())
    fake_kube.put(o.endpoint_slice([("app-a", True)]))
    code = main(["load", "--trace", str(trace), "--path", "/?value={output_tokens}", "-o", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["ok"] == 3
    assert [r[0] for r in pod.requests] == ["/?value=10", "/?value=8", "/?value=3"]


def _trace_file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["--rate", "0", "--for", "1m"], "--rate"),
        (["--rate", "-3", "--for", "1m"], "--rate"),
        (["--rate", "inf", "--for", "1m"], "--rate"),
        (["--rate", "5", "--for", "0s"], "--for"),
        (["--rate", "5", "--for", "ten minutes"], "--for"),
        (["--rate", "5", "--for", "1m", "--timeout", "soon"], "--timeout"),
        (["--rate", "5", "--for", "1m", "--refresh", "0s"], "--refresh"),
        (["--rate", "5", "--for", "1m", "--concurrency", "0"], "--concurrency"),
        (["--rate", "5", "--for", "1m", "-o", "yaml"], "--output"),
        (["--rate", "5", "--for", "1m", "--pod", "app-a"], "--pod"),
        (["--rate", "5", "--for", "1m", "--speed", "2"], "--speed"),
        (["--value", "1", "--for", "1m"], "--for"),
        (["--value", "1", "--service", "svc"], "--service"),
        (["--value", "1", "--concurrency", "4"], "--concurrency"),
        (["--trace", "{missing}"], "{missing}"),
        (["--trace", "{garbage}"], "{garbage}"),
        (["--trace", "{good}", "--speed", "0"], "--speed"),
        (["--trace", "{good}", "--port", "80"], "--port"),
        (["--value", "1", "--trace", "{good}"], "gpuscale load"),
        ([], "gpuscale load"),
    ],
)
def test_every_flag_is_checked_before_the_cluster_is_contacted(
    fake_kube: FakeKube,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
    where: str,
) -> None:
    files = {
        "missing": str(tmp_path / "no-such-trace.csv"),
        "garbage": _trace_file(tmp_path, "garbage.csv", "this is not,a trace\n1,2\n"),
        "good": _trace_file(
            tmp_path,
            "good.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n",
        ),
    }
    args = [a.format(**files) for a in argv]
    assert main(["load", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"gpuscale: error: {where.format(**files)}"), err
    assert fake_kube.seen == []


def test_a_setter_token_flag_is_warned_about_and_never_printed(
    fake_kube: FakeKube, pod_server: Callable[..., PodServer], capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "flag-s3cr3t"
    pod = pod_server(token=secret)
    _tutorial(fake_kube, {"app-a": pod})
    assert main(["load", "--value", "7", "--setter-token", secret]) == 0
    out = capsys.readouterr()
    assert pod.requests[-1] == ("/?value=7", f"Bearer {secret}")
    warnings = [line for line in out.err.splitlines() if line.startswith("gpuscale: warning:")]
    assert warnings == [
        "gpuscale: warning: --setter-token's value shows in process listings (ps); set "
        "GPUSCALE_SETTER_TOKEN instead"
    ]
    assert secret not in out.out + out.err


def test_a_setter_token_from_the_environment_is_not_warned_about(
    fake_kube: FakeKube,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pod = pod_server(token="env-token")
    _tutorial(fake_kube, {"app-a": pod})
    monkeypatch.setenv("GPUSCALE_SETTER_TOKEN", "env-token")
    assert main(["load", "--value", "7"]) == 0
    assert "warning" not in capsys.readouterr().err
