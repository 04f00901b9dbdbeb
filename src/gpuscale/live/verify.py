"""What ``gpuscale verify`` concludes about each link of the scaling chain: pure checks.

The chain, in the order a signal travels it::

    workload /metrics ─► ServiceMonitor ─► Prometheus ─► trigger query ─► KEDA
        ─► external metrics API ─► HPA ─► Deployment replicas ─► scheduler
        ─► cluster autoscaler ─► GPU node

:mod:`gpuscale.live.verifier` fetches the documents (API objects, Prometheus answers,
DigitalOcean node pools) into a :class:`Facts`, each read named by a :class:`Ref` that
both halves build the same way; every function here is a pure function
of those documents and returns a :class:`Check`: the link, ``pass``/``fail``/``warn``/
``skip``, the evidence read, and the fix. :func:`verify_checks` runs them all for a
manifest set. Each link declares its reads and its check once, in
:data:`gpuscale.live._verify.links.LINKS`, which both halves walk; the checks live in
:mod:`gpuscale.live._verify` by concern (``keda``, ``prometheus``, ``monitors``,
``capacity``); this module is their public face. Sources of the rules:

- KEDA: the chart's names (``kedacore/charts keda/templates/metrics-server/apiservice.yaml``:
  the ``v1beta1.external.metrics.k8s.io`` APIService points at
  ``<operator name>-metrics-apiserver`` in the release namespace), the ScaledObject's
  ``Ready``/``Active`` conditions (``apis/keda/v1alpha1/condition_types.go``) and the HPA
  name (``controllers/keda/hpa.go`` getHPAName, via
  :func:`gpuscale.controllers.keda.hpa_name`).
- The trigger query's verdict is KEDA's own: the answer is read with
  :func:`gpuscale.controllers.keda.parse_prometheus_response` (``prometheus_scaler.go``
  ExecutePromQuery), once as the trigger is configured (what KEDA hands the HPA) and once
  with ``ignoreNullValues: false`` (whether the answer is really one finite series).
- prometheus-operator: a ServiceMonitor is selected by a Prometheus whose
  ``serviceMonitorSelector`` matches its labels (null selects nothing, ``{}`` everything)
  and whose ``serviceMonitorNamespaceSelector`` matches its namespace's labels (null: the
  Prometheus' own namespace only; ``{}``: all) (``monitoring/v1`` ``PrometheusSpec``);
  its targets are the scrape pool ``serviceMonitor/<namespace>/<name>/<endpoint index>``
  (``pkg/prometheus/promcfg.go``), read from Prometheus' ``/api/v1/targets``.
- GPU capacity: the pod fits a node when the node is Ready and schedulable, the
  scheduler model's node-only filters pass
  (:func:`gpuscale.controllers.scheduler.static_failure`: the pod tolerates its
  ``NoSchedule``/``NoExecute`` taints, its labels satisfy the nodeSelector and required
  node affinity; the first that fails is the one reported), and it has the GPUs
  allocatable. Allocatable, not
  free: GPUs other pods hold are not subtracted (say so; verify lists no pods cluster-wide).
"""

from __future__ import annotations

from gpuscale.live._verify.capacity import (
    check_gpu_capacity,
    check_pending_pods,
    doks_pool,
    pool_capacity,
)
from gpuscale.live._verify.chain import (
    prometheus_trigger_of,
    summary,
    verify_targets,
)
from gpuscale.live._verify.facts import (
    KEDA_CRDS,
    METRICS_APISERVICE,
    Check,
    Facts,
    HttpAnswer,
    PoolCapacity,
    PromFacts,
    Ref,
    Status,
    hpa_of,
    keda_deployments,
)
from gpuscale.live._verify.keda import (
    check_deployment_ready,
    check_external_metrics_api,
    check_hpa,
    check_keda_crds,
    check_scaled_object_active,
    check_scaled_object_ready,
)
from gpuscale.live._verify.links import verify_checks
from gpuscale.live._verify.monitors import (
    check_service_monitor_selected,
    check_service_monitor_targets,
)
from gpuscale.live._verify.prometheus import (
    check_kube_state_metrics,
    check_prometheus,
    check_query,
    ksm_query,
    query_params,
)

__all__ = [
    "KEDA_CRDS",
    "METRICS_APISERVICE",
    "Check",
    "Facts",
    "HttpAnswer",
    "PoolCapacity",
    "PromFacts",
    "Ref",
    "Status",
    "check_deployment_ready",
    "check_external_metrics_api",
    "check_gpu_capacity",
    "check_hpa",
    "check_keda_crds",
    "check_kube_state_metrics",
    "check_pending_pods",
    "check_prometheus",
    "check_query",
    "check_scaled_object_active",
    "check_scaled_object_ready",
    "check_service_monitor_selected",
    "check_service_monitor_targets",
    "doks_pool",
    "hpa_of",
    "keda_deployments",
    "ksm_query",
    "pool_capacity",
    "prometheus_trigger_of",
    "query_params",
    "summary",
    "verify_checks",
    "verify_targets",
]
