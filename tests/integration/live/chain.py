"""The tutorial's system on a cluster, as the API server returns it: broken and fixed.

``chain(fixed=False)`` is ``examples/tutorial`` applied as the tutorial applies it
(``kubectl apply -n gpu-demo``) onto the tutorial's installation: kube-prometheus-stack
as release ``prometheus`` in ``kube-system`` (its Prometheus selects ServiceMonitors
labelled ``release: prometheus``, the chart's default), KEDA in ``default``.
``chain(fixed=True)`` is ``examples/tutorial-fixed`` on what ``gpuscale install`` makes:
the stack in ``monitoring`` selecting every ServiceMonitor, KEDA in ``keda``.

Everything KEDA, the HPA, the scheduler and the nodes report is healthy in both; what
differs is what the tutorial breaks: its ServiceMonitor looks for the Service in
``kube-system`` (so nothing is scraped), its query is then empty, and KEDA reads 0
(``ignoreNullValues`` defaults to true), so the ScaledObject is not Active and the HPA
reads 0. :func:`prometheus_answers` gives what that Prometheus answers; the integration
test gets the same from a real Prometheus.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gpuscale.inputs import read_manifests
from tests.integration.live import objects as o

APP = o.APP
APP_NS = "gpu-demo"
PROM_POD = "prometheus-prometheus-kube-prometheus-prometheus-0"
KSM_POOL = "serviceMonitor/{ns}/prometheus-kube-state-metrics/0"
APP_POD_ADDRESS = "10.244.0.12:8080"
KSM_POD_ADDRESS = "10.244.1.7:8080"


@dataclass
class Chain:
    fixed: bool
    path: str
    prom_ns: str
    keda_ns: str
    gauge: float
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def server_address(self) -> str:
        return f"http://prometheus-operated.{self.prom_ns}.svc.cluster.local:9090"

    @property
    def query(self) -> str:
        manifests = read_manifests([self.path])
        return str(manifests.by_kind("ScaledObject")[0].spec["triggers"][0]["metadata"]["query"])


def _manifest(path: str, kind: str) -> dict[str, Any]:
    return read_manifests([path]).by_kind(kind)[0].body


def chain(*, fixed: bool) -> Chain:
    path = "examples/tutorial-fixed" if fixed else "examples/tutorial"
    prom_ns, keda_ns = ("monitoring", "keda") if fixed else ("kube-system", "default")
    gauge = 40.0 if fixed else 0.0
    state = Chain(fixed, path, prom_ns, keda_ns, gauge)
    objs = state.objects
    objs += [o.namespace(n) for n in dict.fromkeys([APP_NS, prom_ns, keda_ns])]
    objs += [*o.KEDA_CRDS, *o.PROMETHEUS_OPERATOR_CRDS]
    objs.append(o.apiservice(ns=keda_ns))
    objs += [
        o.deployment("keda-operator", ns=keda_ns),
        o.deployment("keda-operator-metrics-apiserver", ns=keda_ns),
    ]
    objs.append(
        o.prometheus_cr(
            ns=prom_ns,
            selector={} if fixed else {"matchLabels": {"release": "prometheus"}},
            namespace_selector={},
        )
    )
    objs += _prometheus_service(prom_ns)
    deployment = o.from_manifest(_manifest(path, "Deployment"), APP_NS)
    deployment["status"] = o.deployment(ns=APP_NS)["status"]
    objs.append(deployment)
    objs.append(o.from_manifest(_manifest(path, "Service"), APP_NS))
    objs.append(o.from_manifest(_manifest(path, "ServiceMonitor"), APP_NS))
    scaled = o.scaled_object(ns=APP_NS, active=fixed, server=state.server_address)
    objs.append(o.from_manifest(_manifest(path, "ScaledObject"), APP_NS, **scaled["status"]))
    objs.append(o.hpa(ns=APP_NS, value=f"{gauge:g}"))
    objs.append(o.pod(f"{APP}-7d9f8-a1b2c", ns=APP_NS))
    objs += [o.node("gpu-node-1"), o.node("general-1", pool="general", gpus=0)]
    return state


def _prometheus_service(ns: str) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": "prometheus", "operated-prometheus": "true"}
    pod = o.pod(PROM_POD, app="prometheus", ns=ns, node="general-1")
    pod["metadata"]["labels"] = labels
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "prometheus-operated", "namespace": ns, "labels": labels},
        "spec": {"clusterIP": "None", "selector": {"app.kubernetes.io/name": "prometheus"},
                 "ports": [{"name": "web", "port": 9090, "targetPort": "web"}]},
    }  # fmt: skip
    slice_ = o.endpoint_slice([(PROM_POD, True)], name="prometheus-operated", ns=ns, port=9090)
    slice_["ports"][0]["name"] = "web"
    return [pod, service, slice_]


def ksm_sample(state: Chain) -> tuple[dict[str, str], str]:
    return (
        {"__name__": "kube_deployment_status_replicas", "deployment": APP, "namespace": APP_NS,
         "job": "kube-state-metrics"},
        "1",
    )  # fmt: skip


def prometheus_answers(state: Chain) -> dict[str, str]:
    """What that Prometheus answers, by path (``query:<text>`` for queries)."""
    ksm = o.target(KSM_POOL.format(ns=state.prom_ns), "http://10.244.1.7:8080/metrics")
    active = [ksm]
    if state.fixed:
        active.insert(
            0, o.target(f"serviceMonitor/{APP_NS}/{APP}/0", f"http://{APP_POD_ADDRESS}/metrics")
        )
    ksm_query = f'kube_deployment_status_replicas{{deployment="{APP}", namespace="{APP_NS}"}}'
    return {
        "buildinfo": json.dumps(
            {"status": "success", "data": {"version": "2.53.1", "revision": "x"}}
        ),
        f"query:{state.query}": o.vector(({}, f"{state.gauge:g}")) if state.fixed else o.vector(),
        f"query:{ksm_query}": o.vector(ksm_sample(state)),
        "targets": o.targets(*active),
    }
