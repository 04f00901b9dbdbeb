"""kube-state-metrics families, names and labels as ``internal/store`` emits them
(kubernetes/kube-state-metrics ``c92fe0c``: ``deployment.go``, ``pod.go``, ``node.go``)."""

from __future__ import annotations

from gpuscale.controllers.kube_state_metrics import (
    DeploymentStatus,
    NodeInfo,
    PodInfo,
    deployment_series,
    node_series,
    pod_series,
    sanitize_label_name,
)


def _by_name(series):
    return {name: (dict(labels), value) for name, labels, value in series}


def test_status_replicas_counts_pending_pods_and_spec_is_separate() -> None:
    d = DeploymentStatus(
        "gpu",
        "go-from-configmap",
        spec_replicas=2,
        replicas=2,
        ready_replicas=1,
        available_replicas=1,
        updated_replicas=2,
    )
    got = _by_name(deployment_series(d))
    labels = {"namespace": "gpu", "deployment": "go-from-configmap"}
    assert got["kube_deployment_status_replicas"] == (labels, 2.0)
    assert got["kube_deployment_spec_replicas"] == (labels, 2.0)
    assert got["kube_deployment_status_replicas_ready"] == (labels, 1.0)
    assert got["kube_deployment_status_replicas_available"] == (labels, 1.0)
    assert got["kube_deployment_status_replicas_unavailable"] == (labels, 1.0)


def test_pod_phase_is_one_series_per_phase() -> None:
    p = PodInfo("gpu", "app-x", "uid-1", "Pending", ready=False, scheduled=False)
    phases = {
        dict(labels)["phase"]: value
        for name, labels, value in pod_series(p)
        if name == "kube_pod_status_phase"
    }
    assert phases == {
        "Pending": 1.0,
        "Succeeded": 0.0,
        "Failed": 0.0,
        "Unknown": 0.0,
        "Running": 0.0,
    }
    ready = {
        dict(labels)["condition"]: value
        for name, labels, value in pod_series(p)
        if name == "kube_pod_status_ready"
    }
    assert ready == {"true": 0.0, "false": 1.0, "unknown": 0.0}
    info = next(labels for name, labels, _ in pod_series(p) if name == "kube_pod_info")
    assert [k for k, _ in info][:3] == ["namespace", "pod", "uid"]


def test_node_labels_need_an_allowlist() -> None:
    n = NodeInfo("gpu-1", labels={"doks.digitalocean.com/gpu-brand": "amd", "x": "y"})
    assert [s[0] for s in node_series(n)] == ["kube_node_info"]
    got = _by_name(node_series(n, ("doks.digitalocean.com/gpu-brand",)))
    assert got["kube_node_labels"] == (
        {"node": "gpu-1", "label_doks_digitalocean_com_gpu_brand": "amd"},
        1.0,
    )
    assert set(_by_name(node_series(n, ("*",)))["kube_node_labels"][0]) == {
        "node",
        "label_doks_digitalocean_com_gpu_brand",
        "label_x",
    }
    assert sanitize_label_name("a.b/c-d") == "a_b_c_d"
