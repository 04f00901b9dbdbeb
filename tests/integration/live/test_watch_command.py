"""``gpuscale watch`` end to end: the fake API server changes as a scripted scale-up
unfolds on an injected clock, and the trigger query is answered by a real Prometheus
reached through a port-forward to the in-cluster Service the ScaledObject names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpuscale.cli import watch_cmd
from gpuscale.cli.main import main
from gpuscale.timeline import decode_lines
from tests.integration.live import objects as o
from tests.integration.live.conftest import PodServer, RealPrometheus
from tests.integration.live.fake_kube import FakeKube

pytestmark = pytest.mark.integration

PROM_ADDRESS = "http://prometheus-operated.monitoring.svc.cluster.local:9090"


class ScriptedClock:
    """Moves only when slept; applies the scenario's steps as their time comes."""

    def __init__(self, steps: dict[float, Callable[[], None]]) -> None:
        self.now = 0.0
        self.steps = dict(sorted(steps.items()))

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        for at in [t for t in self.steps if t <= self.now]:
            self.steps.pop(at)()


def _cluster(kube: FakeKube, prometheus: RealPrometheus, app: PodServer) -> None:
    kube.put(o.deployment())
    kube.put(o.pod("go-from-configmap-7d9f8-a1"))
    kube.pod_backend(o.NS, "go-from-configmap-7d9f8-a1", 8080, app.address)
    kube.put(o.node("gpu-node-1"))
    kube.put(o.node("general-1", pool="general", gpus=0))
    so = o.scaled_object(server=PROM_ADDRESS)
    so["spec"]["triggers"][0]["metadata"]["query"] = "sum(my_custom_gauge)"
    kube.put(so)
    kube.put(o.hpa(value="160", desired=1))
    kube.put({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "prometheus-operated", "namespace": "monitoring"},
        "spec": {"clusterIP": "None",
                 "ports": [{"name": "web", "port": 9090, "targetPort": "web"}]},
    })  # fmt: skip
    kube.put({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "prometheus-operated-abcde", "namespace": "monitoring",
                     "labels": {"kubernetes.io/service-name": "prometheus-operated"}},
        "ports": [{"name": "web", "port": 9090}],
        "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": True},
                       "targetRef": {"kind": "Pod", "name": "prometheus-prometheus-0",
                                     "namespace": "monitoring"}}],
    })  # fmt: skip
    kube.put(o.pod("prometheus-prometheus-0", app="prometheus", ns="monitoring"))
    host, port = prometheus.url.removeprefix("http://").split(":")
    kube.pod_backend("monitoring", "prometheus-prometheus-0", 9090, (host, int(port)))


def _scale_up(kube: FakeKube) -> None:
    kube.put(o.deployment(spec=2, status=2, ready=1))
    kube.put(o.hpa(value="160", desired=2))
    kube.put(
        o.pod(
            "go-from-configmap-7d9f8-b2",
            node=None,
            phase="Pending",
            ready=False,
            unschedulable="0/2 nodes are available: 1 Insufficient amd.com/gpu.",
        )
    )
    kube.put(
        o.event(
            "hpa.1",
            reason="SuccessfulRescale",
            kind="HorizontalPodAutoscaler",
            obj="keda-hpa-go-from-configmap",
            message="New size: 2; reason: above target",
            at="2026-11-30T10:00:30Z",
        )
    )
    kube.put(o.event("pod.1", reason="TriggeredScaleUp", kind="Pod",
                     obj="go-from-configmap-7d9f8-b2", component="cluster-autoscaler",
                     message="pod triggered scale-up: [{gpu 1->2 (max: 2)}]",
                     at="2026-11-30T10:00:31Z"))  # fmt: skip


def _node_ready(kube: FakeKube) -> None:
    kube.put(o.node("gpu-node-2"))
    kube.put(o.pod("go-from-configmap-7d9f8-b2", node="gpu-node-2"))
    kube.put(o.deployment(spec=2, status=2, ready=2))


@pytest.fixture
def tutorial(
    fake_kube: FakeKube, real_prometheus: RealPrometheus, pod_server: Callable[..., PodServer]
) -> FakeKube:
    """The tutorial's objects in the fake API server, Prometheus behind its Service."""
    _cluster(fake_kube, real_prometheus, pod_server())
    return fake_kube


def test_watch_writes_the_live_timeline_with_the_real_query_value(
    tutorial: FakeKube,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_kube = tutorial
    fake_kube.put(o.event("old.1", reason="ScalingReplicaSet", kind="Deployment", obj=o.APP,
                          message="Scaled up replica set go-from-configmap-7d9f8 to 1",
                          at="2026-11-30T09:00:00Z"))  # fmt: skip
    clock = ScriptedClock({4.0: lambda: _scale_up(fake_kube), 8.0: lambda: _node_ready(fake_kube)})
    monkeypatch.setattr(
        watch_cmd, "runtime", watch_cmd.WatchRuntime(clock=clock, sleep=clock.sleep, tty=False)
    )
    profile = tmp_path / "gpuscale.yaml"
    profile.write_text(
        "node_pools:\n"
        "  - {name: gpu, size: gpu-mi300x1-192gb, max_nodes: 2, price_per_hour: 1.99}\n"
        "  - {name: general, size: s-4vcpu-8gb, count: 1, price_per_hour: 0.07143}\n",
        encoding="utf-8",
    )
    out_file = tmp_path / "live.jsonl"
    code = main(["watch", "--timeline", str(out_file), "--interval", "2s", "--for", "10s",
                 "--profile", str(profile)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    timeline = decode_lines(out_file.read_text().splitlines(), source=str(out_file))
    assert timeline.header.world == "live"
    assert timeline.header.pools["gpu"] == {"price_per_hour": 1.99, "gpus_per_node": 1.0}
    assert timeline.header.meta["deployment"] == "demo/go-from-configmap"
    assert [r.t for r in timeline.records] == [0.0, 4.0, 8.0]
    first, scaled, ready = timeline.records
    assert first.workloads[0].metrics == {"query:s0-prometheus": 160.0, "hpa:s0-prometheus": 160.0}
    assert first.decisions == ()
    assert (scaled.workloads[0].spec, scaled.workloads[0].desired) == (2, 2)
    assert dict(scaled.workloads[0].pods) == {"Pending": 1, "Ready": 1}
    assert [(d.controller, d.reason) for d in scaled.decisions] == [
        ("hpa", "SuccessfulRescale"),
        ("cluster-autoscaler", "TriggeredScaleUp"),
    ]
    assert dict(ready.workloads[0].pods) == {"Ready": 2}
    assert ready.nodes == {"general": {"ready": 1}, "gpu": {"ready": 2}}
    assert ready.cost_usd == pytest.approx((1.99 + 0.07143) * 8 / 3600, abs=1e-6)
    forwards = [f for f in fake_kube.forwards if f[0] == "monitoring"]
    assert forwards[0] == ("monitoring", "prometheus-prometheus-0", 9090)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "t+0s spec=1 ready=1 desired=1 pods[Ready=1] nodes[general:ready=1 gpu:ready=1]"
    )
    assert "query:s0-prometheus=160" in out[0]
    assert any(
        line.strip().startswith("cluster-autoscaler scale-up TriggeredScaleUp") for line in out
    )


def test_watch_once_prints_the_view_with_a_given_prometheus(
    fake_kube: FakeKube,
    real_prometheus: RealPrometheus,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _cluster(fake_kube, real_prometheus, pod_server())
    assert main(["watch", "--once", "--prometheus", real_prometheus.url]) == 0
    out = capsys.readouterr().out
    assert "deployment/demo/go-from-configmap  spec 1  status 1  ready 1  HPA desired 1" in out
    assert f"query = 160  [{real_prometheus.url}]" in out
    assert not [f for f in fake_kube.forwards if f[0] == "monitoring"]


def test_watch_shows_an_unreachable_prometheus_and_goes_on(
    fake_kube: FakeKube,
    real_prometheus: RealPrometheus,
    pod_server: Callable[..., PodServer],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _cluster(fake_kube, real_prometheus, pod_server())
    assert main(["watch", "--once", "--prometheus", "http://127.0.0.1:9"]) == 0
    out = capsys.readouterr().out
    assert "query = error: http://127.0.0.1:9/api/v1/query: cannot connect" in out, out


def test_watch_of_a_missing_deployment_is_an_input_error(
    fake_kube: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--once", "-d", "nope"]) == 2
    assert "deployment/demo/nope: not found" in capsys.readouterr().err


def test_a_forbidden_or_failing_read_is_shown_and_the_watch_goes_on(
    tutorial: FakeKube, capsys: pytest.CaptureFixture[str]
) -> None:
    tutorial.denied["/api/v1/nodes"] = 403
    tutorial.denied["/api/v1/namespaces/demo/events"] = 500
    assert main(["watch", "--once"]) == 0
    out = capsys.readouterr().out
    assert "nodes: none" in out
    assert (
        'read failed: nodes: not allowed (nodes is forbidden: User "dev" cannot list resource '
        '"nodes" at the cluster scope)'
    ) in " ".join(out.split())
    assert "read failed: events in demo: the API server answered 500" in " ".join(out.split())
    assert "query = 160" in out
